// A day of audio through a live loopback job on the simulated device pair,
// as fast as the machine allows: meter, DTMF decoding and a recording, all
// as `micloop loopback --tones dtmf --record` runs them. It fails (exit 1)
// unless memory stays flat, every digit is found where it was sent (no
// drift of the sample time) and the recording holds every frame.
//
// Usage: micloop-soak [HOURS] (24 by default).
import AudioFiles
import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import ToneDecoding
import TonePlans

let hours = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 24 : 24
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

/// Resident memory of this process in bytes.
func residentBytes() -> Int {
  guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
    let pages = Int(statm.split(separator: " ")[1])
  else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
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
var settings = LiveSettings()
settings.isRecording = true
settings.isAnalyzing = true
settings.recordingBuffer = 1200
let session = try LiveSession(configuration: configuration, backend: device, settings: settings)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
  "micloop-soak-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let recordingPath = directory.appendingPathComponent("day.wav").path
let recorder = try AudioFileWriter(path: recordingPath, sampleRate: Double(rate), channelCount: 1)
let decoder = try ToneDecoder(plans: [TonePlan.dtmf], sampleRate: Double(rate))

let expectedDigits = hours * 3600 / loopSeconds
var digitTimes = [Double]()
digitTimes.reserveCapacity(expectedDigits + 16)
var otherSymbols = 0
var resident = [Int]()
var nextHour = 1
var summaryDuration: Double?
let began = Date()
let outcome = try session.run(
  duration: Double(hours * 3600), recorder: recorder,
  shouldStop: {
    let seconds = session.processor.framesProcessed.load(ordering: .relaxed) / rate
    if seconds >= nextHour * 3600 {
      resident.append(residentBytes())
      nextHour += 1
    }
    return false
  },
  onEvent: { if case .summary(let summary) = $0 { summaryDuration = summary.duration } },
  onInput: { samples in
    decoder.process(samples) { event in
      if case .tone(let tone) = event, tone.symbol == "5" {
        digitTimes.append(tone.time)
      } else {
        otherSymbols += 1
      }
    }
  })
decoder.finish { _ in otherSymbols += 1 }
let elapsed = Date().timeIntervalSince(began)

let frames = Int64(hours * 3600 * rate)
if let failure = outcome.failure { fail("the job failed: \(failure)") }
if outcome.overruns + outcome.underruns > 0 {
  fail("\(outcome.overruns) overruns, \(outcome.underruns) underruns")
}
if outcome.droppedRecordingFrames > 0 {
  fail("\(outcome.droppedRecordingFrames) recorded frames dropped")
}
if outcome.recordedFrames != frames {
  fail("recorded \(outcome.recordedFrames) of \(frames) frames")
}
let readBack = try AudioFileReader(path: recordingPath)
if readBack.declaredFrameCount != frames {
  fail("the file holds \(readBack.declaredFrameCount ?? -1) of \(frames) frames")
}
if abs((summaryDuration ?? 0) - Double(hours * 3600)) > 1.0 / Double(rate) {
  fail("the meter's summary says \(summaryDuration ?? -1) s of \(hours * 3600) s")
}
if digitTimes.count != expectedDigits || otherSymbols != 0 {
  fail("decoded \(digitTimes.count) of \(expectedDigits) digits and \(otherSymbols) other events")
}
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
print(
  "soak: ok — \(hours) h of audio in \(Int(elapsed)) s: \(digitTimes.count) digits each \(String(format: "%+.4f", offsets[0])) s from where it was sent (spread \(spread) s), \(frames) frames recorded, resident \(resident[0] >> 10)–\(resident.max()! >> 10) KiB over \(resident.count) hours"
)
