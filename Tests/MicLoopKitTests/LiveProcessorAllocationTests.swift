import DuplexIO
import DuplexIOTesting
import MicLoopKit
import TestSupport
import Testing

@Suite(.serialized) struct LiveProcessorAllocationTests {
  /// The whole loopback path — conversion from the device format, meter,
  /// loudness and true peak, talk detector, gain ramp, limiter, recording ring, mono mix for the
  /// tone decoder — over many periods, with gain and mute changed and the
  /// rings drained while it runs: not one allocation on the audio thread,
  /// in mono, stereo and 5.1, and in every sample format.
  @Test(
    arguments: [(1, SampleFormat.float), (2, .float), (6, .float)]
      + SampleFormat.allCases.filter { $0 != .float }.map { (1, $0) })
  func loopbackPathNeverAllocatesOnTheAudioThread(channels: Int, format: SampleFormat) throws {
    var settings = LiveSettings()
    settings.isRecording = true
    settings.isAnalyzing = true
    settings.gainDecibels = -6
    settings.meter?.measuresLoudness = true
    let processor = LiveProcessor(settings: settings)
    let client = WatchedClient(processor)
    var configuration = DuplexConfiguration()
    configuration.isInputEnabled = true
    configuration.inputChannelCount = channels
    configuration.outputChannelCount = channels
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(periodFrames: 128, format: format)
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()
    var events = 0
    var recorded = 0
    var analysed = 0
    var lastRecorded: Float = -1
    func drain() {
      processor.events.drain { events += $0.count }
      processor.recording?.drain {
        recorded += $0.count
        if let last = $0.last { lastRecorded = last }
      }
      processor.analysis?.drain { analysed += $0.count }
    }
    let steps = 20
    for step in 1...steps {
      device.advance(periods: 100)
      #expect(device.waitUntilCompleted(step * 100))
      if step == 5 { processor.setGain(decibels: 3) }
      if step == 10 { processor.setMuted(true) }
      if step == 15 { processor.setMuted(false) }
      drain()
    }
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    drain()
    let frames = steps * 100 * 128
    #expect(client.periods == steps * 100)
    #expect(events >= 50, "the meter reported \(events) events")
    #expect(recorded == frames * channels)
    #expect(analysed == frames)
    // The device's ramp arrives intact through the format conversion.
    #expect(lastRecorded == SimulatedDevicePair.capturedSample(frames - 1))
    #expect(counted == 0)
  }
}
