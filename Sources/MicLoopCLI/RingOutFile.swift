import DuplexIO
import FeedbackControl
import MicLoopKit
import SignalDSP

/// `loopback --ring-out FILE|measure`: the loop's measured impulse response,
/// read from a file or measured there and then, made into the guard's
/// ring-out plan. Control thread.
enum RingOutFile {
  /// The word that measures the loop instead of reading a file.
  static let measure = "measure"

  /// Measures the loop (the devices, or the simulated `room`) with the
  /// latency probe and plans from its response; `nil` when interrupted.
  static func measured(
    room: String?, configuration: DuplexConfiguration, devices: DeviceOptions,
    settings: HowlGuardSettings
  ) throws -> (plan: RingOutPlan, rate: Int)? {
    let outcome =
      try room.map { try LoopMeasurement.inRoom($0, configuration: configuration) }
      ?? LoopMeasurement.onDevices(configuration: configuration, devices: devices)
    guard let outcome else { return nil }
    let measurement = try LoopMeasurement.result(of: outcome, room: room, devices: devices)
    let plan = try plan(
      measurement.impulseResponse, rate: outcome.granted.sampleRate,
      band: outcome.probe.measuredBand, settings: settings,
      silent:
        "the measured loop has no frequency where it can ring; check that the speaker reaches the microphone (micloop latency)"
    )
    return (plan, outcome.granted.sampleRate)
  }

  static func plan(_ path: String, settings: HowlGuardSettings) throws -> (
    plan: RingOutPlan, rate: Int
  ) {
    let response = try RoomFiles.response(path)
    // Only the band a measurement covers: outside it the file holds noise.
    guard let band = LatencyProbe.measuredBand(sampleRate: response.rate) else {
      throw CommandFailure(
        message:
          "\(path) is \(response.rate) Hz, too low a rate for a loop's response; measure it at the loop's rate (micloop latency --save-ir \(path))"
      )
    }
    let plan = try plan(
      response.samples, rate: response.rate, band: band, settings: settings,
      silent:
        "\(path): no frequency where this loop can ring; give the loop's impulse response (micloop latency --save-ir \(path))"
    )
    return (plan, response.rate)
  }

  /// The plan for a loop's response read in `band` (where it was
  /// measured), or the failure `silent` when the loop cannot ring there.
  private static func plan(
    _ response: [Float], rate: Int, band: ClosedRange<Double>, settings: HowlGuardSettings,
    silent: String
  ) throws -> RingOutPlan {
    guard
      let plan = RingOutPlan(
        impulseResponse: response, sampleRate: Double(rate), lowest: band.lowerBound,
        highest: band.upperBound, settings: settings)
    else { throw CommandFailure(message: silent) }
    return plan
  }
}
