import AllocationCounter
import DuplexIO
import MicLoopKit
import SignalDSP
import Testing

/// Starts watching the audio thread from the second period on.
private final class WatchedToneSource: DuplexClient, @unchecked Sendable {
  let source: ToneSource
  var periods = 0

  init(_ source: ToneSource) { self.source = source }

  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {}

  func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags, isSilence: inout Bool
  ) {
    if periods == 1 { allocation_counter_watch_current_thread(1) }
    periods += 1
    source.renderOutput(
      output, frameCount: frameCount, timeStamp: timeStamp, flags: flags, isSilence: &isSilence)
  }
}

@Suite(.serialized) struct ToneSourceAllocationTests {
  /// Sending a whole 5-tone call and a DTMF string (tone switches, fades,
  /// pauses) allocates nothing on the audio thread.
  @Test func sendingNeverAllocatesOnTheAudioThread() throws {
    let segments =
      try TonePlan.ccir1.schedule(for: "12335", sampleRate: 48_000)
      + TonePlan.dtmf.schedule(for: "0123456789*#", sampleRate: 48_000)
    let source = ToneSource(segments: segments, amplitude: 0.3, sampleRate: 48_000, channelCount: 1)
    let client = WatchedToneSource(source)
    var configuration = DuplexConfiguration()
    configuration.isInputEnabled = false
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(periodFrames: 128)
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    allocation_counter_reset()
    try unit.start()
    let periods = (source.totalFrames ?? 0) / 128 + 100
    device.advance(periods: periods)
    #expect(device.waitUntilCompleted(periods))
    let counted = allocation_counter_count()
    unit.stop()
    let finished = source.isDone.load(ordering: .acquiring)
    #expect(finished)
    #expect(counted == 0)
  }
}
