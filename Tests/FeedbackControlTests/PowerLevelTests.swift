import Foundation
import Testing

@testable import FeedbackControl

/// The detector's own decibels against the C library's, over every power a
/// spectrum bin can hold.
@Suite struct PowerLevelTests {
  @Test func decibelsAgreeWithLog10FromTinyToHugePowers() {
    var worst: Float = 0
    var power: Float = 1e-37
    while power < 1e37 {
      for step: Float in [1, 1.1, 1.4142135, 1.5, 1.9999, 3.7, 7.1] {
        let value = power * step
        let error = abs(PowerLevel.decibels(value) - Float(10 * log10(Double(value))))
        worst = max(worst, error)
      }
      power *= 10
    }
    #expect(worst < 1e-4, "worst error \(worst) dB")
  }

  @Test func exactPowersOfTenAreWholeDecibels() {
    #expect(PowerLevel.decibels(1) == 0)
    #expect(abs(PowerLevel.decibels(100) - 20) < 1e-5)
    #expect(abs(PowerLevel.decibels(1e-30) - -300) < 1e-3)
  }
}
