import FeedbackControl
import SignalDSP
import TestSupport
import Testing

/// An exponential sweep measures a loop well enough to read its limit.
@Suite struct SweepMeasurementTests {
  /// A sweep through a known response and back gives the response's limit.
  @Test(.slow) func aSweepMeasuresAResponse() throws {
    let rate = 48_000.0
    let sweep = ExponentialSweep(sampleRate: rate, duration: 1)
    var response = [Float](repeating: 0, count: 2000)
    response[300] = 0.4
    response[1100] = -0.15
    response[1700] = 0.05
    var recording = [Float](repeating: 0, count: sweep.samples.count + 4000)
    for (n, x) in sweep.samples.enumerated() {
      for (k, h) in response.enumerated() where h != 0 { recording[n + k] += x * h }
    }
    let measured = sweep.impulseResponse(from: recording, length: 4000)
    let truth = try #require(LoopStability.analyze(impulseResponse: response, sampleRate: rate))
    let found = try #require(LoopStability.analyze(impulseResponse: measured, sampleRate: rate))
    #expect(abs(found.maximumStableGain - truth.maximumStableGain) < 0.1)
    // Nothing where the response has nothing.
    #expect(measured[2500..<4000].map { abs($0) }.max()! < 0.01)
  }
}
