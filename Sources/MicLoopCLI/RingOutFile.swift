import MicLoopKit
import SignalDSP

/// `loopback --ring-out FILE`: the loop's measured impulse response read
/// and made into the guard's ring-out plan. Control thread.
enum RingOutFile {
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
    guard
      let plan = RingOutPlan(
        impulseResponse: response.samples, sampleRate: Double(response.rate),
        lowest: band.lowerBound, highest: band.upperBound, settings: settings)
    else {
      throw CommandFailure(
        message:
          "\(path): no frequency where this loop can ring; give the loop's impulse response (micloop latency --save-ir \(path))"
      )
    }
    return (plan, response.rate)
  }
}
