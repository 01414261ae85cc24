import AllocationCounter
import DuplexIO
import DuplexIOTesting
import Foundation
import Synchronization
import TestSupport
import Testing

/// Records what the unit does, in order, into storage sized up front.
final class RecordingClient: DuplexClient, @unchecked Sendable {
  var order = [Character]()
  var inputTimes = [Int64]()
  var outputTimes = [Int64]()
  var inputFlags = [IOFlags]()
  var firstSamples = [Float]()
  var preparedFormats = [IOFormat]()
  var audioThread: pthread_t?
  let buffer = SampleBuffer()

  init() {
    order.reserveCapacity(20_000)
    inputTimes.reserveCapacity(20_000)
    outputTimes.reserveCapacity(20_000)
    inputFlags.reserveCapacity(20_000)
    firstSamples.reserveCapacity(20_000)
  }

  func prepare(for format: IOFormat) {
    preparedFormats.append(format)
    buffer.resize(to: format.maximumFrameCount * (format.input?.channelCount ?? 1))
  }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    if audioThread == nil { audioThread = pthread_self() }
    input.render(into: buffer)
    order.append("i")
    inputTimes.append(timeStamp.sampleTime)
    inputFlags.append(flags)
    firstSamples.append(buffer[0])
  }

  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    order.append("o")
    outputTimes.append(timeStamp.sampleTime)
    for i in 0..<output.frameCount * output.channelCount { output.samples[i] = buffer[i] * 0.5 }
    isSilence = false
  }
}

func duplexConfiguration(channels: Int = 1) -> DuplexConfiguration {
  var configuration = DuplexConfiguration(.duplex)
  configuration.inputChannelCount = channels
  configuration.outputChannelCount = channels
  configuration.alsa.usesRealtimePriority = false
  configuration.settlingTime = 0
  return configuration
}

@Suite(.serialized) struct DuplexUnitTests {
  @Test func inputIsRenderedBeforeOutputAndSampleTimeAdvancesByThePeriod() throws {
    let device = SimulatedDevicePair(periodFrames: 64)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.advance(periods: 100)
    #expect(device.waitUntilCompleted(100))
    unit.stop()
    #expect(client.order.count == 200)
    #expect(String(client.order) == String(repeating: "io", count: 100))
    #expect(client.inputTimes == (0..<100).map { Int64($0 * 64) })
    #expect(client.outputTimes == client.inputTimes)
    // The captured signal is the frame index: nothing lost or repeated.
    #expect(client.firstSamples == (0..<100).map { SimulatedDevicePair.capturedSample($0 * 64) })
    #expect(device.playedFrames.load(ordering: .relaxed) == 6400)
    #expect(
      Float(bitPattern: device.lastPlayedSample.load(ordering: .relaxed))
        == SimulatedDevicePair.capturedSample(6399) * 0.5)
    #expect(unit.statistics.periods.load(ordering: .relaxed) == 100)
  }

  @Test func clientIsPreparedOnceWithTheGrantedFormatsBeforeTheFirstPeriod() throws {
    let device = SimulatedDevicePair(periodFrames: 96)
    let client = RecordingClient()
    var configuration = duplexConfiguration(channels: 2)
    configuration.sampleRate = 44_100
    configuration.periodFrames = 4096  // asked for; the device grants 96
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    #expect(client.order.isEmpty)
    #expect(
      client.preparedFormats == [
        IOFormat(
          input: StreamFormat(sampleRate: 44_100, channelCount: 2),
          output: StreamFormat(sampleRate: 44_100, channelCount: 2), maximumFrameCount: 96,
          // The capture period and the playback pre-fill (two periods).
          loopDelayFrames: 96 + 2 * 96)
      ])
    #expect(unit.format == client.preparedFormats.first)
    try unit.start()
    device.advance(periods: 3)
    #expect(device.waitUntilCompleted(3))
    unit.stop()
    #expect(client.preparedFormats.count == 1)
  }

  /// Every device sample format goes in and out of the loop exactly (the
  /// simulated ramp is representable in all of them).
  @Test(arguments: SampleFormat.allCases)
  func everySampleFormatPassesThroughTheLoop(format: SampleFormat) throws {
    let device = SimulatedDevicePair(periodFrames: 64, format: format)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    #expect(unit.granted?.inputFormat == format)
    try unit.start()
    device.advance(periods: 20)
    #expect(device.waitUntilCompleted(20))
    unit.stop()
    #expect(client.firstSamples == (0..<20).map { SimulatedDevicePair.capturedSample($0 * 64) })
    #expect(
      Float(bitPattern: device.lastPlayedSample.load(ordering: .relaxed))
        == SimulatedDevicePair.capturedSample(20 * 64 - 1) * 0.5)
  }

  @Test func injectedOverrunIsRecoveredCountedAndFlaggedInTheNextCallback() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.advance(periods: 5)
    #expect(device.waitUntilCompleted(5))
    device.inject(.overrun)
    device.advance(periods: 1)
    #expect(device.waitUntilCompleted(6))
    device.advance(periods: 3)
    #expect(device.waitUntilCompleted(9))
    unit.stop()
    #expect(unit.statistics.overruns.load(ordering: .relaxed) == 1)
    #expect(device.starts.load(ordering: .relaxed) == 2)
    #expect(client.inputFlags.count == 8)
    #expect(client.inputFlags[5] == .inputOverrun)
    #expect(client.inputFlags.enumerated().allSatisfy { $0.offset == 5 || $0.element.isEmpty })
    #expect(unit.isRunning == false)
    #expect(unit.failure == nil)
  }

  @Test func anOverrunWhileTheSpeakerSettlesStillCounts() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let client = RecordingClient()
    var configuration = duplexConfiguration()
    configuration.settlingTime = 10
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(2))
    device.inject(.overrun)
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(4))
    device.inject(.underrun)
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(6))
    unit.stop()
    // Captured audio was lost: an overrun, whenever it happens.
    #expect(unit.statistics.overruns.load(ordering: .relaxed) == 1)
    // The speaker's first underruns are the server filling its queue.
    #expect(unit.statistics.underruns.load(ordering: .relaxed) == 0)
    #expect(unit.statistics.settlingXruns.load(ordering: .relaxed) == 1)
  }

  @Test func injectedUnderrunIsCountedAndFlagged() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.inject(.underrun)
    device.advance(periods: 3)
    #expect(device.waitUntilCompleted(3))
    unit.stop()
    #expect(unit.statistics.underruns.load(ordering: .relaxed) == 1)
    #expect(client.inputFlags == [[], .outputUnderrun, []])
    // The period whose playback failed keeps its place in time.
    #expect(client.inputTimes == [0, 32, 64])
  }

  /// An underrun restarts playback alone: capture runs on, so a recording
  /// loses nothing to the speaker's xrun (restarting both dropped what
  /// capture held).
  @Test func anUnderrunLosesNoCapturedSample() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(2))
    device.inject(.underrun)
    device.advance(periods: 3)
    #expect(device.waitUntilCompleted(5))
    unit.stop()
    #expect(unit.statistics.underruns.load(ordering: .relaxed) == 1)
    #expect(device.playbackRestarts.load(ordering: .relaxed) == 1)
    #expect(device.starts.load(ordering: .relaxed) == 1)
    let ramp = (0..<5).map { SimulatedDevicePair.capturedSample($0 * 32) }
    #expect(client.firstSamples == ramp)
    #expect(client.inputTimes == [0, 32, 64, 96, 128])
  }

  @Test func lostDeviceEndsTheLoopAndTheOwnerHearsWhyOffTheAudioThread() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    let heard = Mutex<[(StopReason, pthread_t)]>([])
    unit.onStop = { reason in heard.withLock { $0.append((reason, pthread_self())) } }
    try unit.initialize()
    try unit.start()
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(2))
    #expect(!unit.waitUntilStopped(timeout: 0))
    device.inject(.deviceLost)
    device.advance(periods: 1)
    #expect(unit.waitUntilStopped(timeout: 60))
    #expect(!unit.isRunning)
    let failure = try #require(unit.failure)
    #expect(failure.isDeviceLost)
    #expect(failure.description.contains("went away during wait"))
    unit.stop()
    let reports = heard.withLock { $0 }
    #expect(reports.count == 1)
    #expect(reports.first?.0 == .failed(failure))
    let audioThread = try #require(client.audioThread)
    #expect(reports.allSatisfy { pthread_equal($0.1, audioThread) == 0 })
  }

  @Test func stopByTheOwnerIsReportedAsRequested() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let unit = DuplexUnit(
      configuration: duplexConfiguration(), backend: device, client: RecordingClient())
    let heard = Mutex<[StopReason]>([])
    unit.onStop = { reason in heard.withLock { $0.append(reason) } }
    try unit.initialize()
    try unit.start()
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(2))
    unit.stop()
    #expect(heard.withLock { $0 } == [.requested])
    #expect(unit.waitUntilStopped(timeout: 0))
  }

  /// `stop` wakes a wait that would otherwise last a minute: the loop halts
  /// at once instead of being abandoned, and no further period runs.
  @Test func stopWakesAPendingWait() throws {
    let device = SimulatedDevicePair(periodFrames: 1024, clock: .realTime(periodSeconds: 60))
    let unit = DuplexUnit(
      configuration: duplexConfiguration(), backend: device, client: RecordingClient())
    try unit.initialize()
    try unit.start()
    unit.stop()
    #expect(!unit.isWedged)
    #expect(!unit.isRunning)
    #expect(device.completedPeriods.load(ordering: .relaxed) == 0)
  }

  @Test func noAllocationsOnTheAudioThreadAfterStart() throws {
    let device = SimulatedDevicePair(periodFrames: 128)
    let client = WatchedClient(RecordingClient())
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    device.advance(periods: 5000)
    #expect(device.waitUntilCompleted(5000))
    device.inject(.overrun)
    device.advance(periods: 100)
    #expect(device.waitUntilCompleted(5100))
    unit.stop()
    #expect(client.periods == 5099)
    #expect(client.allocations.load(ordering: .acquiring) == 0)
  }

  /// Two clocks 1000 ppm apart through the whole unit: frames are dropped
  /// or repeated, counted, flagged to the client, and the playback queue
  /// stays within a few periods of where it started.
  @Test(arguments: [1000.0, -1000.0])
  func unitFollowsAPlaybackClockThatDrifts(offset: Double) throws {
    let device = SimulatedDevicePair(
      periodFrames: 256, clock: .freeRunning, playbackClockOffset: offset)
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    try unit.start()
    let periods = 12_000  // 64 s at 48 kHz: 16,384 frames of drift apart
    #expect(device.waitUntilCompleted(periods))
    unit.stop()
    let corrected = unit.statistics.driftCorrectedFrames.load(ordering: .relaxed)
    let elapsed = device.completedPeriods.load(ordering: .relaxed) * 256
    let drift = Double(elapsed) * offset / 1e6
    // Positive offset: playback runs fast, so frames are repeated (negative).
    #expect(abs(Double(-corrected) - drift) < 3 * 256, "corrected \(corrected), drift \(drift)")
    #expect(client.inputFlags.contains { $0.contains(.driftCorrected) })
    let delay = device.outputDelay()
    #expect(abs(delay - 2 * 256) < 4 * 256, "queue ended at \(delay) frames")
  }
}

@Suite struct AllocationCounterTests {
  /// The zero-allocation proofs mean something only if the counter sees allocations.
  @Test func counterSeesAllocationsOnAWatchedThread() {
    allocation_counter_reset()
    allocation_counter_watch_current_thread(1)
    let array = [Int](repeating: 7, count: 100 + Int(allocation_counter_count() % 2))
    allocation_counter_watch_current_thread(0)
    #expect(array.count >= 100)
    #expect(allocation_counter_count() >= 1)
    #expect(allocation_counter_thread_count() >= 1)
  }

  /// A runner reuses its threads: a watch started on one holds none of an
  /// earlier test's allocations there.
  @Test func aNewWatchStartsFromZero() {
    allocation_counter_watch_current_thread(1)
    let array = [Int](repeating: 7, count: 100 + Int(allocation_counter_count() % 2))
    allocation_counter_watch_current_thread(0)
    #expect(array.count >= 100 && allocation_counter_thread_count() >= 1)
    allocation_counter_watch_current_thread(1)
    let counted = allocation_counter_thread_count()
    allocation_counter_watch_current_thread(0)
    #expect(counted == 0)
  }
}
