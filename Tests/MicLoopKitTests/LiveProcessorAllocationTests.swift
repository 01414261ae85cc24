import AllocationCounter
import DuplexIO
import MicLoopKit
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Wraps the live processor so the counter starts watching the audio thread
/// once it is warm (from the second period on).
private final class WatchedProcessor: DuplexClient, @unchecked Sendable {
  let processor: LiveProcessor
  var periods = 0

  init(_ processor: LiveProcessor) { self.processor = processor }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    if periods == 1 { allocation_counter_watch_current_thread(1) }
    periods += 1
    processor.inputAvailable(input, timeStamp: timeStamp, flags: flags)
  }

  func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags, isSilence: inout Bool
  ) {
    processor.renderOutput(
      output, frameCount: frameCount, timeStamp: timeStamp, flags: flags, isSilence: &isSilence)
  }
}

@Suite(.serialized) struct LiveProcessorAllocationTests {
  /// The whole loopback path — meter, talk detector, gain ramp, limiter,
  /// recording ring, mono mix for the tone decoder — over thousands of periods, with gain and mute changed
  /// and the rings drained while it runs: not one allocation on the audio thread.
  @Test func loopbackPathNeverAllocatesOnTheAudioThread() throws {
    var settings = LiveSettings()
    settings.isRecording = true
    settings.isAnalyzing = true
    settings.gainDecibels = -6
    let processor = LiveProcessor(
      format: StreamFormat(sampleRate: 48_000, channelCount: 1), outputChannelCount: 1,
      maximumPeriod: 1024, settings: settings)
    let client = WatchedProcessor(processor)
    var configuration = DuplexConfiguration()
    configuration.isInputEnabled = true
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(periodFrames: 128)
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    allocation_counter_reset()
    try unit.start()
    var events = 0
    var recorded = 0
    var analysed = 0
    func drain() {
      processor.events.drain { events += $0.count }
      processor.recording?.drain { recorded += $0.count }
      processor.analysis?.drain { analysed += $0.count }
    }
    for step in 1...40 {
      device.advance(periods: 100)
      #expect(device.waitUntilCompleted(step * 100))
      if step == 10 { processor.setGain(decibels: 3) }
      if step == 20 { processor.isMuted.store(true, ordering: .releasing) }
      if step == 30 { processor.isMuted.store(false, ordering: .releasing) }
      drain()
    }
    let counted = allocation_counter_count()
    unit.stop()
    drain()
    #expect(client.periods == 4000)
    #expect(events >= 100, "the meter reported \(events) events")
    #expect(recorded == 4000 * 128)
    #expect(analysed == 4000 * 128)
    #expect(counted == 0)
  }
}
