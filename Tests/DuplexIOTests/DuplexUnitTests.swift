import AllocationCounter
import DuplexIO
import Foundation
import Testing

/// Records what the unit does, in order, into storage sized up front.
final class RecordingClient: DuplexClient, @unchecked Sendable {
  var order = [Character]()
  var inputTimes = [Int64]()
  var outputTimes = [Int64]()
  var inputFlags = [IOFlags]()
  var firstSamples = [Float]()
  let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096)

  init() {
    order.reserveCapacity(10_000)
    inputTimes.reserveCapacity(10_000)
    outputTimes.reserveCapacity(10_000)
    inputFlags.reserveCapacity(10_000)
    firstSamples.reserveCapacity(10_000)
  }

  deinit { buffer.deallocate() }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    input.render(into: buffer)
    order.append("i")
    inputTimes.append(timeStamp.sampleTime)
    inputFlags.append(flags)
    firstSamples.append(buffer[0])
  }

  func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags,
    isSilence: inout Bool
  ) {
    order.append("o")
    outputTimes.append(timeStamp.sampleTime)
    for i in 0..<frameCount { output[i] = buffer[i] * 0.5 }
    isSilence = false
  }
}

func duplexConfiguration() -> DuplexConfiguration {
  var configuration = DuplexConfiguration()
  configuration.isInputEnabled = true
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
  }

  @Test func lostDeviceEndsTheLoopWithAnErrorTheCallerSees() throws {
    let device = SimulatedDevicePair(periodFrames: 32)
    let unit = DuplexUnit(
      configuration: duplexConfiguration(), backend: device, client: RecordingClient())
    try unit.initialize()
    try unit.start()
    device.advance(periods: 2)
    #expect(device.waitUntilCompleted(2))
    device.inject(.deviceLost)
    device.advance(periods: 1)
    for _ in 0..<1000 where unit.isRunning { usleep(1000) }
    #expect(!unit.isRunning)
    let failure = try #require(unit.failure)
    #expect(failure.isDeviceLost)
    #expect(failure.description.contains("went away"))
    unit.stop()
  }

  @Test func stopReturnsWithinOnePeriod() throws {
    let period = 0.2
    let device = SimulatedDevicePair(periodFrames: 1024, pacing: period)
    let unit = DuplexUnit(
      configuration: duplexConfiguration(), backend: device, client: RecordingClient())
    try unit.initialize()
    try unit.start()
    #expect(device.waitUntilCompleted(2))
    let begin = MonotonicClock.now()
    unit.stop()
    let elapsed = Double(MonotonicClock.now() - begin) / 1e9
    #expect(elapsed < period)
    #expect(!unit.isRunning)
  }

  @Test func noAllocationsOnTheAudioThreadAfterStart() throws {
    final class WatchingClient: DuplexClient, @unchecked Sendable {
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
      var periods = 0
      func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
        // From the second period on: the first call warms up the thread.
        if periods == 1 { allocation_counter_watch_current_thread(1) }
        periods += 1
        input.render(into: buffer)
      }
      func renderOutput(
        _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
        flags: IOFlags,
        isSilence: inout Bool
      ) {
        for i in 0..<frameCount { output[i] = buffer[i] }
        isSilence = false
      }
    }
    let device = SimulatedDevicePair(periodFrames: 128)
    let client = WatchingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: device, client: client)
    try unit.initialize()
    allocation_counter_reset()
    try unit.start()
    device.advance(periods: 5000)
    #expect(device.waitUntilCompleted(5000))
    device.inject(.overrun)
    device.advance(periods: 100)
    #expect(device.waitUntilCompleted(5100))
    let counted = allocation_counter_count()
    unit.stop()
    #expect(client.periods == 5099)
    #expect(counted == 0)
  }
}

@Suite struct AllocationCounterTests {
  /// The zero-allocation proofs mean something only if the counter sees allocations.
  @Test func counterSeesAllocationsOnAWatchedThread() {
    allocation_counter_reset()
    allocation_counter_watch_current_thread(1)
    let array = [Int](repeating: 7, count: Int.random(in: 100...200))
    allocation_counter_watch_current_thread(0)
    #expect(array.count >= 100)
    #expect(allocation_counter_count() >= 1)
  }
}
