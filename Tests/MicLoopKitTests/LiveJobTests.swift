import AudioFiles
import DuplexIO
import DuplexIOTesting
import FeedbackControl
import Foundation
import Metering
import MicLoopKit
import Recording
import SignalDSP
import Synchronization
import TestSupport
import Testing
import TonePlans

/// The live job on simulated devices: reconnection and gap filling, a
/// stop while waiting, live tone decoding and the captured audio handed
/// over with its stream positions.
@Suite struct LiveJobTests {
  static let rate = 48_000
  static let period = 64

  static func configuration() -> DuplexConfiguration {
    var configuration = DuplexConfiguration(.capture)
    configuration.captureDevice = "sim:mic"
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    return configuration
  }

  static func unavailable() -> DuplexError {
    DuplexError(.deviceLost, operation: "open", device: "sim:mic", code: ENODEV, reason: "gone")
  }

  /// Records every event with the moment it came, and stops when told.
  final class Recorder: LiveJobObserver {
    var events = [(event: LiveJobEvent, at: Double)]()
    let stop: (Recorder) -> Bool
    init(stop: @escaping (Recorder) -> Bool) { self.stop = stop }
    func handle(_ event: LiveJobEvent) { events.append((event, MonotonicClock.seconds)) }
    func shouldStop() -> Bool { stop(self) }
    var summaries: Int {
      events.filter {
        if case .meter(.summary) = $0.event { return true } else { return false }
      }.count
    }
  }

  /// A stage of the job that keeps what only stages get: the captured
  /// blocks, how far the decoder has heard, and each cycle's frame count.
  final class Follower: LiveJobStage {
    var blocks = [(streamFrame: Int64, first: Float, frames: Int)]()
    var decodedThrough: Int64 = 0
    var events = 0
    var cycles = [Int64]()
    func handle(_ event: LiveJobEvent) { events += 1 }
    func captured(_ block: CaptureRing.Block) {
      blocks.append((block.streamFrame, block.samples[0], block.frameCount))
    }
    func decoded(throughFrame frame: Int64) { decodedThrough = frame }
    func cycleEnded(streamFrames: Int64) { cycles.append(streamFrames) }
  }

  /// Feeds a hand-stepped device at the pace of the wall clock from
  /// `delay` seconds after it starts, until stopped.
  final class Feeder: @unchecked Sendable {
    let stopped = Atomic<Bool>(false)
    init(_ device: SimulatedDevicePair, delay: Double) {
      let thread = Thread { [self] in
        usleep(UInt32(delay * 1_000_000))
        let start = MonotonicClock.seconds
        var fed = 0
        while !self.stopped.load(ordering: .relaxed) {
          let due =
            Int((MonotonicClock.seconds - start) * Double(LiveJobTests.rate))
            / LiveJobTests.period
          if due > fed {
            device.advance(periods: due - fed)
            fed = due
          }
          usleep(2_000)
        }
      }
      thread.start()
    }
  }

  /// The device goes away for half a second, opens again, and its audio
  /// resumes only 0.7 s later (a server slow to start its stream): one
  /// loss, one return whose gap spans all of it, and a recording whose
  /// timeline is the wall time the job ran.
  @Test func aLostDeviceIsBridgedAndTheRecordingKeepsWallTime() throws {
    let first = SimulatedDevicePair(
      periodFrames: Self.period,
      clock: .realTime(periodSeconds: Double(Self.period) / Double(Self.rate)))
    let second = SimulatedDevicePair(periodFrames: Self.period)
    let path = try temporaryPath("bridged.wav")
    var settings = LiveJobSettings()
    settings.recordingPath = path
    settings.recovery = DeviceRecovery(reconnects: true, fillsGaps: true)
    settings.recovery.retryInterval = 0.05
    var opened = 0
    var availableAgain = Double.infinity
    var feeder: Feeder?
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) {
      () throws(DuplexError) -> SimulatedDevicePair in
      opened += 1
      if opened == 1 { return first }
      guard MonotonicClock.seconds >= availableAgain else { throw Self.unavailable() }
      if feeder == nil { feeder = Feeder(second, delay: 0.7) }
      return second
    }
    let loser = Thread {
      usleep(600_000)
      first.inject(.deviceLost)
    }
    let started = MonotonicClock.seconds
    let observer = Recorder { recorder in
      if availableAgain.isInfinite,
        recorder.events.contains(where: {
          if case .deviceLost = $0.event { return true } else { return false }
        })
      {
        availableAgain = MonotonicClock.seconds + 0.5
      }
      return MonotonicClock.seconds - started >= 3
    }
    loser.start()
    let outcome = try job.run(observer: observer)
    let ended = MonotonicClock.seconds
    feeder?.stopped.store(true, ordering: .relaxed)

    #expect(outcome.failure == nil)
    #expect(outcome.wasStoppedByCaller)
    #expect(observer.summaries == 1)
    let lost = observer.events.firstIndex {
      if case .deviceLost = $0.event { return true } else { return false }
    }
    let back = observer.events.firstIndex {
      if case .deviceBack = $0.event { return true } else { return false }
    }
    let lostIndex = try #require(lost)
    let backIndex = try #require(back)
    #expect(lostIndex < backIndex)
    guard case .deviceBack(let time, let gap, let filled) = observer.events[backIndex].event else {
      return
    }
    #expect(filled)
    // Half a second closed, 0.7 s open and silent, and the control cycles around them.
    #expect(gap > 1.15 && gap < 1.6, "gap \(gap) s")
    #expect(abs(time - 0.6) < 0.1, "back at stream time \(time) s")
    // Levels after the return, none between the loss and the return.
    #expect(
      observer.events[(lostIndex + 1)..<backIndex].allSatisfy {
        if case .meter(.level) = $0.event { return false } else { return true }
      })
    #expect(
      observer.events[backIndex...].contains {
        if case .meter(.level) = $0.event { return true } else { return false }
      })
    #expect(outcome.filledFrames == Int64((gap * Double(Self.rate)).rounded()))
    let reader = try AudioFileReader(path: path)
    let fileFrames = try #require(reader.declaredFrameCount)
    #expect(Int64(fileFrames) == outcome.recordedFrames)
    let fileSeconds = Double(fileFrames) / Double(Self.rate)
    // The file spans the wall time of the job: stream time plus the gap.
    #expect(abs(fileSeconds - (outcome.duration + gap)) < 0.01)
    #expect(
      abs(fileSeconds - (ended - started)) < 0.15, "\(fileSeconds) s for \(ended - started) s")
  }

  /// Stopped while waiting for its device: the job ends with what it has,
  /// no failure, one meter summary.
  @Test func aJobStoppedWhileWaitingEndsWithItsMeter() throws {
    let device = SimulatedDevicePair(periodFrames: Self.period, clock: .freeRunning)
    var settings = LiveJobSettings()
    settings.recovery = DeviceRecovery(reconnects: true)
    settings.recovery.retryInterval = 0.02
    var opened = 0
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) {
      () throws(DuplexError) -> SimulatedDevicePair in
      opened += 1
      if opened == 1 { return device }
      throw Self.unavailable()
    }
    var lostAt: Double?
    let observer = Recorder { recorder in
      if recorder.events.count > 3 && lostAt == nil { device.inject(.deviceLost) }
      if lostAt == nil,
        recorder.events.contains(where: {
          if case .deviceLost = $0.event { return true } else { return false }
        })
      {
        lostAt = MonotonicClock.seconds
      }
      return lostAt.map { MonotonicClock.seconds - $0 > 0.2 } ?? false
    }
    let outcome = try job.run(observer: observer)
    #expect(outcome.failure == nil)
    #expect(outcome.wasStoppedByCaller)
    #expect(opened > 2, "it tried to open the device again")
    #expect(observer.summaries == 1)
    #expect(
      !observer.events.contains {
        if case .deviceBack = $0.event { return true } else { return false }
      })
  }

  /// Without reconnection a lost device ends the job with its failure,
  /// its meter summary and the recording it made.
  @Test func aLostDeviceEndsAJobThatDoesNotReconnect() throws {
    let device = SimulatedDevicePair(periodFrames: Self.period, clock: .freeRunning)
    let path = try temporaryPath("cut.wav")
    var settings = LiveJobSettings()
    settings.recordingPath = path
    settings.live.recordingBuffer = 30
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) { device }
    let observer = Recorder { recorder in
      if recorder.events.count > 3 { device.inject(.deviceLost) }
      return false
    }
    let outcome = try job.run(observer: observer)
    #expect(outcome.failure?.kind == .deviceLost)
    #expect(observer.summaries == 1)
    let reader = try AudioFileReader(path: path)
    #expect(Int64(try #require(reader.declaredFrameCount)) == outcome.recordedFrames)
    #expect(outcome.recordedFrames > 0)
  }

  /// DTMF keys in the captured input reach the observer as tone events,
  /// at their stream times, and the tally counts them.
  @Test func tonesAreDecodedLive() throws {
    let keys: [(Double, Double)] = [(697, 1209), (770, 1336), (852, 1477)]
    var signal = [Float]()
    for (low, high) in keys {
      for n in 0..<(Self.rate / 10) {
        let t = Double(n) / Double(Self.rate)
        signal.append(Float(0.2 * sin(2 * .pi * low * t) + 0.2 * sin(2 * .pi * high * t)))
      }
      signal += [Float](repeating: 0, count: Self.rate / 10)
    }
    let device = SimulatedDevicePair(
      periodFrames: Self.period, clock: .freeRunning, captureLoop: signal)
    var settings = LiveJobSettings()
    settings.duration = Double(signal.count) / Double(Self.rate)
    settings.tones = LiveToneSettings(plans: [.dtmf])
    settings.live.meter = nil
    settings.live.recordingBuffer = 10
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) { device }
    let observer = Recorder { _ in false }
    let outcome = try job.run(observer: observer)
    let tones = observer.events.compactMap { entry -> DecodedTone? in
      if case .tone(.tone(let tone)) = entry.event { return tone } else { return nil }
    }
    #expect(tones.map(\.symbol) == ["1", "5", "9"])
    for (index, tone) in tones.enumerated() {
      #expect(abs(tone.time - 0.2 * Double(index)) < 0.03, "\(tone.symbol) at \(tone.time) s")
    }
    #expect(job.tones?.toneCount == 3)
    #expect(outcome.undecodedFrames == 0)
  }

  /// Frames the analysis ring had to drop (a control thread far behind)
  /// reach the decoder as silence: what it has heard stays the stream, so
  /// a recorder waiting for it is not left behind for good.
  @Test func droppedAnalysisFramesKeepTheDecoderOnTheStream() throws {
    let device = SimulatedDevicePair(periodFrames: Self.period, clock: .freeRunning)
    var settings = LiveJobSettings()
    settings.duration = 1
    settings.tones = LiveToneSettings(plans: [.dtmf])
    settings.live.meter = nil
    // A ring of 4 ms: a free-running device overfills it between two cycles.
    settings.live.recordingBuffer = 0.004
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) { device }
    let follower = Follower()
    let outcome = try job.run(observer: Recorder { _ in false }, stages: [follower])
    try #require(outcome.undecodedFrames > 0)
    #expect(follower.decodedThrough == Int64(Self.rate))
  }

  /// The captured audio reaches the job's stages in order, each block at
  /// the stream frame it was captured at; each stage sees every event the
  /// observer sees, and its cycles count the frames captured so far.
  @Test func capturedAudioComesWithItsStreamFrames() throws {
    let device = SimulatedDevicePair(periodFrames: Self.period, clock: .freeRunning)
    var settings = LiveJobSettings()
    settings.handsOverAudio = true
    settings.duration = 0.5
    settings.live.recordingBuffer = 2
    let job = try LiveJob(configuration: Self.configuration(), settings: settings) { device }
    let observer = Recorder { _ in false }
    let follower = Follower()
    let outcome = try job.run(observer: observer, stages: [follower])
    #expect(follower.events == observer.events.count)
    #expect(!follower.cycles.isEmpty && follower.cycles == follower.cycles.sorted())
    #expect((follower.cycles.last ?? 0) <= Int64(Self.rate / 2))
    var next: Int64 = 0
    for block in follower.blocks {
      #expect(block.streamFrame == next)
      #expect(block.first == SimulatedDevicePair.capturedSample(Int(block.streamFrame)))
      next += Int64(block.frames)
    }
    #expect(next == Int64(Self.rate / 2))
    #expect(outcome.duration == 0.5)
  }

  /// A ring-out plan made at another rate than the devices run at is
  /// refused before anything runs: its notches would sit at the wrong
  /// frequencies.
  @Test func aRingOutPlanAtAnotherRateIsRefused() throws {
    // A loop of one strong echo 20 ms on: rings at every multiple of 50 Hz.
    var response = [Float](repeating: 0, count: 2_000)
    response[882] = 0.5
    let plan = try #require(
      RingOutPlan(impulseResponse: response, sampleRate: 44_100, settings: HowlGuardSettings()))
    var settings = LiveJobSettings()
    settings.live.feedbackGuard = HowlGuardSettings()
    settings.live.feedbackRingOut = plan
    var configuration = DuplexConfiguration(.duplex)
    configuration.sampleRate = Self.rate
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(periodFrames: Self.period, clock: .freeRunning)
    #expect {
      _ = try LiveJob(configuration: configuration, settings: settings) { device }
    } throws: { error in
      guard case LiveJobError.ringOutRate(let planRate, let deviceRate) = error else {
        return false
      }
      return planRate == 44_100 && deviceRate == Self.rate
    }
  }

  func temporaryPath(_ name: String) throws -> String {
    try ScratchDirectory.untilExit("livejob").appendingPathComponent(name).path
  }
}
