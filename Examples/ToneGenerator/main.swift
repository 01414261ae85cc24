// A sine on the speaker from a render callback alone (the classic iOS
// ToneGenerator sample). Type a new frequency and Enter while it plays.
// Usage: ToneGenerator [PLAYBACK] [FREQUENCY] [SECONDS]
import DuplexIO
import Foundation
import Synchronization

/// A phase accumulator kept across periods, so frequency changes never click.
final class ToneGenerator: DuplexClient, @unchecked Sendable {
  let frequency: Atomic<UInt64>  // Double bit pattern, set from any thread
  let framesRendered = Atomic<Int>(0)
  var sampleRate = 48_000.0
  var phase = 0.0

  init(frequency: Double) { self.frequency = Atomic(frequency.bitPattern) }

  func prepare(for format: IOFormat) { sampleRate = Double(format.output?.sampleRate ?? 48_000) }

  // Playback only: the unit has no input bus to deliver.
  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {}

  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    let step = 2 * Double.pi * Double(bitPattern: frequency.load(ordering: .relaxed)) / sampleRate
    for frame in 0..<output.frameCount {
      let value = Float(0.25 * sin(phase))
      for channel in 0..<output.channelCount {
        output.samples[frame * output.channelCount + channel] = value
      }
      phase += step
      if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
    }
    framesRendered.add(output.frameCount, ordering: .relaxed)
    isSilence = false
  }
}

let arguments = CommandLine.arguments.dropFirst().map { $0 }
var configuration = DuplexConfiguration(.playback)
configuration.periodFrames = 1024  // only the speaker to keep up with:
configuration.periodCount = 3  // 64 ms of buffer ride out a busy machine
configuration.playbackDevice = arguments.count > 0 ? arguments[0] : "default"
let generator = ToneGenerator(frequency: arguments.count > 1 ? Double(arguments[1]) ?? 440 : 440)
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 5 : 5
let unit = DuplexUnit(configuration: configuration, client: generator)
do {
  try unit.initialize()
  try unit.start()
} catch {
  FileHandle.standardError.write(Data("ToneGenerator: \(error)\n".utf8))
  exit(1)
}
Thread.detachNewThread {
  while let line = readLine(), let value = Double(line), value > 0 {
    generator.frequency.store(value.bitPattern, ordering: .relaxed)
  }
}
if !unit.waitUntilStopped(timeout: seconds) { unit.stopAfterDrain() }
let frames = generator.framesRendered.load(ordering: .relaxed)
let underruns = unit.statistics.underruns.load(ordering: .relaxed)
print(
  "Rendered \(frames) frames in periods of \(unit.format?.maximumFrameCount ?? 0)"
    + (underruns > 0 ? " (\(underruns) underruns: the speaker went silent)" : ""))
exit(unit.failure == nil ? 0 : 1)
