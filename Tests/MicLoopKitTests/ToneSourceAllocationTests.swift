import DuplexIO
import DuplexIOTesting
import MicLoopKit
import TestSupport
import Testing
import TonePlans

@Suite(.serialized) struct ToneSourceAllocationTests {
  /// Sending a whole 5-tone call and a DTMF string (tone switches, fades,
  /// pauses) allocates nothing on the audio thread.
  @Test func sendingNeverAllocatesOnTheAudioThread() throws {
    let segments =
      try TonePlan.ccir1.schedule(for: "12335", sampleRate: 48_000)
      + TonePlan.dtmf.schedule(for: "0123456789*#", sampleRate: 48_000)
    let source = ToneSource(segments: segments, amplitude: 0.3, sampleRate: 48_000, channelCount: 1)
    let client = WatchedClient(source)
    var configuration = DuplexConfiguration(.playback)
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(periodFrames: 128)
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()
    let periods = (source.totalFrames ?? 0) / 128 + 100
    device.advance(periods: periods)
    #expect(device.waitUntilCompleted(periods))
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    let finished = source.isDone.load(ordering: .acquiring)
    #expect(finished)
    #expect(counted == 0)
  }
}
