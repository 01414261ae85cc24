import AudioFiles
import Foundation
import TestSupport
import Testing

/// `micloop record` live on a private PulseAudio server: transmissions
/// played into the virtual microphone become one file each with their
/// onset after the pre-roll; a stop signal closes the open file; kills
/// leave valid files and an index whose lines all parse.
@Suite(.serialized, .tags(.live, .pulseaudio), .needsSoundServer) struct RecordLiveTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// Starts `micloop record` on the virtual microphone's monitor with 85 ms
  /// buffers, its index as JSON Lines, files into `out`.
  func startRecorder(on devices: VirtualDevices, into out: String, _ more: [String] = [])
    throws -> SpawnedProcess
  {
    try devices.startMicloop(
      [
        "record", "-D", "pulse:mic.monitor", "--period", "1024", "--periods", "4", "--dir", out,
        "--json",
      ] + more)
  }

  /// 16-bit 48 kHz transmissions at 20 dB SNR, written for aplay.
  func scene(_ transmissions: [(at: Double, seconds: Double)], seconds: Double) throws -> String {
    var scene = TransmissionScene(seconds: seconds, floor: -46, seed: 51, rate: 48_000)
    for transmission in transmissions {
      scene.talk(at: transmission.at, seconds: transmission.seconds)
    }
    let float = file("scene-float.wav")
    try scene.write(to: float)
    let path = file("scene.wav")
    try MicLoopBinary.shell(["sox", "-V1", float, "-b", "16", path])
    return path
  }

  /// The first frame of `samples` louder than -34 dBFS (the noise floor peaks at -41).
  func firstLoudFrame(_ samples: [Float]) -> Int? {
    samples.firstIndex { abs($0) > 0.02 }
  }

  @Test func transmissionsPlayedIntoTheMicrophoneBecomeOneFileEach() throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    let signal = try scene([(2, 1.6), (6.5, 2.0), (11, 1.2)], seconds: 15)
    let out = file("live")
    let recorder = try startRecorder(on: devices, into: out, ["--duration", "17", "--hang", "1"])
    #expect(recorder.waitForOutput("\"session_start\""))
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    let result = recorder.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = RecordCommandTests.lines(result.output)
    let recordings = RecordCommandTests.events(lines, "recording")
    #expect(recordings.count == 3, "\(result.output)")
    for recording in recordings {
      let name = try #require(recording["file"] as? String)
      let samples = try MicLoopBinary.samples(out + "/" + name)
      #expect(samples.count == recording["frames"] as? Int)
      // The pre-roll is there: the first syllable begins well inside.
      let onset = try #require(firstLoudFrame(samples))
      #expect(onset >= Int(0.15 * 48_000) && onset <= Int(0.45 * 48_000), "onset at \(onset)")
    }
    // The spans tile the live session too, gaps and xruns included.
    var position = 0
    for span in lines where ["recording", "idle", "blip", "gap"].contains(span["event"] as? String)
    {
      #expect(span["start_frame"] as? Int == position, "\(span)")
      position += span["frames"] as? Int ?? 0
    }
    let end = try #require(RecordCommandTests.events(lines, "session_end").first)
    #expect(end["frames"] as? Int == position)
    // 17 s of stream time, plus any gap.
    #expect(position >= 17 * 48_000, "\(position) frames")
  }

  /// A live session's index accounts for it to the sample: the spans
  /// (files, idle, blips, gaps) tile it without a hole or an overlap and
  /// add up to the --duration's frames, plus the frames of any gap that
  /// stream time skipped (a capture xrun's lost frames). 90 s by default;
  /// `MICLOOP_RECORD_TIMELINE_SECONDS=600` runs the ten minutes of
  /// Docs/TESTING.md.
  @Test func theIndexAccountsForALiveSessionToTheSample() throws {
    let environment = ProcessInfo.processInfo.environment
    let seconds = environment["MICLOOP_RECORD_TIMELINE_SECONDS"].flatMap(Int.init) ?? 90
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    // A minute of transmissions (1–8 s, 1–6 s apart), played over and over.
    var random = SplitMix(seed: 91)
    var transmissions = [(at: Double, seconds: Double)]()
    var at = 0.5
    while at < 57 {
      let length = Double.random(in: 1...8, using: &random)
      transmissions.append((at, min(length, 59 - at)))
      at += length + Double.random(in: 1...6, using: &random)
    }
    let minute = try scene(transmissions, seconds: 60)
    let signal = file("timeline.wav")
    try MicLoopBinary.shell(
      ["sox", "-V1"] + Array(repeating: minute, count: seconds / 60 + 2) + [signal])
    let out = file("timeline")
    let recorder = try startRecorder(on: devices, into: out, ["--duration", "\(seconds)"])
    defer { recorder.signal(SIGKILL) }
    #expect(recorder.waitForOutput("\"session_start\""))
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    let result = recorder.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let index = try #require(
      try FileManager.default.contentsOfDirectory(atPath: out).first { $0.hasSuffix(".jsonl") })
    let lines = RecordCommandTests.lines(
      try String(contentsOfFile: out + "/" + index, encoding: .utf8))
    var position = 0
    var counts = [String: Int]()
    var skipped = 0
    for span in lines {
      guard let kind = span["event"] as? String,
        ["recording", "idle", "blip", "gap"].contains(kind)
      else { continue }
      #expect(span["start_frame"] as? Int == position, "\(span)")
      let frames = span["frames"] as? Int ?? 0
      position += frames
      counts[kind, default: 0] += frames
      if kind == "gap", ["xrun", "device_lost"].contains(span["reason"] as? String) {
        skipped += frames
      }
    }
    let end = try #require(RecordCommandTests.events(lines, "session_end").first)
    #expect(end["frames"] as? Int == position)
    #expect(position == seconds * 48_000 + skipped, "\(position) frames, \(skipped) skipped")
    #expect(RecordCommandTests.events(lines, "recording").count >= seconds / 20, "\(counts)")
    print(
      "record timeline: \(seconds) s live, spans \(position) frames = \(seconds) × 48000 + \(skipped) skipped; recording \(counts["recording"] ?? 0), idle \(counts["idle"] ?? 0), blip \(counts["blip"] ?? 0), gap \(counts["gap"] ?? 0) frames; \(RecordCommandTests.events(lines, "recording").count) files, \(RecordCommandTests.events(lines, "xrun").count) xruns"
    )
  }

  @Test(arguments: [SIGINT, SIGTERM])
  func aStopSignalClosesTheOpenFile(_ stop: Int32) throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    let signal = try scene([(1, 12)], seconds: 14)
    let out = file("stopped-\(stop)")
    let recorder = try startRecorder(on: devices, into: out)
    defer { recorder.signal(SIGKILL) }
    #expect(recorder.waitForOutput("\"session_start\""))
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    #expect(recorder.waitForOutput("\"open\"", timeout: 30))
    usleep(1_500_000)
    recorder.signal(stop)
    let result = recorder.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = RecordCommandTests.lines(result.output)
    let recordings = RecordCommandTests.events(lines, "recording")
    #expect(recordings.count == 1, "\(result.output)")
    if let recording = recordings.first, let name = recording["file"] as? String {
      let frames = try MicLoopBinary.samples(out + "/" + name).count
      #expect(frames == recording["frames"] as? Int && frames > 48_000, "\(frames) frames")
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(names.filter { $0.contains(".part.") }.isEmpty, "\(names)")
    #expect(RecordCommandTests.events(lines, "session_end").count == 1)
  }

  /// `kill -9` at fifty seeded instants, 0.3–2 s into a live recording of
  /// transmissions of 0.3–0.9 s, 0.6–1.2 s apart (level trigger and a
  /// short hang, so files open and close within each run; ten runs per
  /// server): every closed file is
  /// whole (its header, its samples and its sidecar agree), the `.part`
  /// file the kill met open is a valid WAV whose header counts all but at
  /// most one period of the samples in it, and every line of the index
  /// parses.
  @Test func killedRecordersLeaveValidFilesAndIndexesThatParse() throws {
    let period = 1024
    var random = SplitMix(seed: 71)
    var transmissions = [(at: Double, seconds: Double)]()
    var at = 0.3
    while at < 38 {
      let length = Double.random(in: 0.3...0.9, using: &random)
      transmissions.append((at, length))
      at += length + Double.random(in: 0.6...1.2, using: &random)
    }
    let signal = try scene(transmissions, seconds: 40)
    var killedWhileWriting = 0
    var closedFiles = 0
    for server in 0..<5 {
      let devices = try VirtualDevices()
      let keep = try devices.keepRunning("mic")
      defer { keep.signal(SIGTERM) }
      let player = try devices.play(signal, into: "mic")
      defer { player.signal(SIGTERM) }
      for run in 0..<10 {
        let out = file("killed-\(server)-\(run)")
        let recorder = try startRecorder(
          on: devices, into: out,
          [
            "--trigger", "level:-34", "--hang", "0.2", "--min", "0.1", "--pre-roll", "0.1",
          ])
        defer { recorder.signal(SIGKILL) }
        #expect(recorder.waitForOutput("\"session_start\""), "\(recorder.printedSoFar)")
        let delay = Double.random(in: 0.3...2, using: &random)
        usleep(UInt32(delay * 1_000_000))
        recorder.signal(SIGKILL)
        _ = recorder.result()
        let names = try FileManager.default.contentsOfDirectory(atPath: out)
        for name in names where name.hasSuffix(".wav") {
          let path = out + "/" + name
          let reader = try AudioFileReader(path: path)
          let declared = try #require(reader.declaredFrameCount, "\(path)")
          let frames = try MicLoopBinary.samples(path).count
          #expect(
            declared == Int64(frames),
            "after \(delay) s: \(name) \(declared) declared, \(frames) read")
          let unaccounted = try Self.dataFrames(path) - frames
          if name.hasSuffix(".part.wav") {
            killedWhileWriting += 1
            #expect(
              unaccounted >= 0 && unaccounted <= period,
              "after \(delay) s: \(name) \(unaccounted) frames beyond its header")
          } else {
            closedFiles += 1
            #expect(unaccounted == 0, "\(name): \(unaccounted) frames beyond its header")
            let sidecar = out + "/" + name.dropLast(4) + ".json"
            let text = try String(contentsOfFile: sidecar, encoding: .utf8)
            let fields = try #require(RecordCommandTests.lines(text).first, "\(sidecar)")
            #expect(fields["frames"] as? Int == frames, "\(name): \(fields)")
          }
        }
        #expect(names.filter { $0.hasSuffix(".part.wav") }.count <= 1, "\(names)")
        let index = try #require(names.first { $0.hasSuffix(".jsonl") }, "\(names)")
        let text = try String(contentsOfFile: out + "/" + index, encoding: .utf8)
        let rows = text.split(separator: "\n")
        #expect(!rows.isEmpty)
        #expect(RecordCommandTests.lines(text).count == rows.count, "\(text)")
      }
    }
    // The kills met files open and files closed, many times each.
    #expect(killedWhileWriting >= 10, "\(killedWhileWriting) of 50 kills met an open file")
    #expect(closedFiles >= 10, "\(closedFiles) closed files")
    print(
      "record kills: 50 kills, \(killedWhileWriting) met an open file, \(closedFiles) closed files checked"
    )
  }

  /// Ctrl-Z for 2, 5 and 10 s in the middle of transmissions (short hang
  /// and minimum, level trigger): the sound server hands over what it held
  /// in a burst, and what it could not hold is a `pause` gap. Nothing is
  /// lost silently — the timeline (recordings, idle, blips and gaps) spans
  /// the wall time the session ran — the index tiles, no file is opened
  /// twice, and every file is closed whole.
  @Test(arguments: [2.0, 5.0, 10.0])
  func aPauseOfTheProcessLosesNothingSilently(seconds: Double) throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    var transmissions = [(at: Double, seconds: Double)]()
    var at = 0.5
    while at < 14 + seconds {
      transmissions.append((at, 0.6))
      at += 1.1
    }
    let signal = try scene(transmissions, seconds: 16 + seconds)
    let out = file("paused-\(Int(seconds))")
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    let recorder = try startRecorder(
      on: devices, into: out,
      ["--trigger", "level:-34", "--hang", "0.3", "--min", "0.1", "--pre-roll", "0.1"])
    defer { recorder.signal(SIGKILL) }
    #expect(recorder.waitForOutput("\"open\"", timeout: 30))
    let started = Date()
    usleep(1_000_000)
    recorder.signal(SIGSTOP)
    usleep(UInt32(seconds * 1_000_000))
    recorder.signal(SIGCONT)
    usleep(4_000_000)
    recorder.signal(SIGINT)
    let result = recorder.result()
    let wall = Date().timeIntervalSince(started)
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = RecordCommandTests.lines(result.output)
    var position = 0
    var firstOpen: Int?
    for span in lines {
      if span["event"] as? String == "open", firstOpen == nil {
        firstOpen = span["start_frame"] as? Int
      }
      guard let kind = span["event"] as? String,
        ["recording", "idle", "blip", "gap"].contains(kind)
      else { continue }
      #expect(span["start_frame"] as? Int == position, "\(span)")
      position += span["frames"] as? Int ?? 0
    }
    // From the first file's start (about when the clock above started) to the end.
    let spanned = Double(position - (firstOpen ?? 0)) / 48_000
    #expect(
      spanned > wall - 1 && spanned < wall + 1,
      "the timeline spans \(spanned) s of the \(wall) s that passed")
    let gaps = RecordCommandTests.events(lines, "gap")
    #expect(gaps.allSatisfy { $0["reason"] as? String == "pause" }, "\(gaps)")
    let opened = RecordCommandTests.events(lines, "open").compactMap { $0["file"] as? String }
    #expect(Set(opened).count == opened.count, "\(opened)")
    let recordings = RecordCommandTests.events(lines, "recording")
    #expect(recordings.count >= Int(wall / 1.1) - 2, "\(recordings.count) files")
    for recording in recordings {
      let name = try #require(recording["file"] as? String)
      let frames = try #require(recording["frames"] as? Int)
      #expect(frames > 0 && !name.contains(".part."), "\(recording)")
      #expect(try MicLoopBinary.samples(out + "/" + name).count == frames)
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(left.filter { $0.contains(".part.") }.isEmpty, "\(left)")
    print(
      "record pause \(seconds) s: \(gaps.count) pause gaps (\(gaps.compactMap { $0["duration"] as? Double }) s), timeline \(spanned) s of \(wall) s, \(recordings.count) files"
    )
  }

  /// Frames of 16-bit mono audio the file holds after its `data` chunk's
  /// header, whatever its header says.
  static func dataFrames(_ path: String) throws -> Int {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 12
    while offset + 8 <= bytes.count {
      let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
      let size = bytes[offset + 4..<offset + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
      if id == "data" { return (bytes.count - offset - 8) / 2 }
      offset += 8 + size + (size & 1)
    }
    throw CocoaError(
      .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(path): no data chunk"])
  }

  /// A file system that fills up mid-transmission: capture goes on, the
  /// lost span is a disk_full gap, one line says so, and once space is
  /// freed recording resumes within the same transmission.
  @Test func recordingResumesWhenTheDiskHasRoomAgain() throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    let signal = try scene([(1, 14)], seconds: 16)
    let disk = try SmallDisk(size: "2m", at: file("small"))
    defer { disk.unmount() }
    let mount = disk.path
    // Leave about 1 MB: some 5 s of 48 kHz 16-bit mono after the reserve.
    let filler = mount + "/filler"
    try MicLoopBinary.shell([
      "dd", "if=/dev/zero", "of=\(filler)", "bs=64k", "count=16", "status=none",
    ])
    let out = mount + "/out"
    let recorder = try startRecorder(on: devices, into: out)
    defer { recorder.signal(SIGKILL) }
    #expect(recorder.waitForOutput("\"session_start\""))
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    #expect(recorder.waitForOutput("disk_full", timeout: 30))
    try FileManager.default.removeItem(atPath: filler)
    // A file opens again within the transmission (retried once a second).
    #expect(
      recorder.waitForOutput(timeout: 10) { $0.components(separatedBy: "\"open\"").count >= 3 })
    usleep(1_000_000)
    recorder.signal(SIGINT)
    let result = recorder.result()
    #expect(result.status == 1, "\(result.errorOutput)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorLines.first?.contains("is full") == true, "\(result.errorOutput)")
    let lines = RecordCommandTests.lines(result.output)
    let kinds = lines.compactMap { $0["event"] as? String }
    let gap = try #require(kinds.firstIndex(of: "gap"))
    #expect(lines[gap]["reason"] as? String == "disk_full")
    #expect(kinds[..<gap].contains("recording") && kinds[gap...].contains("recording"), "\(kinds)")
    for recording in RecordCommandTests.events(lines, "recording") {
      let name = try #require(recording["file"] as? String)
      #expect(try MicLoopBinary.samples(out + "/" + name).count == recording["frames"] as? Int)
    }
  }
}
