/// Averages each run of `factor` samples into one output sample.
///
/// For the talk detector this is all the anti-alias filtering needed: the
/// mean of `factor` independent noise samples is again white noise with the
/// same density per hertz, so the in-band signal-to-noise ratio matches a
/// sharp low-pass, while the cost is one addition per input sample.
/// Real-time safe; state carries across blocks of any size.
public struct BoxcarDecimator: Sendable {
  /// Input samples per output sample.
  public let factor: Int
  private let scale: Float
  private var partialSum: Float = 0
  private var partialCount = 0

  public init(factor: Int) {
    precondition(factor >= 1)
    self.factor = factor
    scale = 1 / Float(factor)
  }

  /// The most outputs one call can produce for `inputCount` samples.
  public func maximumOutputCount(forInput inputCount: Int) -> Int { inputCount / factor + 1 }

  /// Decimates `input` into `output`; returns the number of samples written.
  public mutating func process(
    _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>
  )
    -> Int
  {
    guard let base = input.baseAddress else { return 0 }
    let count = input.count
    var produced = 0
    var index = 0
    // Finish the run left open by the previous block.
    while partialCount > 0 && index < count {
      partialSum += base[index]
      partialCount += 1
      index += 1
      if partialCount == factor {
        output[produced] = partialSum * scale
        produced += 1
        partialSum = 0
        partialCount = 0
      }
    }
    let runs = (count - index) / factor
    let start = base + index
    let target = output + produced
    // Literal factors let the compiler unroll the inner sum.
    switch factor {
    case 6: Self.averageRuns(start, target, runs: runs, factor: 6, scale: scale)
    case 5: Self.averageRuns(start, target, runs: runs, factor: 5, scale: scale)
    case 4: Self.averageRuns(start, target, runs: runs, factor: 4, scale: scale)
    case 3: Self.averageRuns(start, target, runs: runs, factor: 3, scale: scale)
    case 2: Self.averageRuns(start, target, runs: runs, factor: 2, scale: scale)
    default: Self.averageRuns(start, target, runs: runs, factor: factor, scale: scale)
    }
    produced += runs
    index += runs * factor
    while index < count {
      partialSum += base[index]
      partialCount += 1
      index += 1
    }
    return produced
  }

  @inline(__always)
  private static func averageRuns(
    _ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, runs: Int, factor: Int,
    scale: Float
  ) {
    for run in 0..<runs {
      let first = input + run * factor
      var sum: Float = 0
      for k in 0..<factor { sum += first[k] }
      output[run] = sum * scale
    }
  }
}
