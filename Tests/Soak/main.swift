// A day of audio through a live job (`LiveJob`, the path every live
// command runs) on the simulated device pair, as fast as the machine
// allows: meter, DTMF decoding and a recording, as `micloop loopback
// --tones dtmf --record` runs them. It fails (exit 1) unless memory stays
// flat, every digit is found where it was sent (no drift of the sample
// time) and the recording holds every frame.
//
// Usage: micloop-soak [HOURS] [--guard] [--record] (24 hours by default);
// micloop-soak --recorder-cost prints what the recorder costs per period
// at 48 kHz instead (`RecorderCost`, for `make bench`).
// With --record the transmission recorder (`micloop record`'s `Recorder`,
// the job's `RecorderStage`) takes the place of the plain recording: a file
// per digit, tagged with it, retention deleting the oldest all day under a
// byte budget, and a file it did not write left alone. With --guard the
// howl guard and its loop learner run too, as `loopback` runs them by
// default: with no loop from the speaker to the microphone, any action the
// guard takes is a false one, and fails the soak. (The guard costs about
// 9 s of processor time per hour of 8 kHz audio here, the rest of the job
// about 1.5 s.) `make soak` runs `24` and `24 --record --guard` side by side.
import AudioFiles
import DuplexIO
import DuplexIOTesting
import FeedbackControl
import Foundation
import MicLoopKit
import Recording
import TonePlans

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--recorder-cost") {
  try RecorderCost.run()
  exit(0)
}
let hours = arguments.compactMap { Int($0) }.first ?? 24
let guards = arguments.contains("--guard")
let records = arguments.contains("--record")
let rate = 8_000
let loopSeconds = 60
let digitAt = 10.0

/// One minute of input: quiet noise with a DTMF "5" at `digitAt` seconds.
func minuteOfInput() throws -> [Float] {
  var samples = [Float](repeating: 0, count: loopSeconds * rate)
  var state: UInt64 = 0x9E37_79B9_7F4A_7C15
  for index in samples.indices {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    samples[index] = (Float(state >> 40) / Float(1 << 24) - 0.5) * 0.002
  }
  let digit = try TonePlan.dtmf.schedule(for: "5", sampleRate: Double(rate))
  let source = ToneSource(segments: digit, amplitude: 0.3, sampleRate: rate, channelCount: 1)
  let start = Int(digitAt) * rate
  samples.withUnsafeMutableBufferPointer {
    source.render(into: $0.baseAddress! + start, frameCount: source.totalFrames ?? 0)
  }
  return samples
}

func fail(_ message: String) -> Never {
  print("soak: FAILED: \(message)")
  exit(1)
}

var configuration = DuplexConfiguration(.duplex)
configuration.sampleRate = rate
configuration.periodFrames = 512
configuration.alsa.usesRealtimePriority = false
configuration.settlingTime = 0
// 512 frames (64 ms) every 40 µs: 1,600 times real time, paced so the
// control thread keeps up the way it must with a real device.
let device = SimulatedDevicePair(
  periodFrames: 512, clock: .realTime(periodSeconds: 40e-6), format: .s16,
  captureLoop: try minuteOfInput())
var settings = LiveJobSettings()
// 3,000 s of audio: 1.9 s of the soak's wall time, so a stall of the
// machine (the day's 1.4 GB written back to disk) that a real device would
// never see as more than a few milliseconds drops nothing (1,200 s once did).
settings.live.recordingBuffer = 3000
// The howl guard and its loop learner as `loopback` runs them by default.
if guards { settings.live.feedbackGuard = HowlGuardSettings() }
settings.duration = Double(hours * 3600)
settings.tones = LiveToneSettings(plans: [TonePlan.dtmf], repeatWindow: 0)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
  "micloop-soak-\(getpid())-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let recordingPath = directory.appendingPathComponent("day.wav").path
var recorderSettings = soakRecorderSettings()
// As `micloop record` sets it: a whole capture buffer may arrive in one cycle.
recorderSettings.largestArrival = settings.live.recordingBuffer
// A file the recorder did not write, in its folder: retention must leave it.
let foreignPath = directory.appendingPathComponent("2020-01-01T00-00-00.000Z.wav").path
if records {
  settings = RecorderStage.jobSettings(
    for: recorderSettings, detection: ToneDetectionSettings(), duration: settings.duration,
    recovery: DeviceRecovery(), captureBuffer: settings.live.recordingBuffer, showsLevels: true)
  if guards { settings.live.feedbackGuard = HowlGuardSettings() }
  try Data(repeating: 0, count: 4096).write(to: URL(fileURLWithPath: foreignPath))
} else {
  settings.recordingPath = recordingPath
}
let job = try LiveJob(configuration: configuration, settings: settings) { device }

let expectedDigits = hours * 3600 / loopSeconds
let observer = SoakObserver(rate: rate, expectedDigits: expectedDigits, processor: job.processor)
let tally = RecorderTally()
let recorderStage =
  records
  ? RecorderStage(
    recorder: try Recorder(
      settings: recorderSettings, sampleRate: Double(rate), channelCount: 1, encoding: .pcm16,
      directory: directory.path,
      clock: StreamClock(sampleRate: Double(rate), startingAt: 1_800_000_000), source: "soak",
      listener: tally.take)) : nil
let began = Date()
let outcome = try job.run(observer: observer, stages: recorderStage.map { [$0] } ?? [])
recorderStage?.finish()
let elapsed = Date().timeIntervalSince(began)
let resident = observer.resident
let digitTimes = observer.digitTimes

let frames = Int64(hours * 3600 * rate)
if let failure = outcome.failure { fail("the job failed: \(failure)") }
if let failure = outcome.recordingFailure { fail("the recording failed: \(failure)") }
if outcome.xruns > 0 || observer.xruns > 0 { fail("\(outcome.xruns) xruns") }
if outcome.droppedRecordingFrames > 0 {
  fail("\(outcome.droppedRecordingFrames) recorded frames dropped")
}
if outcome.undecodedFrames > 0 { fail("the decoder never heard \(outcome.undecodedFrames) frames") }
if records {
  try checkRecorder(tally, frames: frames, digits: expectedDigits)
} else {
  if outcome.recordedFrames != frames {
    fail("recorded \(outcome.recordedFrames) of \(frames) frames")
  }
  let readBack = try AudioFileReader(path: recordingPath)
  if readBack.declaredFrameCount != frames {
    fail("the file holds \(readBack.declaredFrameCount ?? -1) of \(frames) frames")
  }
}

/// The recorder's day: the index covers every frame, a file per digit
/// each tagged with it, no gap, xrun or problem; retention deleted only
/// its own files, oldest first, and kept the folder within the budget;
/// the file it did not write is still there.
func checkRecorder(_ tally: RecorderTally, frames: Int64, digits: Int) throws {
  guard let summary = tally.summary else { fail("the recorder's session never ended") }
  if summary.frames != frames { fail("the index covers \(summary.frames) of \(frames) frames") }
  if tally.recordings.count != digits || tally.tags != digits {
    fail("\(tally.recordings.count) files with \(tally.tags) tags for \(digits) digits")
  }
  if tally.gaps + tally.xruns > 0 || !tally.problems.isEmpty {
    fail("\(tally.gaps) gaps, \(tally.xruns) xruns, problems: \(tally.problems)")
  }
  let written = tally.recordings
  if tally.deleted.isEmpty || tally.deleted != Array(written.prefix(tally.deleted.count)) {
    fail("retention deleted \(tally.deleted.count) files, not the oldest of those written")
  }
  guard FileManager.default.fileExists(atPath: foreignPath) else {
    fail("retention deleted a file the recorder did not write")
  }
  let kept = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
  let survivors = written.dropFirst(tally.deleted.count)
  if let missing = survivors.first(where: { !kept.contains($0) }) {
    fail("\(missing) was neither kept nor deleted")
  }
  if let stale = tally.deleted.first(where: kept.contains) { fail("\(stale) was not deleted") }
  var bytes: Int64 = 0
  for name in kept where name != URL(fileURLWithPath: foreignPath).lastPathComponent {
    let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + name)
    bytes += (attributes[.size] as? NSNumber)?.int64Value ?? 0
  }
  if bytes > soakRecordingBudget {
    fail("the recordings hold \(bytes) bytes, over the budget of \(soakRecordingBudget)")
  }
}
if abs((observer.summaryDuration ?? 0) - Double(hours * 3600)) > 1.0 / Double(rate) {
  fail("the meter's summary says \(observer.summaryDuration ?? -1) s of \(hours * 3600) s")
}
if digitTimes.count != expectedDigits || observer.otherSymbols != 0 {
  fail(
    "decoded \(digitTimes.count) of \(expectedDigits) digits and \(observer.otherSymbols) other events"
  )
}
// No loop from the speaker to the microphone here: anything the guard did
// would be a false action.
if observer.guardActions > 0 { fail("the howl guard acted \(observer.guardActions) times") }
// Every digit at the same place in its minute: the sample time never drifts.
let offsets = digitTimes.enumerated().map { $1 - Double($0 * loopSeconds) - digitAt }
let spread = (offsets.max() ?? 0) - (offsets.min() ?? 0)
if spread > 1e-6 || abs(offsets[0]) > 0.03 {
  fail("digit times drift: offsets from \(offsets.min() ?? 0) to \(offsets.max() ?? 0) s")
}
// Memory after the first hour (rings, decoder and file set up) stays flat.
let growth = (resident.max() ?? 0) - resident[0]
if growth > 1 << 20 {
  fail("resident memory grew by \(growth) bytes: \(resident.map { $0 >> 10 }) KiB by hour")
}
let recorderReport =
  records
  ? " the recorder wrote \(tally.recordings.count) files (\(tally.tags) tags) and its retention deleted \(tally.deleted.count),"
  : ""
print(
  "soak: ok — LiveJob (meter, DTMF, \(records ? "the transmission recorder" : "recording")\(guards ? ", howl guard" : "")),\(recorderReport) \(hours) h of audio in \(Int(elapsed)) s:\(guards ? " 0 guard actions," : "") \(digitTimes.count) digits each \(String(format: "%+.4f", offsets[0])) s from where it was sent (spread \(spread) s), \(frames) frames recorded, resident \(resident[0] >> 10)–\(resident.max()! >> 10) KiB over \(resident.count) hours"
)
