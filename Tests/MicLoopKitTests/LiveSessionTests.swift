import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import Testing

@Suite struct LiveSessionTests {
  func session(_ device: SimulatedDevicePair) throws -> LiveSession<SimulatedDevicePair> {
    var configuration = DuplexConfiguration()
    configuration.isInputEnabled = true
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
    session.stallLimit = 0.3
    let outcome = try session.run(
      duration: 60, recorder: nil, shouldStop: { false }, onEvent: { _ in })
    let failure = try #require(outcome.failure)
    #expect(failure.kind == .deviceLost)
    #expect(failure.device == "sim:mic")
    #expect(failure.description.contains("no audio for 0.3 s"))
    #expect(failure.description.contains("sound server may have stopped"))
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
      duration: Double(800 * 64) / 48_000, recorder: nil, shouldStop: { false }, onEvent: { _ in })
    #expect(outcome.failure == nil)
    #expect(outcome.duration >= Double(800 * 64) / 48_000)
  }
}
