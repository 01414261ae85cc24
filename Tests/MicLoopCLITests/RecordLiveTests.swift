import AudioFiles
import Foundation
import TestSupport
import Testing

/// `micloop record` live on a private PulseAudio server: transmissions
/// played into the virtual microphone become one file each with their
/// onset after the pre-roll; a stop signal closes the open file; a kill
/// leaves a valid `.part` file and an index whose lines all parse.
@Suite(.serialized, .tags(.live, .pulseaudio), .needsSoundServer) struct RecordLiveTests {
  let directory: URL

  init() throws { directory = try MicLoopBinary.temporaryDirectory() }

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

  /// `kill -9` at eight instants (0.1–3 s after a file opened, seeded):
  /// the file is a valid WAV whose header counts every frame in it (its
  /// `.part` name when the kill met it open, at least four times of
  /// eight), and every line of the index parses.
  @Test func aKilledRecorderLeavesAValidPartFileAndAnIndexThatParses() throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    // Transmissions of 10 s with 2 s pauses: a recorder started in the
    // middle of one learns the room in the next pause (TalkDetectorSettings.learningTime).
    let signal = try scene(
      stride(from: 0.5, to: 150, by: 12).map { (at: $0, seconds: 10.0) }, seconds: 160)
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    var random = SplitMix(seed: 71)
    var killedWhileWriting = 0
    for attempt in 0..<8 {
      let out = file("killed-\(attempt)")
      let recorder = try startRecorder(on: devices, into: out)
      defer { recorder.signal(SIGKILL) }
      #expect(recorder.waitForOutput("\"open\"", timeout: 30))
      let delay = Double.random(in: 0.1...3, using: &random)
      usleep(UInt32(delay * 1_000_000))
      recorder.signal(SIGKILL)
      _ = recorder.result()
      let names = try FileManager.default.contentsOfDirectory(atPath: out)
      // A transmission may have ended (its file closed and renamed) before
      // the kill: that file is checked the same way.
      let written =
        names.first { $0.hasSuffix(".part.wav") } ?? names.first { $0.hasSuffix(".wav") }
      if names.contains(where: { $0.hasSuffix(".part.wav") }) { killedWhileWriting += 1 }
      let part = try #require(written, "\(names)")
      let reader = try AudioFileReader(path: out + "/" + part)
      let declared = try #require(reader.declaredFrameCount)
      let frames = try MicLoopBinary.samples(out + "/" + part).count
      #expect(declared == Int64(frames), "after \(delay) s: \(declared) declared, \(frames) read")
      // What was written before the last sync, at least (the writer syncs every 2 s).
      if delay > 1 { #expect(frames > 0, "after \(delay) s: \(frames) frames") }
      let index = try #require(names.first { $0.hasSuffix(".jsonl") })
      let text = try String(contentsOfFile: out + "/" + index, encoding: .utf8)
      let rows = text.split(separator: "\n")
      #expect(!rows.isEmpty)
      #expect(RecordCommandTests.lines(text).count == rows.count, "\(text)")
    }
    #expect(killedWhileWriting >= 4, "\(killedWhileWriting) of 8 kills met an open file")
  }

  /// A file system that fills up mid-transmission: capture goes on, the
  /// lost span is a disk_full gap, one line says so, and once space is
  /// freed recording resumes within the same transmission.
  @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
  func recordingResumesWhenTheDiskHasRoomAgain() throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    let signal = try scene([(1, 14)], seconds: 16)
    let mount = file("small")
    try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
    try MicLoopBinary.shell(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount])
    defer { try? MicLoopBinary.shell(["umount", "-l", mount]) }
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
    #expect(result.errorLines.count == 2, "\(result.errorOutput)")
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
