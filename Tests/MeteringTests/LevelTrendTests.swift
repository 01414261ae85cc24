import Testing

@testable import Metering

/// The straight-line fit the talk detector tells swells with.
@Suite struct LevelTrendTests {
  @Test func aLineIsFittedExactlyWithNoDeviation() throws {
    var trend = LevelTrend(windowCount: 50)
    for frame in 0..<120 { trend.add(-60 + 0.03 * Double(frame)) }
    let fit = try #require(trend.fit)
    #expect(abs(fit.level - (-60 + 0.03 * 119)) < 1e-6, "\(fit.level)")
    #expect(fit.deviation < 1e-4, "\(fit.deviation)")
  }

  @Test func theDeviationIsTheScatterAroundTheLine() throws {
    var trend = LevelTrend(windowCount: 200)
    // ±1 dB alternating around a rising line: one standard deviation of 1 dB.
    for frame in 0..<1_000 {
      trend.add(-50 + 0.02 * Double(frame) + (frame % 2 == 0 ? 1 : -1))
    }
    let fit = try #require(trend.fit)
    #expect(abs(fit.deviation - 1) < 0.01, "\(fit.deviation)")
    #expect(abs(fit.level - (-50 + 0.02 * 999)) < 0.1, "\(fit.level)")
  }

  @Test func theRunningSumsAgreeWithAFitOfTheWindowAlone() throws {
    var trend = LevelTrend(windowCount: 64)
    var window: [Double] = []
    var state: UInt64 = 7
    for _ in 0..<10_000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let value = -80 + Double(state >> 40) / Double(1 << 24) * 60
      trend.add(value)
      window.append(value)
      if window.count > 64 { window.removeFirst() }
    }
    let n = Double(window.count)
    let meanIndex = (n - 1) / 2
    let mean = window.reduce(0, +) / n
    var covariance = 0.0
    var indexSpread = 0.0
    for (index, value) in window.enumerated() {
      covariance += (Double(index) - meanIndex) * (value - mean)
      indexSpread += (Double(index) - meanIndex) * (Double(index) - meanIndex)
    }
    let slope = covariance / indexSpread
    var squaredError = 0.0
    for (index, value) in window.enumerated() {
      let residual = value - (mean + slope * (Double(index) - meanIndex))
      squaredError += residual * residual
    }
    let fit = try #require(trend.fit)
    #expect(abs(fit.level - (mean + slope * (n - 1 - meanIndex))) < 1e-6)
    #expect(abs(fit.deviation - (squaredError / n).squareRoot()) < 1e-6)
  }
}
