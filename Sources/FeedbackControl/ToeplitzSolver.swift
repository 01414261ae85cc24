internal import CVectorKernels

/// Levinson's recursion for T x = b, T symmetric Toeplitz with first
/// column `column`, a budgeted number of orders at a time. Each order is
/// two sums and two updates over the vectors so far, four lanes at a time
/// (one 256-bit vector where the processor has them: the same sums, bit
/// for bit, see `CVectorKernels`).
struct ToeplitzSolver {
  /// `column` reversed: `column[order − i]` is `reversedColumn[last − order + i]`.
  private let reversedColumn: [Double]
  private let rightSide: [Double]
  private var forward: [Double]
  private var next: [Double]
  private var solution: [Double]
  private var order = 1
  private var failed = false
  private let usesWideVectors: Bool

  /// - Parameter allowsWideVectors: whether the processor's 256-bit
  ///   vectors may be used where it has them (the solution is the same).
  init(column: [Double], rightSide: [Double], allowsWideVectors: Bool = true) {
    usesWideVectors = allowsWideVectors && vk_has_wide_vectors() != 0
    reversedColumn = column.reversed()
    self.rightSide = rightSide
    let count = column.count
    forward = [Double](repeating: 0, count: count)
    next = [Double](repeating: 0, count: count)
    solution = [Double](repeating: 0, count: count)
    if column[0] != 0 {
      forward[0] = 1 / column[0]
      solution[0] = rightSide[0] / column[0]
    } else {
      failed = true
    }
  }

  /// Runs up to `orders` more orders: `nil` while unfinished, then the
  /// solution (`.some(nil)` when T is singular).
  mutating func advance(orders: Int) -> [Double]?? {
    let count = reversedColumn.count
    var budget = orders
    while order < count && budget > 0 && !failed {
      let error = correlation(forward)
      let denominator = 1 - error * error
      if denominator <= 1e-12 {
        failed = true
        break
      }
      if usesWideVectors {
        Self.nextForwardWide(
          forward, error: error, scale: 1 / denominator, order: order, into: &next)
      } else {
        Self.nextForward(forward, error: error, scale: 1 / denominator, order: order, into: &next)
      }
      swap(&forward, &next)
      let factor = rightSide[order] - correlation(solution)
      if usesWideVectors {
        Self.addReversedWide(forward, times: factor, order: order, to: &solution)
      } else {
        Self.addReversed(forward, times: factor, order: order, to: &solution)
      }
      order += 1
      budget -= 1
    }
    if failed { return .some(nil) }
    return order >= count ? .some(solution) : nil
  }

  /// The sum of `column[order − i] · vector[i]` over `i < order`, in four
  /// lanes added at the end.
  private func correlation(_ vector: [Double]) -> Double {
    let order = order
    let start = reversedColumn.count - 1 - order
    return reversedColumn.withUnsafeBufferPointer { column in
      vector.withUnsafeBufferPointer { vector in
        let column = column.baseAddress! + start
        let vector = vector.baseAddress!
        if usesWideVectors { return vk_dot_lanes4_wide(column, vector, order) }
        var sums = SIMD4<Double>()
        var index = 0
        while index + 4 <= order {
          sums += Self.lanes(column + index) * Self.lanes(vector + index)
          index += 4
        }
        while index < order {
          sums[0] += column[index] * vector[index]
          index += 1
        }
        return (sums[0] + sums[1]) + (sums[2] + sums[3])
      }
    }
  }

  /// The forward vector of order `order + 1` from that of `order`, whose
  /// backward vector is it reversed (T is symmetric):
  /// `next[i] = (forward[i] − error · forward[order − i]) · scale`.
  private static func nextForward(
    _ forward: [Double], error: Double, scale: Double, order: Int, into next: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      next.withUnsafeMutableBufferPointer { next in
        let forward = forward.baseAddress!
        let next = next.baseAddress!
        next[0] = forward[0] * scale
        var index = 1
        while index + 4 <= order {
          let backward = reversedLanes(forward + (order - index - 3))
          store((lanes(forward + index) - error * backward) * scale, at: next + index)
          index += 4
        }
        while index < order {
          next[index] = (forward[index] - error * forward[order - index]) * scale
          index += 1
        }
        next[order] = -error * forward[0] * scale
      }
    }
  }

  /// `solution[i] += factor · forward[order − i]` for `i` in `0...order`.
  private static func addReversed(
    _ forward: [Double], times factor: Double, order: Int, to solution: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      solution.withUnsafeMutableBufferPointer { solution in
        let forward = forward.baseAddress!
        let solution = solution.baseAddress!
        var index = 0
        while index + 4 <= order + 1 {
          let backward = reversedLanes(forward + (order - index - 3))
          store(lanes(solution + index) + factor * backward, at: solution + index)
          index += 4
        }
        while index <= order {
          solution[index] += factor * forward[order - index]
          index += 1
        }
      }
    }
  }

  /// `nextForward` in 256-bit vectors.
  private static func nextForwardWide(
    _ forward: [Double], error: Double, scale: Double, order: Int, into next: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      next.withUnsafeMutableBufferPointer { next in
        vk_next_forward_wide(forward.baseAddress!, error, scale, order, next.baseAddress!)
      }
    }
  }

  /// `addReversed` in 256-bit vectors.
  private static func addReversedWide(
    _ forward: [Double], times factor: Double, order: Int, to solution: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      solution.withUnsafeMutableBufferPointer { solution in
        vk_add_reversed_wide(forward.baseAddress!, factor, order, solution.baseAddress!)
      }
    }
  }

  @inline(__always) private static func lanes(_ pointer: UnsafePointer<Double>) -> SIMD4<Double> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Double>.self)
  }

  @inline(__always) private static func lanes(_ pointer: UnsafeMutablePointer<Double>)
    -> SIMD4<Double>
  {
    lanes(UnsafePointer(pointer))
  }

  /// `pointer[3], pointer[2], pointer[1], pointer[0]` (the learner's
  /// whitening reads its lags so too).
  @inline(__always) static func reversedLanes(_ pointer: UnsafePointer<Double>)
    -> SIMD4<Double>
  {
    let values = lanes(pointer)
    return SIMD4(values[3], values[2], values[1], values[0])
  }

  /// Four lanes stored at `pointer` (also the learner's).
  @inline(__always) static func store(
    _ values: SIMD4<Double>, at pointer: UnsafeMutablePointer<Double>
  ) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: values, as: SIMD4<Double>.self)
  }
}
