import DuplexIO
import DuplexIOTesting
import FeedbackControl
import Foundation
import MicLoopKit
import SignalDSP
import TestSupport
import Testing

/// The live job in a closed acoustic loop: the simulated pair in the
/// simulated rooms of Tests/Fixtures/rooms.
@Suite(.serialized) struct FeedbackLoopTests {
  static let rate = 48_000

  static func configuration() -> DuplexConfiguration {
    var configuration = DuplexConfiguration(.duplex)
    configuration.sampleRate = rate
    configuration.periodFrames = 256
    configuration.periodCount = 2
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    return configuration
  }

  static func noise(seconds: Double, level: Double, seed: UInt64) -> [Float] {
    var random = SplitMix(seed: seed)
    let scale = Float(pow(10, level / 20) * 3.0.squareRoot())
    return (0..<Int(seconds * Double(rate))).map { _ in
      Float.random(in: -1...1, using: &random) * scale
    }
  }

  /// Runs a loopback job (no meter) for `seconds` in `room`; what the
  /// speaker played and what the guard did.
  static func run(
    room name: String, talker: [Float], seconds: Double, gain: Double, changes: [GainChange],
    guardSettings: HowlGuardSettings?
  ) throws -> (speaker: [Float], events: [HowlGuardEvent]) {
    let frames = Int(seconds * Double(rate))
    let room = SimulatedRoom(
      impulseResponse: try RoomFixtures.response(name), talker: talker, recordingCapacity: frames)
    let device = SimulatedDevicePair(periodFrames: 256, format: .float, room: room)
    var settings = LiveSettings()
    settings.meter = nil
    settings.gainDecibels = gain
    settings.gainChanges = changes
    settings.feedbackGuard = guardSettings
    let processor = LiveProcessor(settings: settings)
    let unit = DuplexUnit(configuration: configuration(), backend: device, client: processor)
    try unit.initialize()
    try unit.start()
    var events = [HowlGuardEvent]()
    var cycles = SteppedCycles(device, periodsPerCycle: 1)
    while cycles.stepped < (frames + 255) / 256 {
      let completed = cycles.step()
      #expect(completed)
      if cycles.stepped % 64 == 0 {
        processor.feedbackEvents.drain { events.append(contentsOf: $0) }
      }
    }
    unit.stop()
    processor.feedbackEvents.drain { events.append(contentsOf: $0) }
    return (room.speakerSignal(), events)
  }

  static func peak(_ samples: ArraySlice<Float>) -> Double {
    20 * log10(Double(samples.map { abs($0) }.max() ?? 0) + 1e-12)
  }

  /// A step to 6 dB over the living room's limit howls to full scale without
  /// the guard; with it, notches (and a duck) hold the speaker far below.
  @Test func theGuardStopsAHowlInTheLivingRoom() throws {
    let stability = try #require(
      LoopStability.analyze(
        impulseResponse: try RoomFixtures.response("living"), sampleRate: Double(Self.rate),
        delay: 768))
    let msg = stability.maximumStableGain
    let talker = Self.noise(seconds: 3, level: -40, seed: 21)
    let changes = [GainChange(time: 1, decibels: msg + 6)]
    let off = try Self.run(
      room: "living", talker: talker, seconds: 3, gain: msg - 6, changes: changes,
      guardSettings: nil)
    let on = try Self.run(
      room: "living", talker: talker, seconds: 3, gain: msg - 6, changes: changes,
      guardSettings: HowlGuardSettings())
    let lastSecond = (2 * Self.rate)..<off.speaker.count
    #expect(Self.peak(off.speaker[lastSecond]) > -3, "without the guard it howls")
    #expect(Self.peak(on.speaker[lastSecond]) < -12)
    // Identical until the guard's first action, which comes after the step.
    let first = try #require(on.events.first)
    #expect(first.time > 1 && first.time < 1.5)
    let until = Int(first.time * Double(Self.rate)) - 256
    #expect(Array(on.speaker[..<until]) == Array(off.speaker[..<until]))
    // The notches sit on the loop's peaks (within 3 % of one of the room's
    // howl frequencies found without the guard: every one the guard found grows there).
    #expect(on.events.contains { $0.action == .notch })
    for event in on.events where event.action == .notch {
      #expect(event.frequency > 1000 && event.frequency < 8000)
    }
  }

  /// The latency probe, run in each room, reads the maximum stable gain
  /// computed from the room's own response (after 768 frames of buffering).
  @Test(.slow, arguments: RoomFixtures.names)
  func latencyFindsTheRoomsMaximumStableGain(name: String) throws {
    let response = try RoomFixtures.response(name)
    let expected = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: Double(Self.rate), delay: 768))
    let probe = LatencyProbe(sampleRate: Self.rate)
    let device = SimulatedDevicePair(
      periodFrames: 256, clock: .freeRunning, format: .float,
      room: SimulatedRoom(impulseResponse: response))
    let unit = DuplexUnit(configuration: Self.configuration(), backend: device, client: probe)
    try unit.initialize()
    try unit.start()
    while !probe.isDone.load(ordering: .acquiring) { usleep(1000) }
    unit.stop()
    let measurement = try #require(probe.result())
    let found = try #require(measurement.stability)
    #expect(abs(found.maximumStableGain - expected.maximumStableGain) < 1)
    #expect(abs(found.frequency - expected.frequency) < 5)
    // The direct sound arrives after the buffering and the distance to the microphone.
    #expect(measurement.roundTripFrames >= 768 && measurement.roundTripFrames < 768 + 500)
  }
}
