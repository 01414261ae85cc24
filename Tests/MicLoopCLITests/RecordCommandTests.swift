import AudioFiles
import Foundation
import TestSupport
import Testing

/// `micloop record` on files: one file per transmission named by its
/// start, the index and the printed JSON Lines, the timeline without a
/// hole, bad options refused in one line, and the disk: a budget kept, a
/// full disk a gap and one line.
@Suite struct RecordCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

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
    (["--name", "%"], "lone %"),
    (["--name", "../x"], "--name"),
    (["--name", "."], "hidden"),
    (["--name", "day/.x"], "hidden"),
    (["--label", "a/b"], "--label"),
    (["--max-bytes", "-1M"], "--max-bytes"),
    (["--min-free", "-1G"], "--min-free"),
    (["--min", "60", "--max", "1"], "--min"),
    (["--input-start", "2026-02-30T12:00:00Z"], "--input-start"),
  ])
  func badOptionsAreRefusedInOneLine(arguments: [String], names: String) throws {
    let (_, input) = try threeTransmissions()
    let result = try MicLoopBinary.run(
      ["record", "--input", input, "--dir", file("refused")] + arguments)
    // A usage error, as every refused option is.
    #expect(result.status == 64, "\(arguments): \(result.status)")
    #expect(result.errorLines.count == 1, "\(arguments): \(result.errorOutput)")
    #expect(result.errorOutput.contains(names), "\(arguments): \(result.errorOutput)")
    #expect(!FileManager.default.fileExists(atPath: file("refused")))
  }

  /// A rate outside 4–768 kHz is refused in one line before anything is
  /// made (a header saying 2,147,483,647 Hz once asked for 27 GB; 1–1000 Hz
  /// wrote zeros and broke the index); damaged samples are recorded as
  /// silence and end the run with status 65, as meter and tones do.
  @Test(arguments: [1, 500, 2_147_483_647, 400_000_000])
  func anUnrecordableRateIsRefused(rate: Int) throws {
    let input = file("rate-\(rate).wav")
    try MicLoopBinary.writeWAVHeader(input, rate: rate, frames: 40_000)
    let out = file("rate-out-\(rate)")
    let result = try MicLoopBinary.run(["record", "--input", input, "--dir", out])
    #expect(result.status == 65, "\(result.errorOutput)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("cannot be recorded"), "\(result.errorOutput)")
    #expect(!FileManager.default.fileExists(atPath: out))
  }

  @Test func damagedSamplesAreRecordedAsSilenceAndFailTheRun() throws {
    let input = file("damaged.wav")
    try MicLoopBinary.writeFloatWAVWithNaN(input)
    let out = file("damaged-out")
    let result = try MicLoopBinary.run([
      "record", "--input", input, "--dir", out, "--json", "--trigger", "level:-40", "--min",
      "0.02",
    ])
    #expect(result.status == 65, "\(result.errorOutput)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("recorded as silence"), "\(result.errorOutput)")
    for recording in Self.events(Self.lines(result.output), "recording") {
      let name = try #require(recording["file"] as? String)
      let samples = try MicLoopBinary.samples(out + "/" + name)
      #expect(samples.allSatisfy { $0.isFinite && abs($0) <= 1 }, "\(name)")
    }
  }

  /// A folder that cannot be made says why: a read-only parent is
  /// "Permission denied", not "No such file".
  @Test(.needsRoot) func aReadOnlyParentIsNamedAsSuch() throws {
    let (_, input) = try threeTransmissions()
    let parent = file("locked")
    try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
    chmod(parent, 0o555)
    defer { chmod(parent, 0o755) }
    // Root passes permission checks; run the recorder as nobody.
    let result = try MicLoopBinary.script(
      "runuser -u nobody -- \"$M\" record --input '\(input)' --dir '\(parent)/rec'",
      directory: directory)
    #expect(result.status != 0)
    #expect(result.errorOutput.contains("Permission denied"), "\(result.errorOutput)")
  }

  /// record's help lists the device options it takes and none it
  /// refuses; the jobs that play still list theirs.
  @Test func helpListsOnlyTheDeviceOptionsRecordTakes() throws {
    let help = try MicLoopBinary.run(["record", "--help"])
    #expect(help.status == 0)
    for option in ["--device", "--capture", "--rate", "--period", "--format", "--reconnect"] {
      #expect(help.output.contains(option), "\(option) missing: \(help.output)")
    }
    #expect(!help.output.contains("--playback") && !help.output.contains("--fill-gaps"))
    for command in ["loopback", "meter", "tone"] {
      let other = try MicLoopBinary.run([command, "--help"])
      #expect(other.output.contains("--playback"), "\(command): \(other.output)")
      #expect(other.output.contains("--fill-gaps"), "\(command): \(other.output)")
    }
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

  /// Twenty minutes of transmissions (2–6 s, one every 5–10 s) into a
  /// 50 MB tmpfs with --max-bytes 30M: the file system never holds more
  /// than the budget while the session runs, though more than two and a
  /// half times as much is recorded; the oldest closed recordings go first, never the open
  /// one, and those left are whole.
  @Test(.needsRoot) func aByteBudgetHoldsOverTwentyMinutes() throws {
    var scene = TransmissionScene(seconds: 60, floor: -46, seed: 81, rate: 48_000)
    var random = SplitMix(seed: 82)
    var at = 0.5
    while at < 54 {
      let length = Double.random(in: 2...6, using: &random)
      scene.talk(at: at, seconds: length)
      at += length + Double.random(in: 2.5...4, using: &random)
    }
    let minute = file("minute.wav")
    try scene.write(to: minute)
    // Twenty minutes, 16-bit as a device would give them (115 MB).
    let long = file("twenty-minutes.wav")
    try MicLoopBinary.shell(
      ["sox", "-V1"] + Array(repeating: minute, count: 20) + ["-b", "16", long])
    defer { try? FileManager.default.removeItem(atPath: long) }
    let disk = try SmallDisk(size: "50m", at: file("budget-disk"))
    defer { disk.unmount() }
    let out = disk.path + "/out"
    let budget: Int64 = 30 << 20
    let recorder = try SpawnedProcess(
      [
        MicLoopBinary.path, "record", "--input", long, "--dir", out, "--json", "--max-bytes", "30M",
      ],
      environment: ProcessInfo.processInfo.environment)
    var mostUsed: Int64 = 0
    while recorder.isRunning {
      mostUsed = max(mostUsed, disk.usedBytes)
      usleep(5_000)
    }
    let result = recorder.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(mostUsed > budget * 9 / 10 && mostUsed <= budget, "\(mostUsed) bytes at most")
    let printed = Self.lines(result.output)
    let recordings = Self.events(printed, "recording")
    let deleted = Self.events(printed, "deleted")
    #expect(recordings.count >= 150, "\(recordings.count) files")
    let recorded = recordings.reduce(0) { $0 + ($1["frames"] as? Int ?? 0) } * 2
    #expect(Int64(recorded) > 5 * budget / 2, "\(recorded) bytes recorded")
    // Oldest first, and only files closed before (never the open one).
    var closed = [String]()
    var deletedNames = [String]()
    for line in printed {
      if line["event"] as? String == "recording", let name = line["file"] as? String {
        closed.append(name)
      } else if line["event"] as? String == "deleted", let name = line["file"] as? String {
        #expect(deletedNames.count < closed.count && closed[deletedNames.count] == name, "\(line)")
        #expect(line["reason"] as? String == "max_bytes")
        deletedNames.append(name)
      }
    }
    #expect(!deleted.isEmpty && Self.events(printed, "gap").isEmpty, "\(deleted.count) deleted")
    // What is left: the newest files, whole, and nothing half-written.
    let left = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(left.filter { $0.contains(".part.") }.isEmpty, "\(left)")
    for recording in recordings.dropFirst(deletedNames.count) {
      let name = try #require(recording["file"] as? String)
      let reader = try AudioFileReader(path: out + "/" + name)
      #expect(reader.declaredFrameCount == Int64(recording["frames"] as? Int ?? -1), "\(name)")
    }
    #expect(left.count == 2 * (recordings.count - deletedNames.count) + 1, "\(left.count) files")
    #expect(
      Self.events(printed, "session_end").first?["frames"] as? Int == 20 * scene.samples.count)
    print(
      "record budget: 20 min, \(recordings.count) files (\(recorded) bytes), \(deletedNames.count) deleted, at most \(mostUsed) bytes on the disk for a budget of \(budget)"
    )
  }

  /// On a full file system nothing is deleted unasked: the transmissions
  /// that do not fit are gaps in the index, one line says so when it
  /// happens (with the fix), and the session ends with status 1.
  @Test(.needsRoot) func aFullDiskIsAGapNotASilentStop() throws {
    let (_, input) = try threeTransmissions(rate: 48_000)
    let long = file("long.wav")
    try MicLoopBinary.shell(["sox", "-V1", input, input, input, long])
    let disk = try SmallDisk(size: "3m", at: file("small"))
    defer { disk.unmount() }
    let mount = disk.path
    let out = mount + "/out"
    let result = try MicLoopBinary.run(["record", "--input", long, "--dir", out, "--json"])
    #expect(result.status == 1)
    // One line: the problem, the fix, and what happens meanwhile.
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    let line = result.errorLines.first ?? ""
    #expect(line.contains("is full") && line.contains("free space"), "\(line)")
    #expect(line.contains("--max-bytes") && line.contains("disk_full gap"), "\(line)")
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
  /// With --start-on a call (DTMF, ZVEI, CCIR, a two-tone page or group
  /// call) starts the recording: talk before it makes no file; the call
  /// and the announcement after it make one, starting before the call's
  /// first tone and tagged with it. The group call's single tone lasts
  /// 8 s: the recorder waits that long for its report and still reaches
  /// back before it.
  @Test(arguments: [
    ("dtmf", "*1#", "dtmf:*1#", "dtmf"), ("zvei1", "12345", "zvei1:12345", "zvei1"),
    ("ccir-1", "54321", "ccir-1:54321", "ccir-1"),
    ("twotone:1000,1200", "AB", "twotone:1000,1200", "page"),
    ("twotone:1000,1200:8000,3000", "A", "twotone:1000,1200", "group"),
  ])
  func aCallStartsARecordingOfTheAnnouncementAfterIt(
    plan: String, call text: String, startOn: String, name: String
  ) throws {
    var before = TransmissionScene(seconds: 6, floor: -46, seed: 61)
    before.talk(at: 1, seconds: 1.5)
    try before.write(to: file("before-\(name).wav"))
    var after = TransmissionScene(seconds: 6, floor: -46, seed: 62)
    after.talk(at: 0.3, seconds: 2)
    try after.write(to: file("after-\(name).wav"))
    let sent = try MicLoopBinary.run([
      "send", "--plan", plan, text, "--rate", "16000", "-o", file("call16-\(name).wav"),
    ])
    #expect(sent.status == 0, "\(sent.errorOutput)")
    try MicLoopBinary.shell([
      "sox", "-V1", file("call16-\(name).wav"), "-e", "float", "-b", "32", file("call-\(name).wav"),
    ])
    let input = file("called-\(name).wav")
    try MicLoopBinary.shell([
      "sox", "-V1", file("before-\(name).wav"), file("call-\(name).wav"), file("after-\(name).wav"),
      input,
    ])
    let result = try MicLoopBinary.run([
      "record", "--input", input, "--dir", file("called-\(name)"), "--json", "--start-on", startOn,
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
    let callFrames = try MicLoopBinary.samples(file("call-\(name).wav")).count
    #expect(start + frames >= call + callFrames + Int(2.3 * 16_000), "ends at \(start + frames)")
    #expect(recording["trigger"] as? String == startOn)
    let tags = recording["tags"] as? [[String: Any]] ?? []
    #expect(!tags.isEmpty, "\(recording)")
    if plan.hasPrefix("twotone:") {
      // Tagged with the page itself, from its first tone.
      let page = tags.first {
        $0["event"] as? String == "page" && $0["plan"] as? String == startOn
          && $0["group"] as? Bool == (name == "group")
      }
      let offset = try #require(page?["offset"] as? Double, "\(tags)")
      #expect(abs(offset - Double(call - start) / 16_000) < 0.1, "\(tags)")
    }
  }
}
