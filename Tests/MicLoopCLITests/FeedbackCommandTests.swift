import AudioFiles
import FeedbackControl
import Foundation
import SignalDSP
import TestSupport
import Testing

/// `micloop loopback --room` and `micloop latency --room`: the live job and
/// the latency probe in the simulated rooms of Tests/Fixtures/rooms.
@Suite struct FeedbackCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }
  /// Three seconds of white noise at about −40 dBFS (the talker).
  let noise: String

  init() throws {
    scratch = try ScratchDirectory("cli")
    noise = scratch.url.appendingPathComponent("noise.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-R", "-n", "-r", "48000", "-b", "32", "-e", "floating-point", "-c", "1", noise,
      "synth", "3", "whitenoise", "vol", "0.017",
    ])
  }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  static func room(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/rooms/\(name).wav").path
  }

  func objects(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }

  /// A room response from a FIFO that never ends (an hour of audio) is
  /// refused in one line once 10 s of it are read, not after reading it all.
  @Test func anEndlessResponseIsRefusedOnceTooLong() throws {
    let fifo = file("room.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let writer = try SpawnedProcess(
      [
        "/bin/sh", "-c",
        "exec sox -V1 -n -r 48000 -c 1 -b 16 -t wav - synth 3600 sine 440 vol 0.1 > \(fifo)",
      ], environment: ProcessInfo.processInfo.environment)
    defer { writer.signal(SIGKILL) }
    let result = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", fifo, "--gain-db", "-10",
    ])
    #expect(result.status != 0)
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("longer than 10 s"), "\(result.errorOutput)")
    // sox was stopped by the closed pipe long before an hour was written.
    #expect(writer.wait() != 0)
  }

  /// The living room takes +3.35 dB: −3 dB is stable, +9 dB from 1 s howls.
  @Test func aHowlInTheRoomIsNotchedAndReportedAsItGrows() throws {
    let heard = file("heard.wav")
    let result = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("living"), "--gain-db", "-3,9@1",
      "--json", "--record", heard,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = objects(result.output)
    let feedback = lines.filter { $0["event"] as? String == "feedback" }
    let first = try #require(feedback.first)
    #expect(first["action"] as? String == "notch")
    let time = try #require(first["time"] as? Double)
    #expect(time > 1 && time < 1.6)
    let frequency = try #require(first["frequency"] as? Double)
    #expect(frequency > 1000 && frequency < 8000)
    #expect((first["depth_db"] as? Double ?? 0) <= -9)
    let summary = try #require(lines.last { $0["event"] as? String == "room" })
    #expect((summary["notches"] as? Int ?? 0) >= 1)
    #expect((summary["speaker_peak_dbfs"] as? Double ?? 0) < -6)
    // What the microphone heard, all of it.
    #expect(try MicLoopBinary.samples(heard).count == 3 * 48_000)
  }

  @Test func withoutTheGuardTheRoomHowlsToFullScale() throws {
    let result = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("living"), "--gain-db", "-3,9@1",
      "--feedback-guard", "off", "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = objects(result.output)
    #expect(!lines.contains { $0["event"] as? String == "feedback" })
    let summary = try #require(lines.last { $0["event"] as? String == "room" })
    #expect((summary["speaker_peak_dbfs"] as? Double ?? -99) > -1)
  }

  @Test func humanOutputSaysWhatTheGuardDid() throws {
    let result = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--gain-db", "-1,11@1",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = result.output.split(separator: "\n")
    #expect(lines.first?.hasPrefix("48000 Hz, capture simulated room") == true)
    #expect(lines.contains { $0.hasPrefix("feedback at ") && $0.contains(": notch at ") })
    #expect(lines.last?.hasPrefix("Ran 3.00 s in the simulated room") == true, "\(result.output)")
  }

  /// `latency --room` reads each room's maximum stable gain as computed from
  /// its response after loopback's 768 frames of buffering, and saves the
  /// loop's response.
  @Test(arguments: [("living", 3.35), ("office", 5.10), ("hall", 9.12)])
  func latencyReportsTheRoomsMaximumStableGain(room: String, gain: Double) throws {
    let saved = file("\(room)-ir.wav")
    let result = try MicLoopBinary.run([
      "latency", "--room", Self.room(room), "--json", "--save-ir", saved,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let object = try #require(objects(result.output).first)
    let reported = try #require(object["max_stable_gain_db"] as? Double)
    #expect(abs(reported - gain) < 1, "\(room): \(reported) dB")
    let response = try MicLoopBinary.samples(saved)
    #expect(response.count == 72_000)
    let computed = try #require(
      LoopStability.analyze(
        impulseResponse: response, sampleRate: 48_000, lowest: 100, highest: 18_000))
    #expect(abs(computed.maximumStableGain - reported) < 0.01)
  }

  /// The loop measured by `latency --save-ir`, then `loopback --ring-out`:
  /// the notches the raised gain needs are set in its first period, the
  /// loop never howls, and the guard finds nothing left to do.
  @Test func aRingOutFromTheMeasuredLoopNotchesAheadOfTheGain() throws {
    let saved = file("living-loop.wav")
    let measured = try MicLoopBinary.run([
      "latency", "--room", Self.room("living"), "--save-ir", saved,
    ])
    #expect(measured.status == 0, "\(measured.errorOutput)")
    let result = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("living"), "--ring-out", saved,
      "--gain-db", "-3,9@1", "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = objects(result.output)
    let plan = try #require(lines.first)
    #expect(plan["event"] as? String == "ring_out")
    #expect(abs((plan["maximum_stable_gain_db"] as? Double ?? 0) - 3.35) < 1)
    #expect(abs((plan["first_gain_db"] as? Double ?? 0) - (3.35 - 5)) < 1)
    let feedback = lines.filter { $0["event"] as? String == "feedback" }
    #expect(!feedback.isEmpty)
    for event in feedback {
      #expect(event["planned"] as? Bool == true, "\(event)")
      let time = try #require(event["time"] as? Double)
      #expect(time >= 1 && time < 1.02, "\(event)")
    }
    let summary = try #require(lines.last { $0["event"] as? String == "room" })
    #expect((summary["speaker_peak_dbfs"] as? Double ?? 0) < -15)
  }

  /// `--ring-out measure` measures the loop first, as `latency` would, and
  /// plans from it: the same limit and the same planned notches at the step.
  @Test func aRingOutMeasuredFirstPlansAsTheSavedResponseDoes() throws {
    let measured = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", "measure",
      "--gain-db", "-1,11@1", "--json",
    ])
    #expect(measured.status == 0, "\(measured.errorOutput)")
    let saved = file("office-measured.wav")
    _ = try MicLoopBinary.run(["latency", "--room", Self.room("office"), "--save-ir", saved])
    let fromFile = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", saved,
      "--gain-db", "-1,11@1", "--json",
    ])
    #expect(fromFile.status == 0, "\(fromFile.errorOutput)")
    func planned(_ output: String) -> [Double] {
      objects(output).filter {
        $0["planned"] as? Bool == true && $0["action"] as? String == "notch"
      }
      .compactMap { $0["frequency"] as? Double }
    }
    let plan = try #require(objects(measured.output).first)
    #expect(plan["event"] as? String == "ring_out")
    #expect(abs((plan["maximum_stable_gain_db"] as? Double ?? 0) - 5.10) < 1)
    #expect(!planned(measured.output).isEmpty)
    #expect(planned(measured.output) == planned(fromFile.output))
  }

  @Test func ringOutFilesAreCheckedInOneLine() throws {
    let saved = file("office-loop.wav")
    _ = try MicLoopBinary.run(["latency", "--room", Self.room("office"), "--save-ir", saved])
    let off = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", saved,
      "--feedback-guard", "off",
    ])
    #expect(off.status == 64 && off.errorLines.count == 1)
    #expect(off.errorOutput.contains("--ring-out"), "\(off.errorOutput)")
    let silent = file("silent.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", silent, "trim", "0", "0.5",
    ])
    let nothing = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", silent,
    ])
    #expect(nothing.status == 1 && nothing.errorLines.count == 1, "\(nothing.errorOutput)")
    #expect(nothing.errorOutput.contains("silent"), "\(nothing.errorOutput)")
    let damaged = file("damaged.wav")
    let writer = try AudioFileWriter(
      path: damaged, sampleRate: 48_000, channelCount: 1, encoding: .float)
    var samples = [Float](repeating: 0, count: 4800)
    samples[10] = 0.5
    samples[200] = .nan
    try writer.write(samples)
    writer.close()
    let broken = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", damaged,
    ])
    #expect(broken.status == 1 && broken.errorLines.count == 1, "\(broken.errorOutput)")
    #expect(broken.errorOutput.contains("damaged"), "\(broken.errorOutput)")
    let low = file("loop-100hz.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "100", "-b", "32", "-e", "floating-point", low, "synth", "1",
      "sine", "10", "vol", "0.3",
    ])
    let tooLow = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", low,
    ])
    #expect(tooLow.status == 1 && tooLow.errorLines.count == 1, "\(tooLow.errorOutput)")
    #expect(tooLow.errorOutput.contains("too low a rate"), "\(tooLow.errorOutput)")
    let unmeasured = try MicLoopBinary.run(["latency", "--room", low])
    #expect(unmeasured.status == 1 && unmeasured.errorLines.count == 1)
    #expect(
      unmeasured.errorOutput.contains("through the room"), "\(unmeasured.errorOutput)")
    let other = file("office-loop-44k.wav")
    try MicLoopBinary.shell(["sox", "-V1", saved, "-r", "44100", other])
    let mismatched = try MicLoopBinary.run([
      "loopback", "--input", noise, "--room", Self.room("office"), "--ring-out", other,
    ])
    #expect(mismatched.status == 1 && mismatched.errorLines.count == 1)
    #expect(mismatched.errorOutput.contains("latency --room"), "\(mismatched.errorOutput)")
  }

  @Test func roomOptionsAreCheckedInOneLine() throws {
    let cases: [(arguments: [String], mentions: String)] = [
      (["loopback", "--input", noise], "--room"),
      (["loopback", "--room", Self.room("living")], "--input"),
      (["loopback", "--input", noise, "--room", Self.room("living"), "-D", "hw:0"], "-D"),
      (["loopback", "--gain-db", "3@x"], "--gain-db"),
      (["loopback", "--gain-db", "-6,3@4,2@3"], "--gain-db"),
      (["loopback", "--gain-db", "-6,99@4"], "--gain-db"),
      (["loopback", "--feedback-guard", "maybe"], "--feedback-guard"),
      (["latency", "--room", Self.room("living"), "--capture", "pulse"], "--room"),
    ]
    for item in cases {
      let result = try MicLoopBinary.run(item.arguments)
      #expect(result.status == 64, "\(item.arguments) exited \(result.status)")
      #expect(result.errorLines.count == 1, "\(item.arguments): \(result.errorOutput)")
      #expect(
        result.errorOutput.contains(item.mentions), "\(item.arguments): \(result.errorOutput)")
    }
    let mismatched = file("talker-16k.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "16000", "-b", "16", mismatched, "synth", "1", "sine", "440",
    ])
    let result = try MicLoopBinary.run([
      "loopback", "--input", mismatched, "--room", Self.room("living"),
    ])
    #expect(result.status == 1 && result.errorLines.count == 1)
    #expect(result.errorOutput.contains("resample"), "\(result.errorOutput)")
  }

  /// A talker with no audio, or with damaged samples, is refused in one
  /// line with status 65 (the simulation ran on them silently).
  @Test func anEmptyOrDamagedTalkerIsRefused() throws {
    let empty = file("empty-talker.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", empty, "trim", "0", "0",
    ])
    let damaged = file("nan-talker.wav")
    try MicLoopBinary.writeFloatWAVWithNaN(damaged)
    for (talker, mentions) in [(empty, "no audio"), (damaged, "damaged samples")] {
      let result = try MicLoopBinary.run([
        "loopback", "--input", talker, "--room", Self.room("living"),
      ])
      #expect(result.status == 65, "\(talker) exited \(result.status)")
      #expect(result.errorLines.count == 1, "\(result.errorOutput)")
      #expect(result.errorOutput.contains(mentions), "\(result.errorOutput)")
    }
  }

  /// The living room run 6 dB under its limit for 3 s: the guard learns
  /// the loop from what it plays and hears, and when the gain jumps 9 dB
  /// its learned notches go in during the first period at the new gain —
  /// with `--learn-loop off` the howl must first be heard growing.
  @Test func aLearnedLoopIsNotchedAheadWhenTheGainJumps() throws {
    let talker = file("talker.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-R", "-n", "-r", "48000", "-b", "32", "-e", "floating-point", "-c", "1",
      talker, "synth", "5", "whitenoise", "vol", "0.017",
    ])
    func run(_ learning: String) throws -> (feedback: [[String: Any]], peak: Double) {
      let result = try MicLoopBinary.run([
        "loopback", "--input", talker, "--room", Self.room("living"), "--gain-db", "-2.7,6.3@3",
        "--learn-loop", learning, "--json",
      ])
      #expect(result.status == 0, "\(result.errorOutput)")
      let lines = objects(result.output)
      let summary = try #require(lines.last { $0["event"] as? String == "room" })
      return (
        lines.filter { $0["event"] as? String == "feedback" && ($0["time"] as? Double ?? 0) >= 3 },
        summary["speaker_peak_dbfs"] as? Double ?? 0
      )
    }
    let learned = try run("on")
    let first = try #require(learned.feedback.first)
    #expect(first["learned"] as? Bool == true && first["planned"] as? Bool == true)
    #expect((first["time"] as? Double ?? 0) < 3.011, "\(first)")
    let detected = try run("off")
    let heard = try #require(detected.feedback.first)
    #expect(heard["learned"] == nil && (heard["time"] as? Double ?? 0) > 3.05, "\(heard)")
    #expect(learned.peak < detected.peak - 3, "\(learned.peak) vs \(detected.peak) dBFS")
  }
}
