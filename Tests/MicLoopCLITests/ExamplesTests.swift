import AudioFiles
import Foundation
import TestSupport
import Testing

/// The programs in Examples/, built with the package, run against real
/// ALSA devices on a private PulseAudio server.
@Suite(
  .serialized, .tags(.live, .pulseaudio),
  .needsSoundServer) struct ExamplesTests
{
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// An example's binary from the debug build next to these tests.
  static func example(_ name: String) -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/\(name)").path
  }

  func sine(_ name: String, seconds: Int, volume: Double) throws -> String {
    let path = file(name)
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", path, "synth", "\(seconds)",
      "sine", "1000", "vol", "\(volume)",
    ])
    return path
  }

  @Test func passthroughPlaysTheMicrophoneAtItsGain() throws {
    let devices = try VirtualDevices()
    let tone = try sine("sine.wav", seconds: 10, volume: 0.251189)
    let player = try devices.play(tone, into: "mic")
    defer { player.signal(SIGTERM) }
    let heard = file("heard.wav")
    let recorder = try devices.startRecording("pulse:spk.monitor", seconds: 8, into: heard)
    let passthrough = try devices.spawn([
      Self.example("Passthrough"), "pulse:mic.monitor", "pulse:spk", "4", "-6",
    ])
    let result = passthrough.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("Passed"), "\(result.output)")
    recorder.signal(SIGINT)
    recorder.wait()
    let played = MicLoopBinary.sounding(try MicLoopBinary.samples(heard), threshold: 0.02)
    #expect(played.count >= 48_000, "only \(played.count) samples reached the speaker")
    let peak = 20 * log10(Double(played.map { abs($0) }.max() ?? 0))
    #expect(abs(peak - -18) < 0.3, "peak \(peak) dBFS")
  }

  @Test func recorderWritesWhatTheMicrophoneHeard() throws {
    let devices = try VirtualDevices()
    let tone = try sine("sine.wav", seconds: 20, volume: 0.5)
    let player = try devices.play(tone, into: "mic")
    defer { player.signal(SIGTERM) }
    let take = file("take.wav")
    let result = try devices.spawn([Self.example("Recorder"), "pulse:mic.monitor", "2", take])
      .result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let reader = try AudioFileReader(path: take)
    #expect(reader.declaredFrameCount == 96_000)
    let recorded = try MicLoopBinary.samples(take)
    let peak = 20 * log10(Double(recorded.map { abs($0) }.max() ?? 0))
    #expect(abs(peak - -6.02) < 0.1, "peak \(peak) dBFS")
  }

  /// The tone generator renders whole periods; a frequency typed while it
  /// plays changes the pitch without a click.
  @Test func toneGeneratorChangesFrequencyWithoutAClick() throws {
    let devices = try VirtualDevices()
    // Tried again only when the generator or the recorder reports an xrun.
    let (result, played) = try LiveAttempts.run {
      () throws -> (result: (MicLoopBinary.Result, [Float]), passed: Bool, lost: Bool) in
      let (result, heard) = try playToneAndChangeIt(devices)
      let played = Array(MicLoopBinary.sounding(try MicLoopBinary.samples(heard), threshold: 0.02))
      let output = result.output + result.errorOutput
      let lost = output.contains("underruns") || LiveAttempts.lostCapture(output)
      let passed = played.count >= 2 * 48_000 && Self.largestStep(played) <= Self.steepest * 1.05
      return ((result, played), passed, lost)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    // "Rendered N frames in periods of P": a whole number of periods.
    let numbers = result.output.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    #expect(
      numbers.count == 2 && numbers[1] > 0 && numbers[0] % numbers[1] == 0, "\(result.output)")
    #expect(played.count >= 2 * 48_000, "only \(played.count) samples were heard")
    let frequencies = Self.frequencies(played)
    let low = frequencies.filter { abs($0 - 1000) <= 10 }.count
    let high = frequencies.filter { abs($0 - 1500) <= 10 }.count
    #expect(low >= 3 && high >= 3, "\(frequencies)")
    #expect(low + high >= frequencies.count - 1, "\(frequencies)")
    let largest = Self.largestStep(played)
    #expect(largest <= Self.steepest * 1.05, "a step of \(largest) (a click)")
  }

  /// Plays 1000 Hz for 4 s through the ToneGenerator example, types 1500
  /// after 1.5 s, and records the speaker's monitor: the example's result
  /// and the recording's path.
  private func playToneAndChangeIt(_ devices: VirtualDevices) throws -> (
    MicLoopBinary.Result, String
  ) {
    let fifo = file("keys")
    unlink(fifo)
    #expect(mkfifo(fifo, 0o600) == 0)
    // Held open for writing first, so the child's open of its input does
    // not wait for a writer (posix_spawn waits for the child's exec).
    let keys = open(fifo, O_RDWR)
    #expect(keys >= 0)
    defer { close(keys) }
    // Silence keeps the speaker running, so its monitor hears the tone
    // from its first sample (an idle sink's monitor starts late).
    let keepAlive = try devices.keepRunning("spk")
    defer { keepAlive.signal(SIGTERM) }
    usleep(500_000)
    let heard = file("tone.wav")
    let recorder = try devices.startRecording("pulse:spk.monitor", seconds: 10, into: heard)
    let generator = try devices.spawn(
      [Self.example("ToneGenerator"), "pulse:spk", "1000", "4"], standardInput: fifo)
    usleep(1_500_000)
    #expect(write(keys, "1500\n", 5) == 5)
    var result = generator.result()
    recorder.signal(SIGINT)
    result.errorOutput += recorder.result().errorOutput
    return (result, heard)
  }

  /// The steepest step between samples of a 1500 Hz sine at 0.25.
  static let steepest = Float(2 * Double.pi * 1500 / 48_000 * 0.25)

  /// Frequency from zero crossings in 100 ms windows.
  static func frequencies(_ played: [Float]) -> [Double] {
    var frequencies = [Double]()
    for start in stride(from: 0, to: played.count - 4800, by: 4800) {
      var crossings = 0
      for i in (start + 1)..<(start + 4800) where (played[i - 1] < 0) != (played[i] < 0) {
        crossings += 1
      }
      frequencies.append(Double(crossings) / 2 / 0.1)
    }
    return frequencies
  }

  /// The largest step between neighbouring samples.
  static func largestStep(_ played: [Float]) -> Float {
    var largest: Float = 0
    for i in 1..<max(played.count, 1) { largest = max(largest, abs(played[i] - played[i - 1])) }
    return largest
  }

}
