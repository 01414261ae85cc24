// Play-through: the microphone on the speaker with a gain (RemoteIO's
// classic sample). Usage: Passthrough [CAPTURE] [PLAYBACK] [SECONDS] [GAIN_DB]
import DuplexIO
import Foundation

/// Renders each captured period into its own buffer, then plays it scaled.
final class Passthrough: DuplexClient {
  let gain: Float
  let buffer = SampleBuffer()
  var inputChannels = 1

  init(gain: Float) { self.gain = gain }

  // Control thread, before start: the only place that allocates (the
  // buffer frees what it held before, so initialising again leaks nothing).
  func prepare(for format: IOFormat) {
    inputChannels = format.input?.channelCount ?? 1
    buffer.resize(to: format.maximumFrameCount * inputChannels)
  }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    input.render(into: buffer)
  }

  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    for frame in 0..<output.frameCount {
      for channel in 0..<output.channelCount {
        let source = buffer[frame * inputChannels + min(channel, inputChannels - 1)]
        output.samples[frame * output.channelCount + channel] = source * gain
      }
    }
    isSilence = false
  }
}

let arguments = CommandLine.arguments.dropFirst().map { $0 }
var configuration = DuplexConfiguration(.duplex)
configuration.captureDevice = arguments.count > 0 ? arguments[0] : "default"
configuration.playbackDevice = arguments.count > 1 ? arguments[1] : "default"
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 5 : 5
let gainDecibels = arguments.count > 3 ? Double(arguments[3]) ?? 0 : 0
let client = Passthrough(gain: Float(pow(10, gainDecibels / 20)))
let unit = DuplexUnit(configuration: configuration, client: client)
do {
  try unit.initialize()
  try unit.start()
} catch {
  FileHandle.standardError.write(Data("Passthrough: \(error)\n".utf8))
  exit(1)
}
if !unit.waitUntilStopped(timeout: seconds) { unit.stop() }
if let failure = unit.failure {
  FileHandle.standardError.write(Data("Passthrough: \(failure)\n".utf8))
  exit(1)
}
let statistics = unit.statistics.snapshot()
print("Passed \(statistics.periods) periods, \(statistics.xruns) xruns")
