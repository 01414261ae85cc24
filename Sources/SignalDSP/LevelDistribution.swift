/// The distribution of a level in dB over a sliding window, kept as a
/// histogram of 0.5 dB bins, so percentiles cost a scan of the bins rather
/// than a sort. The talk detector reads the background's typical level and
/// its spread from it: a low percentile is the noise even while someone
/// talks half the time, and the distance between two low percentiles says
/// how much the noise itself fluctuates (steady hiss: about 1 dB; babble,
/// traffic, music: several).
///
/// Storage is allocated in `init`; `add` and `percentile` are real-time safe.
public struct LevelDistribution: Sendable {
  /// Lowest and highest levels binned, in dB; values outside are clamped.
  public static let range = (low: -140.0, high: 20.0)
  /// Width of a bin in dB.
  public static let binWidth = 0.5
  private var counts: [Int32]
  private var history: [Int16]
  private var next = 0
  /// Values in the window.
  public private(set) var count = 0

  /// - Parameter windowCount: how many of the latest values the distribution holds.
  public init(windowCount: Int) {
    let bins = Int((Self.range.high - Self.range.low) / Self.binWidth) + 1
    counts = [Int32](repeating: 0, count: bins)
    history = [Int16](repeating: -1, count: max(1, windowCount))
  }

  /// Adds a level in dB, dropping the oldest once the window is full.
  public mutating func add(_ decibels: Double) {
    let clamped = min(
      Self.range.high, max(Self.range.low, decibels.isNaN ? Self.range.low : decibels))
    let bin = Int16(((clamped - Self.range.low) / Self.binWidth).rounded())
    let old = history[next]
    if old >= 0 {
      counts[Int(old)] -= 1
    } else {
      count += 1
    }
    history[next] = bin
    counts[Int(bin)] += 1
    next = (next + 1) % history.count
  }

  /// The level below which `fraction` of the window lies (0…1), in dB;
  /// `nil` while the window is empty.
  public func percentile(_ fraction: Double) -> Double? {
    percentiles(fraction, fraction).map(\.low)
  }

  /// Two percentiles (`low` ≤ `high`, fractions 0…1) in one scan of the
  /// bins; `nil` while the window is empty.
  public func percentiles(_ low: Double, _ high: Double) -> (low: Double, high: Double)? {
    guard count > 0 else { return nil }
    let lowTarget = Int32(max(1, (low * Double(count)).rounded(.up)))
    let highTarget = Int32(max(1, (high * Double(count)).rounded(.up)))
    var lowLevel: Double?
    var seen: Int32 = 0
    for bin in 0..<counts.count {
      seen += counts[bin]
      let level = Self.range.low + Double(bin) * Self.binWidth
      if lowLevel == nil && seen >= lowTarget { lowLevel = level }
      if seen >= highTarget { return (lowLevel ?? level, level) }
    }
    return (lowLevel ?? Self.range.high, Self.range.high)
  }
}
