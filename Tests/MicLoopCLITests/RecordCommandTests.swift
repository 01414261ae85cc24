import AudioFiles
import Foundation
import TestSupport
import Testing

/// `micloop record` on files: one file per transmission named by its
/// start, the index and the printed JSON Lines, the timeline without a
/// hole, bad options refused in one line, and the disk: a budget kept, a
/// full disk a gap and one line.
@Suite struct RecordCommandTests {
  let directory: URL

  init() throws { directory = try MicLoopBinary.temporaryDirectory() }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  static let sessionStart = "2026-11-25T12:00:00.000Z"

  /// Three transmissions 3.5 s apart at 20 dB SNR, 16 kHz float.
  func threeTransmissions(rate: Double = 16_000) throws -> (TransmissionScene, String) {
    var scene = TransmissionScene(seconds: 16, floor: -46, seed: 41, rate: rate)
    scene.talk(at: 1.5, seconds: 1.6)
    scene.talk(at: 6.2, seconds: 2.2)
    scene.talk(at: 11.7, seconds: 1.1)
    let path = file("scene-\(Int(rate)).wav")
    try scene.write(to: path)
    return (scene, path)
  }

  static func lines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  static func events(_ lines: [[String: Any]], _ kind: String) -> [[String: Any]] {
    lines.filter { $0["event"] as? String == kind }
  }

  @Test func aFileIsSplitIntoOneFilePerTransmissionNamedByItsStart() throws {
    let (scene, input) = try threeTransmissions()
    let out = file("out")
    let result = try MicLoopBinary.run([
      "record", "--input", input, "--dir", out, "--json", "--input-start", Self.sessionStart,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let printed = Self.lines(result.output)
    let recordings = Self.events(printed, "recording")
    #expect(recordings.count == 3, "\(result.output)")
    for (recording, onset) in zip(recordings, scene.onsets) {
      let startFrame = try #require(recording["start_frame"] as? Int)
      let frames = try #require(recording["frames"] as? Int)
      // The first syllable's onset is inside, after the pre-roll.
      #expect(startFrame <= onset && startFrame >= onset - Int(0.4 * scene.rate), "\(recording)")
      // Named by the UTC time of its first sample, with milliseconds.
      let milliseconds = Int((Double(startFrame) / scene.rate * 1000).rounded(.down))
      let expected = String(
        format: "2026-11-25T12-00-%02d.%03dZ.wav", milliseconds / 1000, milliseconds % 1000)
      let name = try #require(recording["file"] as? String)
      #expect(name == expected)
      #expect(
        (recording["start"] as? String)
          == expected.dropLast(4).replacingOccurrences(of: "12-00-", with: "12:00:"))
      let samples = try MicLoopBinary.samples(out + "/" + name)
      #expect(samples.count == frames)
      #expect(FileManager.default.fileExists(atPath: out + "/" + name.dropLast(4) + ".json"))
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(names.filter { $0.contains(".part.") }.isEmpty, "\(names)")
    // The index holds the same lines as were printed.
    let index = try #require(names.first { $0.hasPrefix("session-") && $0.hasSuffix(".jsonl") })
    let indexed = try String(contentsOfFile: out + "/" + index, encoding: .utf8)
    #expect(Self.lines(indexed).count == printed.count)
    // Recordings and idle spans tile the session to the sample.
    var position = 0
    for span in printed
    where ["recording", "idle", "blip", "gap"].contains(span["event"] as? String) {
      #expect(span["start_frame"] as? Int == position, "\(span)")
      position += span["frames"] as? Int ?? 0
    }
    #expect(position == scene.samples.count)
    #expect(Self.events(printed, "session_end").first?["frames"] as? Int == scene.samples.count)
  }

  @Test func humanLinesNameEachFileWithItsDuration() throws {
    let (_, input) = try threeTransmissions()
    let result = try MicLoopBinary.run([
      "record", "--input", input, "--dir", file("human"), "--input-start", Self.sessionStart,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let files = result.output.split(separator: "\n").filter { $0.contains("●") }
    #expect(files.count == 3, "\(result.output)")
    #expect(files.allSatisfy { $0.contains(" s  talk") }, "\(result.output)")
    #expect(result.output.contains("Recorded 3 files"), "\(result.output)")
  }

  @Test(arguments: [
    (["--hang", "0"], "--hang"),
    (["--pre-roll", "-1"], "--pre-roll"),
    (["--pre-roll", "11"], "--pre-roll"),
    (["--min", "61"], "--min"),
    (["--max", "0.5"], "--max"),
    (["--trigger", "level:loud"], "--trigger"),
    (["--trigger", "level:10"], "--trigger"),
    (["--ctcss", "60"], "--ctcss"),
    (["--start-on", "nosuchplan:12"], "--start-on"),
    (["--max-bytes", "100"], "--max-bytes"),
    (["--max-bytes", "lots"], "--max-bytes"),
    (["--keep-days", "0"], "--keep-days"),
    (["--input-start", "yesterday"], "--input-start"),
    (["--on-close", " "], "--on-close"),
    (["--file-type", "flac", "--encoding", "float"], "FLAC"),
    (["--name", "%q"], "%q"),
    (["--playback", "pulse:spk"], "--playback"),
    (["--fill-gaps"], "--fill-gaps"),
    (["--duration", "5"], "--duration"),
  ])
  func badOptionsAreRefusedInOneLine(arguments: [String], names: String) throws {
    let (_, input) = try threeTransmissions()
    let result = try MicLoopBinary.run(
      ["record", "--input", input, "--dir", file("refused")] + arguments)
    #expect(result.status != 0)
    #expect(result.errorLines.count == 1, "\(arguments): \(result.errorOutput)")
    #expect(result.errorOutput.contains(names), "\(arguments): \(result.errorOutput)")
    #expect(!FileManager.default.fileExists(atPath: file("refused")))
  }

  @Test func aMissingDirectoryOptionIsOneLine() throws {
    let (_, input) = try threeTransmissions()
    let result = try MicLoopBinary.run(["record", "--input", input])
    #expect(result.status != 0)
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("--dir"), "\(result.errorOutput)")
  }

  /// --max-bytes deletes the oldest closed recordings and keeps the
  /// directory under its budget.
  @Test func aByteBudgetIsKept() throws {
    let (_, input) = try threeTransmissions(rate: 48_000)
    // Three copies: nine transmissions of about 1.2 MB each (48 kHz float).
    let long = file("long.wav")
    try MicLoopBinary.shell(["sox", "-V1", input, input, input, long])
    let out = file("budget")
    let result = try MicLoopBinary.run([
      "record", "--input", long, "--dir", out, "--json", "--max-bytes", "3M",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let printed = Self.lines(result.output)
    #expect(Self.events(printed, "recording").count == 9)
    #expect(Self.events(printed, "deleted").count >= 5, "\(result.output)")
    var total = 0
    for name in try FileManager.default.contentsOfDirectory(atPath: out) {
      let attributes = try FileManager.default.attributesOfItem(atPath: out + "/" + name)
      total += (attributes[.size] as? Int) ?? 0
    }
    #expect(total <= 3 << 20, "\(total) bytes")
  }

  /// On a full file system nothing is deleted unasked: the transmissions
  /// that do not fit are gaps in the index, one line says so while it
  /// lasts, and the session ends with status 1 and one more line.
  @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
  func aFullDiskIsAGapNotASilentStop() throws {
    let (_, input) = try threeTransmissions(rate: 48_000)
    let long = file("long.wav")
    try MicLoopBinary.shell(["sox", "-V1", input, input, input, long])
    let mount = file("small")
    try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
    try MicLoopBinary.shell(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mount])
    defer { try? MicLoopBinary.shell(["umount", mount]) }
    let out = mount + "/out"
    let result = try MicLoopBinary.run(["record", "--input", long, "--dir", out, "--json"])
    #expect(result.status == 1)
    #expect(result.errorLines.count == 2, "\(result.errorOutput)")
    #expect(result.errorLines.first?.contains("is full") == true, "\(result.errorOutput)")
    #expect(result.errorLines.last?.contains("lack of room") == true, "\(result.errorOutput)")
    let printed = Self.lines(result.output)
    let recordings = Self.events(printed, "recording")
    let gaps = Self.events(printed, "gap").filter { $0["reason"] as? String == "disk_full" }
    #expect(recordings.count >= 1 && !gaps.isEmpty, "\(result.output)")
    #expect(recordings.count + gaps.count >= 9, "\(result.output)")
    #expect(Self.events(printed, "deleted").isEmpty)
    for recording in recordings {
      let name = try #require(recording["file"] as? String)
      #expect(try MicLoopBinary.samples(out + "/" + name).count == recording["frames"] as? Int)
    }
  }
  /// With --start-on a call (DTMF, ZVEI, CCIR) starts the recording: talk
  /// before it makes no file; the call and the announcement after it make
  /// one, starting before the call's first tone and tagged with its tones.
  @Test(arguments: [("dtmf", "*1#"), ("zvei1", "12345"), ("ccir-1", "54321")])
  func aCallStartsARecordingOfTheAnnouncementAfterIt(plan: String, call text: String) throws {
    var before = TransmissionScene(seconds: 6, floor: -46, seed: 61)
    before.talk(at: 1, seconds: 1.5)
    try before.write(to: file("before-\(plan).wav"))
    var after = TransmissionScene(seconds: 6, floor: -46, seed: 62)
    after.talk(at: 0.3, seconds: 2)
    try after.write(to: file("after-\(plan).wav"))
    let sent = try MicLoopBinary.run([
      "send", "--plan", plan, text, "--rate", "16000", "-o", file("call16-\(plan).wav"),
    ])
    #expect(sent.status == 0, "\(sent.errorOutput)")
    try MicLoopBinary.shell([
      "sox", "-V1", file("call16-\(plan).wav"), "-e", "float", "-b", "32", file("call-\(plan).wav"),
    ])
    let input = file("called-\(plan).wav")
    try MicLoopBinary.shell([
      "sox", "-V1", file("before-\(plan).wav"), file("call-\(plan).wav"), file("after-\(plan).wav"),
      input,
    ])
    let result = try MicLoopBinary.run([
      "record", "--input", input, "--dir", file("called-\(plan)"), "--json", "--start-on",
      "\(plan):\(text)",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let recordings = Self.events(Self.lines(result.output), "recording")
    #expect(recordings.count == 1, "\(result.output)")
    let recording = try #require(recordings.first)
    let call = 6 * 16_000
    let start = try #require(recording["start_frame"] as? Int)
    let frames = try #require(recording["frames"] as? Int)
    #expect(start <= call && start >= call - Int(0.4 * 16_000), "starts at \(start)")
    // The announcement (0.3 s after the call, 2 s long) is inside.
    let callFrames = try MicLoopBinary.samples(file("call-\(plan).wav")).count
    #expect(start + frames >= call + callFrames + Int(2.3 * 16_000), "ends at \(start + frames)")
    #expect(recording["trigger"] as? String == "\(plan):\(text)")
    let tags = recording["tags"] as? [[String: Any]] ?? []
    #expect(!tags.isEmpty, "\(recording)")
  }
}
