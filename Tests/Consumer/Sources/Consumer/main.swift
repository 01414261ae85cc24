// An embedding program built against micloop's public API only: a client
// that passes input to output through a ramped gain, run on the simulated
// device pair, and a DTMF digit rendered by the library's tone source.
import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import SignalDSP
import TonePlans

final class HalfGain: DuplexClient {
  let gain = RampedParameter(value: 0.5, rampFrames: 0)
  let buffer = SampleBuffer()

  func prepare(for format: IOFormat) {
    buffer.resize(to: format.maximumFrameCount * (format.input?.channelCount ?? 1))
  }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    input.render(into: buffer)
  }

  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    output.samples.baseAddress!.update(
      from: buffer.baseAddress, count: output.frameCount * output.channelCount)
    gain.scale(
      output.samples.baseAddress!, frameCount: output.frameCount, channelCount: output.channelCount)
    isSilence = false
  }
}

var configuration = DuplexConfiguration(.duplex)
configuration.alsa.usesRealtimePriority = false
let device = SimulatedDevicePair(periodFrames: 256, clock: .freeRunning, format: .s16)
let unit = DuplexUnit(configuration: configuration, backend: device, client: HalfGain())
try unit.initialize()
try unit.start()
guard device.waitUntilCompleted(100) else { fatalError("the unit did not run") }
unit.stop()
let last = Float(bitPattern: device.lastPlayedSample.load(ordering: .relaxed))
let played = device.playedFrames.load(ordering: .relaxed)
let expected = SimulatedDevicePair.capturedSample(played - 1) * 0.5
let digit = try TonePlan.dtmf.schedule(for: "5", sampleRate: 8_000)
let source = ToneSource(
  segments: digit, amplitude: 0.5, sampleRate: 8_000, channelCount: 1)
var samples = [Float](repeating: 0, count: source.totalFrames ?? 0)
samples.withUnsafeMutableBufferPointer {
  source.render(into: $0.baseAddress!, frameCount: $0.count)
}
let peak = samples.map(abs).max() ?? 0
if abs(last - expected) < 1e-4 && peak > 0.5 {
  print("consumer: ok (\(played) frames through the unit, DTMF peak \(peak))")
} else {
  print("consumer: wrong (last \(last), expected \(expected), peak \(peak))")
  exit(1)
}
