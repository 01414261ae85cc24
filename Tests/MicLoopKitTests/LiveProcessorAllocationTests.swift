import DuplexIO
import DuplexIOTesting
import FeedbackControl
import MicLoopKit
import SignalDSP
import TestSupport
import Testing

@Suite(.serialized) struct LiveProcessorAllocationTests {
  /// The whole loopback path — conversion from the device format, meter,
  /// loudness and true peak, talk detector, gain ramp, limiter, recording ring, mono mix for the
  /// tone decoder — over many periods, with gain and mute changed and the
  /// rings drained while it runs: not one allocation on the audio thread,
  /// in mono, stereo and 5.1, and in every sample format.
  @Test(
    .slow,
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
    var configuration = DuplexConfiguration(.duplex)
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
      processor.recording?.drain { block in
        #expect(block.streamFrame == Int64(recorded / block.channelCount))
        recorded += block.samples.count
        if let last = block.samples.last { lastRecorded = last }
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

  /// The guarded loopback in a room that howls: notches placed, deepened and
  /// lifted, the duck down and back up, gains switched on schedule — on the
  /// audio thread, without one allocation.
  /// Starts `processor` on a hand-stepped simulated device pair in a room
  /// (256-frame periods, two of playback buffering), its audio-thread
  /// allocations counted.
  static func startInRoom(_ processor: LiveProcessor, response: [Float], talker: [Float]) throws
    -> (
      DuplexUnit<SimulatedDevicePair, WatchedClient<LiveProcessor>>, SimulatedDevicePair,
      WatchedClient<LiveProcessor>
    )
  {
    let client = WatchedClient(processor)
    var configuration = DuplexConfiguration(.duplex)
    configuration.periodFrames = 256
    configuration.periodCount = 2
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let device = SimulatedDevicePair(
      periodFrames: 256, format: .float,
      room: SimulatedRoom(impulseResponse: response, talker: talker))
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()
    return (unit, device, client)
  }

  @Test func guardedLoopbackNeverAllocatesWhileItHowls() throws {
    let response = try RoomFixtures.response("living")
    var random = SplitMix(seed: 31)
    let talker = (0..<(8 * 48_000)).map { _ in Float.random(in: -0.017...0.017, using: &random) }
    var settings = LiveSettings()
    settings.meter?.measuresLoudness = true
    settings.isRecording = true
    settings.gainDecibels = -3
    settings.gainChanges = [
      GainChange(time: 1, decibels: 10), GainChange(time: 2, decibels: 14),
      GainChange(time: 4, decibels: -3),
    ]
    var guardSettings = HowlGuardSettings()
    guardSettings.liftDelay = 1
    guardSettings.liftInterval = 0.2
    guardSettings.duckHold = 0.5
    // Shallow notches that cannot go deep: the howls grow through them, are
    // deepened, and are then ducked.
    guardSettings.minimumDepth = 3
    guardSettings.depthPerGrowth = 0
    guardSettings.maximumDepth = 6
    guardSettings.simultaneousHowls = 8
    guardSettings.duckLevel = 0
    settings.feedbackGuard = guardSettings
    let processor = LiveProcessor(settings: settings)
    let (unit, device, client) = try Self.startInRoom(processor, response: response, talker: talker)
    var actions = Set<HowlGuardEvent.Action>()
    for step in 1...30 {
      device.advance(periods: 50)
      #expect(device.waitUntilCompleted(step * 50))
      processor.feedbackEvents.drain { for event in $0 { actions.insert(event.action) } }
      processor.events.drain { _ in }
      processor.recording?.drain { _ in }
    }
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    #expect(actions == Set(HowlGuardEvent.Action.allCases), "\(actions)")
    #expect(counted == 0)
  }

  /// The guard learns the living room's loop while it runs stable 6 dB
  /// under its limit; when the gain jumps 9 dB, the learned notches go in
  /// the period the gain gets there — and neither handing over what was
  /// played and heard nor taking up a learned plan allocates on the audio
  /// thread.
  @Test(.slow) func aLearnedPlanActsOnAJumpWithoutAllocating() throws {
    let response = try RoomFixtures.response("living")
    let limit = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: 48_000, delay: 768)
    ).maximumStableGain
    var random = SplitMix(seed: 5)
    let talker = (0..<(6 * 48_000)).map { _ in Float.random(in: -0.017...0.017, using: &random) }
    var settings = LiveSettings()
    settings.meter = nil
    settings.gainDecibels = limit - 6
    settings.gainChanges = [GainChange(time: 4, decibels: limit + 3)]
    settings.feedbackGuard = HowlGuardSettings()
    let processor = LiveProcessor(settings: settings)
    let (unit, device, client) = try Self.startInRoom(processor, response: response, talker: talker)
    var events = [HowlGuardEvent]()
    // Four periods per control cycle, as the live session's 20 ms cycle keeps pace.
    var cycles = SteppedCycles(device)
    while cycles.stepped < 5 * 48_000 / 256 {
      let completed = cycles.step {
        processor.learnLoop()
        processor.feedbackEvents.drain { events.append(contentsOf: $0) }
      }
      #expect(completed)
    }
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    #expect(counted == 0)
    #expect(events.allSatisfy { $0.time >= 4 }, "acted before the jump: \(events.first!)")
    let first = try #require(events.first, "nothing learned")
    #expect(first.isPlanned && first.isLearned)
    #expect(first.time < 4 + 0.011, "first learned action at \(first.time) s")
  }
}
