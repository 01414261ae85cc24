/// Finds the value of a given rank among non-negative numbers (powers)
/// without sorting them and without branching on their values: each pass
/// splits the candidates around a pivot into a second buffer, from both
/// ends at once, so no store waits for the one before it and no branch
/// depends on noise. Safe on any thread; touches only the buffers given.
package enum RankSelection {
  /// The value that `rank` values of `values[0..<count]` lie below or at
  /// (the `rank`-th smallest, from 0). `first` and `second` each hold
  /// `count` values of scratch space. Values must not be negative or NaN.
  package static func value(
    ofRank rank: Int, in values: UnsafePointer<Double>, count: Int,
    first: UnsafeMutablePointer<Double>, second: UnsafeMutablePointer<Double>
  ) -> Double {
    precondition(rank >= 0 && rank < count, "rank outside the values")
    var source = values
    var target = first
    var spare = second
    var count = count
    var rank = rank
    while count > 2 {
      let (a, b, c) = (source[0], source[count / 2], source[count - 1])
      let pivot = min(max(a, b), max(min(a, b), c))
      var lower = split(source, count, into: target, below: pivot)
      var offset = 0
      if rank < lower {
        count = lower
      } else {
        if lower == 0 {
          // Nothing below the pivot, the least value: set its copies apart.
          lower = split(source, count, into: target, below: pivot, orEqual: true)
          if rank < lower { return pivot }
        }
        offset = lower
        count -= lower
        rank -= lower
      }
      source = UnsafePointer(target + offset)
      swap(&target, &spare)
    }
    return count == 1 || rank == 0 ? min(source[0], source[count - 1]) : max(source[0], source[1])
  }

  /// Puts the values below `pivot` (or, `orEqual`, at most `pivot`) first
  /// in `target`, the rest after; returns how many went first.
  @inline(__always)
  private static func split(
    _ source: UnsafePointer<Double>, _ count: Int, into target: UnsafeMutablePointer<Double>,
    below pivot: Double, orEqual: Bool = false
  ) -> Int {
    var lower = 0
    // The next free place from the end, moving down (no overflow checks).
    var top = target + (count &- 1)
    for index in 0..<count {
      let value = source[index]
      // For non-negative doubles the bit patterns order as the values: the
      // sign bit of their difference is the comparison.
      let isFirst =
        orEqual
        ? 1 &- Int((pivot.bitPattern &- value.bitPattern) >> 63)
        : Int((value.bitPattern &- pivot.bitPattern) >> 63)
      target[lower] = value
      top.pointee = value
      lower &+= isFirst
      top -= 1 &- isFirst
    }
    return lower
  }
}
