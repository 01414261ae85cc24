import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import Testing

@Suite struct LiveSessionTests {
  func session(_ device: SimulatedDevicePair) throws -> LiveSession<SimulatedDevicePair> {
    var configuration = DuplexConfiguration(.duplex)
    configuration.captureDevice = "sim:mic"
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    return try LiveSession(configuration: configuration, backend: device, settings: LiveSettings())
  }

  /// A stream that never delivers (a driver hung inside a read) ends the
  /// job as a lost device instead of running forever.
  @Test func aStreamThatStopsMovingEndsTheJobAsALostDevice() throws {
    let device = SimulatedDevicePair(periodFrames: 64)
    let session = try session(device)
    session.stallLimit = 0.2
    session.startLimit = 0.3
    let outcome = try session.run(
      duration: 60, handlers: LiveSession<SimulatedDevicePair>.Handlers())
    let failure = try #require(outcome.failure)
    #expect(failure.kind == .deviceLost)
    #expect(failure.device == "sim:mic")
    #expect(failure.description.contains("no audio for 0.3 s"))
    #expect(failure.description.contains("sound server may have stopped"))
  }

  /// Once a second of audio flowed, a stream that stops is lost after the shorter
  /// `stallLimit` (a server that died is noticed at once), not the
  /// `startLimit` a stream is given to start.
  @Test func aStreamThatFlowedIsLostAfterTheShorterLimit() throws {
    let device = SimulatedDevicePair(periodFrames: 64)
    let session = try session(device)
    session.stallLimit = 0.2
    session.startLimit = 30
    let feeder = Thread {
      usleep(100_000)
      device.advance(periods: 800)  // over a second of audio: flowing
    }
    feeder.start()
    let started = MonotonicClock.seconds
    let outcome = try session.run(
      duration: 60, handlers: LiveSession<SimulatedDevicePair>.Handlers())
    let failure = try #require(outcome.failure)
    #expect(failure.kind == .deviceLost)
    #expect(failure.description.contains("no audio for 0.2 s"))
    #expect(MonotonicClock.seconds - started < 10)
  }

  /// A stream that moves is not a stall, however long the job.
  @Test func aMovingStreamIsNotAStall() throws {
    let device = SimulatedDevicePair(periodFrames: 64)
    let session = try session(device)
    session.stallLimit = 0.3
    let feeder = Thread {
      for _ in 0..<100 {
        device.advance(periods: 10)
        usleep(20_000)
      }
    }
    feeder.start()
    let outcome = try session.run(
      duration: Double(800 * 64) / 48_000, handlers: LiveSession<SimulatedDevicePair>.Handlers())
    #expect(outcome.failure == nil)
    #expect(outcome.duration >= Double(800 * 64) / 48_000)
  }

  /// A device lost and a new session on the same processor: one job, whose
  /// stream time and meter carry on, with one summary at the very end.
  @Test func aSessionContinuingAJobCarriesOnItsTimeAndMeter() throws {
    let lostDevice = SimulatedDevicePair(periodFrames: 64)
    let first = try session(lostDevice)
    let feeder = Thread {
      lostDevice.advance(periods: 20)
      lostDevice.waitUntilCompleted(20)
      lostDevice.inject(.deviceLost)
      lostDevice.advance(periods: 1)
    }
    feeder.start()
    var summaries = 0
    var counting = LiveSession<SimulatedDevicePair>.Handlers()
    counting.onEvent = { if case .summary = $0 { summaries += 1 } }
    let lost = try first.run(duration: 60, endsJob: false, handlers: counting)
    #expect(lost.failure?.kind == .deviceLost)
    #expect(summaries == 0)
    // The 20 periods, and the one the fault met if the device delivered it first.
    #expect((Double(20 * 64) / 48_000...Double(21 * 64) / 48_000).contains(lost.duration))

    let backDevice = SimulatedDevicePair(periodFrames: 64, clock: .freeRunning)
    var configuration = DuplexConfiguration(.duplex)
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    let second = try LiveSession(
      configuration: configuration, backend: backDevice, processor: first.processor)
    var finalDuration: Double?
    var totalling = LiveSession<SimulatedDevicePair>.Handlers()
    totalling.onEvent = {
      if case .summary(let totals) = $0 {
        summaries += 1
        finalDuration = totals.duration
      }
    }
    let back = try second.run(duration: Double(60 * 64) / 48_000, handlers: totalling)
    #expect(back.failure == nil)
    #expect(summaries == 1)
    // The meter's own clock spans both sessions.
    #expect((finalDuration ?? 0) >= Double(60 * 64) / 48_000)
  }
}
