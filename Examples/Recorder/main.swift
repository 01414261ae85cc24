// Records the microphone into buffers the program allocated itself, then
// writes a WAV. Usage: Recorder [CAPTURE] [SECONDS] [OUT.wav]
import AudioFiles
import DuplexIO
import Foundation
import Synchronization

/// Renders every captured period straight into one preallocated take.
final class Recorder: DuplexClient, @unchecked Sendable {
  let seconds: Double
  let take = SampleBuffer()
  var capacity = 0
  var channels = 1
  let framesTaken = Atomic<Int>(0)

  init(seconds: Double) { self.seconds = seconds }

  func prepare(for format: IOFormat) {
    guard let input = format.input else { return }
    channels = input.channelCount
    // Whole periods, plus one, so the last period always fits.
    capacity = Int(seconds * Double(input.sampleRate)) + format.maximumFrameCount
    take.resize(to: capacity * channels)
  }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    let start = framesTaken.load(ordering: .relaxed)
    guard start + input.frameCount <= capacity else { return }
    input.render(into: UnsafeMutableBufferPointer(rebasing: take.samples[(start * channels)...]))
    framesTaken.store(start + input.frameCount, ordering: .releasing)
  }

  // Capture only: the unit has no output bus to fill.
  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {}
}

let arguments = CommandLine.arguments.dropFirst().map { $0 }
var configuration = DuplexConfiguration(.capture)
configuration.captureDevice = arguments.count > 0 ? arguments[0] : "default"
let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 3 : 3
let path = arguments.count > 2 ? arguments[2] : "take.wav"
let recorder = Recorder(seconds: seconds)
let unit = DuplexUnit(configuration: configuration, client: recorder)
do {
  try unit.initialize()
  try unit.start()
  let wanted = Int(seconds * Double(configuration.sampleRate))
  while recorder.framesTaken.load(ordering: .acquiring) < wanted,
    !unit.waitUntilStopped(timeout: 0.05)
  {}
  unit.stop()
  let frames = min(wanted, recorder.framesTaken.load(ordering: .acquiring))
  let file = try AudioFileWriter(
    path: path, sampleRate: Double(configuration.sampleRate), channelCount: recorder.channels)
  try file.write(recorder.take.baseAddress, frameCount: frames)
  file.close()
  print("Recorded \(frames) frames to \(path)")
} catch {
  FileHandle.standardError.write(Data("Recorder: \(error)\n".utf8))
  exit(1)
}
