import AudioFiles
import Foundation
import Metering
import MicLoopKit
import TestSupport
import Testing

/// `micloop tone` into files and on a virtual speaker.
@Suite(.serialized) struct ToneCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  func summary(_ path: String) throws -> MeterSummary {
    try FileMeter.run(try AudioFileReader(path: path), settings: MeterSettings()) { _ in }.summary
  }

  @Test func fileHasTheRequestedLevelAndLength() throws {
    let path = file("tone.wav")
    let result = try MicLoopBinary.run([
      "tone", "--frequency", "1000", "--level-db", "-6", "--duration", "2", "--output", path,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let reader = try AudioFileReader(path: path)
    #expect(reader.declaredFrameCount == 96_000)
    let levels = try summary(path)
    #expect(abs((levels.peakDecibels ?? 0) - -6) < 0.01)
    // A sine's RMS is 3.01 dB below its peak (the 5 ms fades cost 0.01 dB).
    #expect(abs((levels.rmsDecibels ?? 0) - -9.03) < 0.02)
  }

  @Test func twoTonesMakeADTMFDigitThatMultimonDecodes() throws {
    let path = file("digit.wav")
    let result = try MicLoopBinary.run([
      "tone", "-f", "852", "-f", "1477", "--duration", "0.5", "--output", path,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = try MicLoopBinary.multimon("DTMF", path)
    #expect(lines.contains { $0.contains("DTMF: 9") }, "\(lines)")
  }

  @Test func impossibleTonesAreRefusedInOneLine() throws {
    let cases: [(arguments: [String], mentions: String)] = [
      (["tone", "-f", "30000", "--duration", "1", "-o", file("x.wav")], "30000"),
      (
        [
          "tone", "-f", "1000", "-f", "2000", "--level-db", "-3", "--duration", "1", "-o",
          file("x.wav"),
        ], "full scale"
      ),
      (["tone", "-f", "1000", "-o", file("x.wav")], "--duration"),
      (["tone", "--duration", "1", "-o", file("x.wav")], "--frequency"),
      (["tone", "-f", "1000", "--duration", "1", "-o", file("x.txt")], "x.txt"),
    ]
    for item in cases {
      let result = try MicLoopBinary.run(item.arguments)
      #expect(result.status != 0, "\(item.arguments) exited 0")
      #expect(result.errorLines.count == 1, "\(item.arguments): \(result.errorOutput)")
      #expect(
        result.errorOutput.contains(item.mentions), "\(item.arguments): \(result.errorOutput)")
    }
  }

  /// Live: the tone heard on the speaker's monitor has the requested level.
  @Test(.tags(.live, .pulseaudio), .needsSoundServer)
  func toneOnTheVirtualSpeakerHasTheRequestedLevel() throws {
    let devices = try VirtualDevices()
    // The tone plays first and outlasts the meter: no stream starts or
    // stops on the sink while its monitor is captured.
    let tone = try devices.startMicloop([
      "tone", "-f", "1000", "--level-db", "-12", "--duration", "4", "-D", "pulse:spk",
    ])
    usleep(700_000)
    let result = try devices.micloop([
      "meter", "-D", "pulse:spk.monitor", "--json", "--duration", "2", "--interval", "0.1",
    ])
    #expect(tone.result().status == 0)
    #expect(result.status == 0, "\(result.errorOutput)")
    let peaks = result.output.split(separator: "\n").compactMap { line -> Double? in
      guard line.contains("\"event\":\"level\""),
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      else { return nil }
      return object["peak_dbfs"] as? Double
    }
    let loud = peaks.filter { $0 > -30 }
    // About 2 s of tone in 0.1 s readings, each at -12 dBFS.
    #expect(loud.count >= 15, "\(peaks)")
    #expect(loud.allSatisfy { abs($0 - -12) < 0.1 }, "\(loud)")
  }

  /// Live: DTMF sent into the virtual microphone is recorded by loopback and
  /// decoded exactly by multimon-ng.
  @Test(.tags(.live, .pulseaudio), .needsSoundServer)
  func dtmfSentIntoTheVirtualMicrophoneIsDecoded() throws {
    let devices = try VirtualDevices()
    let signal = file("dtmf.wav")
    let length = try VirtualDevices.programme([("dtmf", "123#")], at: signal)
    let recording = file("sent.wav")
    let (result, lines) = try LiveAttempts.run {
      let player = try devices.play(signal, into: "mic")
      defer { player.signal(SIGTERM) }
      usleep(300_000)
      let result = try devices.micloop([
        "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period",
        "1024", "--periods", "4", "--record", recording, "--duration", String(length - 2),
      ])
      let lines = try MicLoopBinary.multimon("DTMF", recording)
      let digits = lines.compactMap { $0.hasPrefix("DTMF: ") ? $0.dropFirst(6) : nil }
      return ((result, lines), digits.joined() == "123#", result.output)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    let digits = lines.compactMap { $0.hasPrefix("DTMF: ") ? $0.dropFirst(6) : nil }
    #expect(digits.joined() == "123#", "\(lines)")
  }
}
