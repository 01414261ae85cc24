import Foundation
import Testing

@testable import SignalDSP

/// The selection behind the noise-floor estimate: the same value sorting
/// would give, for any rank, with ties, zeros and tiny sets.
@Suite struct RankSelectionTests {
  func selected(_ values: [Double], rank: Int) -> Double {
    let first = UnsafeMutablePointer<Double>.allocate(capacity: values.count)
    let second = UnsafeMutablePointer<Double>.allocate(capacity: values.count)
    defer {
      first.deallocate()
      second.deallocate()
    }
    return values.withUnsafeBufferPointer {
      RankSelection.value(
        ofRank: rank, in: $0.baseAddress!, count: values.count, first: first, second: second)
    }
  }

  @Test func everyRankEqualsTheSortedValue() {
    var generator = SystemRandomNumberGenerator()
    for trial in 0..<400 {
      let count = 1 + trial % 90
      // Every fourth set is drawn from a few values only: ties everywhere.
      let values = (0..<count).map { _ in
        trial % 4 == 0
          ? Double(Int.random(in: 0...3, using: &generator))
          : -log(Double.random(in: 1e-12...1, using: &generator))
      }
      let sorted = values.sorted()
      for rank in 0..<count {
        #expect(selected(values, rank: rank) == sorted[rank], "set \(trial), rank \(rank)")
      }
    }
  }

  @Test func allEqualValuesAndZerosEnd() {
    #expect(selected([Double](repeating: 0, count: 62), rank: 18) == 0)
    #expect(selected([Double](repeating: 2.5, count: 7), rank: 6) == 2.5)
    #expect(selected([0, 0, 0, 1e-300, 0], rank: 4) == 1e-300)
    #expect(selected([.infinity, 1, 0], rank: 2) == .infinity)
  }
}
