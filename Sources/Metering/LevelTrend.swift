/// The straight line that best fits a level in dB over a sliding window of
/// frames, and how far the level strays from it: the talk detector's test
/// for a noise that swells or fades smoothly (traffic passing, a machine
/// spinning up). Such a level drifts by several dB a second yet keeps
/// within a dB or two of its own trend, while speech strays from any line
/// by 10 dB and more within a second.
///
/// Least squares from running sums (updated in O(1) a frame and summed
/// afresh once per window against rounding drift). Storage is allocated in
/// `init`; `add` and the readers are real-time safe. One caller at a time.
struct LevelTrend: Sendable {
  private var window: [Double]
  private var next = 0
  /// Levels in the window (at most `window.count`).
  private(set) var count = 0
  /// Σx, Σx² and Σ i·x over the window, `i` counting from the oldest.
  private var sum = 0.0
  private var sumOfSquares = 0.0
  private var weightedSum = 0.0
  private var framesSinceExactSum = 0

  /// - Parameter windowCount: how many of the latest levels the line fits.
  init(windowCount: Int) {
    window = [Double](repeating: 0, count: max(3, windowCount))
  }

  /// Whether the window holds `windowCount` levels.
  var isFull: Bool { count == window.count }

  /// Adds a level in dB, dropping the oldest once the window is full.
  mutating func add(_ decibels: Double) {
    let value = decibels.isFinite ? decibels : LevelDistribution.range.low
    if isFull {
      let oldest = window[next]
      weightedSum += -(sum - oldest) + Double(count - 1) * value
      sum += value - oldest
      sumOfSquares += value * value - oldest * oldest
    } else {
      weightedSum += Double(count) * value
      sum += value
      sumOfSquares += value * value
      count += 1
    }
    window[next] = value
    next = next + 1 == window.count ? 0 : next + 1
    framesSinceExactSum += 1
    if framesSinceExactSum >= window.count { sumAfresh() }
  }

  /// The fitted line's level at the newest frame and the standard deviation
  /// of the levels around the line, in dB; `nil` before three levels.
  var fit: (level: Double, deviation: Double)? {
    guard count >= 3 else { return nil }
    let n = Double(count)
    let meanIndex = (n - 1) / 2
    let indexSpread = n * (n * n - 1) / 12
    let covariance = weightedSum - meanIndex * sum
    let slope = covariance / indexSpread
    let squaredError =
      sumOfSquares - sum * sum / n - covariance * covariance / indexSpread
    let level = sum / n + slope * (n - 1 - meanIndex)
    return (level, (max(0, squaredError) / n).squareRoot())
  }

  private mutating func sumAfresh() {
    framesSinceExactSum = 0
    sum = 0
    sumOfSquares = 0
    weightedSum = 0
    for age in 0..<count {
      // The oldest level sits at `next` once the window is full.
      let slot = (next - count + age + window.count) % window.count
      let value = window[slot]
      sum += value
      sumOfSquares += value * value
      weightedSum += Double(age) * value
    }
  }
}
