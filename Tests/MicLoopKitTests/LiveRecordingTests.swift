import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import Recording
import Synchronization
import TestSupport
import Testing
import TonePlans

/// The recorder fed live: the processor a recording job runs
/// (`RecorderStage.jobSettings`) on a simulated capture device whose
/// microphone hears two transmissions, drained each control cycle into a
/// `RecorderStage` as the live job does. The audio thread never
/// allocates; the files come out as they do from a file.
@Suite(.serialized) struct LiveRecordingTests {
  static let rate = 48_000.0
  static let period = 256

  /// The talk trigger always meters; a level trigger meters only for a
  /// station that shows the levels.
  @Test func theMeterRunsForTheTalkTriggerOrForAStation() {
    var settings = RecorderSettings()
    func meters(showsLevels: Bool) -> Bool {
      RecorderStage.jobSettings(
        for: settings, detection: ToneDetectionSettings(), duration: nil,
        recovery: DeviceRecovery(), captureBuffer: 20, showsLevels: showsLevels
      ).live.meter != nil
    }
    #expect(meters(showsLevels: false))
    settings.trigger = .level(threshold: -40)
    #expect(!meters(showsLevels: false))
    #expect(meters(showsLevels: true))
  }

  @Test func recordingLiveNeverAllocatesOnTheAudioThreadAndMakesOneFilePerTransmission() throws {
    var scene = TransmissionScene(seconds: 14, floor: -50, seed: 21, rate: Self.rate)
    // Talk starts once the detector has learned the room (its learningTime).
    scene.talk(at: 2.0, seconds: 1.5)
    scene.talk(at: 7.0, seconds: 2.0)
    let recording = RecorderSettings()
    let job = RecorderStage.jobSettings(
      for: recording, detection: ToneDetectionSettings(), duration: nil,
      recovery: DeviceRecovery(), captureBuffer: 20)
    #expect(job.handsOverAudio)
    var live = job.live
    // What LiveJob switches on for a job that hands over its audio.
    live.isRecording = true
    let processor = LiveProcessor(settings: live)
    let client = WatchedClient(processor)
    var configuration = DuplexConfiguration(.capture)
    configuration.captureDevice = "sim:mic"
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    // One more period than the scene: the loop starts over after it.
    let device = SimulatedDevicePair(
      periodFrames: Self.period, captureLoop: scene.samples + [Float](repeating: 0, count: 4096))
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()

    let directory = try ScratchDirectory.untilExit("live-recording").path
    var files = [RecordedFile]()
    let recorder = try Recorder(
      settings: recording, sampleRate: Self.rate, channelCount: 1, encoding: .float,
      directory: directory, clock: StreamClock(sampleRate: Self.rate), source: "sim:mic"
    ) { event in
      if case .recording(let file) = event { files.append(file) }
    }
    let stage = RecorderStage(recorder: recorder)
    func drain() {
      processor.events.drain { events in
        for event in events { stage.handle(.meter(event.meterEvent)) }
      }
      processor.recording?.drain { stage.captured($0) }
      stage.cycleEnded(streamFrames: Int64(processor.framesProcessed.load(ordering: .acquiring)))
    }
    let periods = scene.samples.count / Self.period
    let step = 50
    var advanced = 0
    while advanced < periods {
      let count = min(step, periods - advanced)
      device.advance(periods: count)
      advanced += count
      #expect(device.waitUntilCompleted(advanced))
      drain()
    }
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    drain()
    stage.finish()

    #expect(counted == 0)
    #expect(files.count == 2, "\(files.map { Double($0.startFrame) / Self.rate })")
    for (file, onset) in zip(files, scene.onsets) {
      #expect(file.startFrame <= Int64(onset))
      #expect(file.startFrame >= Int64(onset) - Int64(0.4 * Self.rate))
    }
    try? FileManager.default.removeItem(atPath: directory)
  }
  /// The recorder on a real live job (`LiveJob` on simulated devices with
  /// reconnection): a transmission, the device lost for a while, another
  /// transmission on the device that came back. Two files, one
  /// `device_lost` gap as long as the job's own, and the index's spans
  /// tiling stream time plus the gap.
  @Test(.slow) func aLiveJobWithALostDeviceMakesAGapBetweenTwoFiles() throws {
    let rate = Double(LiveJobTests.rate)
    // Talk starts once the detector has learned the room (its learningTime).
    var before = TransmissionScene(seconds: 4, floor: -50, seed: 31, rate: rate)
    before.talk(at: 1.8, seconds: 1.0)
    var after = TransmissionScene(seconds: 3, floor: -50, seed: 32, rate: rate)
    after.talk(at: 0.5, seconds: 1.0)
    let first = SimulatedDevicePair(
      periodFrames: LiveJobTests.period,
      clock: .realTime(periodSeconds: Double(LiveJobTests.period) / rate),
      captureLoop: before.samples)
    let second = SimulatedDevicePair(periodFrames: LiveJobTests.period, captureLoop: after.samples)
    var recording = RecorderSettings()
    recording.hang = 0.5
    var settings = RecorderStage.jobSettings(
      for: recording, detection: ToneDetectionSettings(), duration: 6.2,
      recovery: DeviceRecovery(reconnects: true), captureBuffer: 20)
    settings.recovery.retryInterval = 0.05
    var opened = 0
    var availableAgain = Double.infinity
    var feeder: LiveJobTests.Feeder?
    let job = try LiveJob(configuration: LiveJobTests.configuration(), settings: settings) {
      () throws(DuplexError) -> SimulatedDevicePair in
      opened += 1
      if opened == 1 { return first }
      guard MonotonicClock.seconds >= availableAgain else { throw LiveJobTests.unavailable() }
      if feeder == nil { feeder = LiveJobTests.Feeder(second, delay: 0) }
      return second
    }
    let directory = try ScratchDirectory.untilExit("live-job-recording").path
    var events = [RecorderEvent]()
    let recorder = try Recorder(
      settings: recording, sampleRate: rate, channelCount: 1, encoding: .float,
      directory: directory, clock: StreamClock(sampleRate: rate), source: "sim:mic"
    ) { events.append($0) }
    var lost = false
    let stage = RecorderStage(recorder: recorder)
    let observer = LiveJobCallbacks(shouldStop: {
      let time = Double(job.processor.framesProcessed.load(ordering: .acquiring)) / rate
      if !lost && time >= 3.7 {
        lost = true
        first.inject(.deviceLost)
        availableAgain = MonotonicClock.seconds + 0.4
      }
      return false
    })
    let outcome = try job.run(observer: observer, stages: [stage])
    feeder?.stopped.store(true, ordering: .relaxed)
    stage.finish()

    #expect(outcome.failure == nil)
    let files = events.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    let gaps = events.compactMap {
      if case .gap(let start, let frames, let reason, _) = $0 {
        (start, frames, reason)
      } else {
        nil
      }
    }
    #expect(files.count == 2, "\(files.map { ($0.startFrame, $0.frames) })")
    #expect(gaps.count == 1 && gaps.first?.2 == .deviceLost, "\(gaps)")
    if files.count == 2, let gap = gaps.first {
      #expect(files[0].startFrame <= Int64(before.onsets[0]))
      #expect(files[0].startFrame + files[0].frames <= gap.0)
      // The second transmission, 0.5 s into the returned stream, after the gap.
      let onset = gap.0 + gap.1 + Int64(after.onsets[0])
      #expect(files[1].startFrame <= onset && files[1].startFrame >= onset - Int64(0.4 * rate))
      // The gap lasted the device's absence: 0.4 s closed and the cycles around it.
      #expect(Double(gap.1) / rate > 0.35 && Double(gap.1) / rate < 1.5, "\(gap.1) frames")
    }
    var position: Int64 = 0
    for event in events {
      switch event {
      case .recording(let file):
        #expect(file.startFrame == position)
        position += file.frames
      case .idle(let start, let frames), .blip(let start, let frames, _),
        .gap(let start, let frames, _, _):
        #expect(start == position)
        position += frames
      default: break
      }
    }
    let streamFrames = Int64((outcome.duration * rate).rounded())
    #expect(position == streamFrames + (gaps.first?.1 ?? 0))
    try? FileManager.default.removeItem(atPath: directory)
  }
}
