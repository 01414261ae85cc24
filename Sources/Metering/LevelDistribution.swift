/// The distribution of a level in dB over a sliding window, kept as a
/// histogram of 0.5 dB bins, so percentiles cost a scan of the bins rather
/// than a sort. The talk detector reads the background's typical level and
/// its spread from it: a low percentile is the noise even while someone
/// talks half the time, and the distance between two low percentiles says
/// how much the noise itself fluctuates (steady hiss: about 1 dB; babble,
/// traffic, music: several).
///
/// Two percentiles chosen at `init` are kept up to date as values come and
/// go (each `add` moves them by a bin or two), so reading them costs
/// nothing; `percentiles(_:_:)` answers any other pair with a scan.
///
/// Storage is allocated in `init`; `add` and the readers are real-time safe.
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
  private var lowCursor: PercentileCursor
  private var highCursor: PercentileCursor

  /// - Parameters:
  ///   - windowCount: how many of the latest values the distribution holds.
  ///   - tracked: the two percentiles (fractions 0…1) `trackedPercentiles` reads.
  public init(windowCount: Int, tracked: (low: Double, high: Double) = (0.03, 0.15)) {
    let bins = Int((Self.range.high - Self.range.low) / Self.binWidth) + 1
    counts = [Int32](repeating: 0, count: bins)
    history = [Int16](repeating: -1, count: max(1, windowCount))
    lowCursor = PercentileCursor(fraction: tracked.low)
    highCursor = PercentileCursor(fraction: tracked.high)
  }

  /// The two percentiles chosen at `init`, in dB, without a scan; `nil`
  /// while the window is empty.
  public var trackedPercentiles: (low: Double, high: Double)? {
    guard count > 0 else { return nil }
    return (Self.level(ofBin: lowCursor.bin), Self.level(ofBin: highCursor.bin))
  }

  private static func level(ofBin bin: Int) -> Double { range.low + Double(bin) * binWidth }

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
    counts.withUnsafeBufferPointer { counts in
      lowCursor.update(removed: Int(old), added: Int(bin), counts: counts, total: count)
      highCursor.update(removed: Int(old), added: Int(bin), counts: counts, total: count)
    }
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
      let level = Self.level(ofBin: bin)
      if lowLevel == nil && seen >= lowTarget { lowLevel = level }
      if seen >= highTarget { return (lowLevel ?? level, level) }
    }
    return (lowLevel ?? Self.range.high, Self.range.high)
  }
}

/// Where one percentile of a histogram lies: its bin and how many values
/// lie in the bins below it. Follows single additions and removals in a
/// step or two instead of a scan.
private struct PercentileCursor: Sendable {
  let fraction: Double
  /// The bin holding the percentile.
  private(set) var bin = 0
  /// Values in the bins below `bin`.
  private var below: Int32 = 0

  init(fraction: Double) { self.fraction = fraction }

  /// Follows the removal of a value from bin `removed` (negative: none)
  /// and the addition of one to bin `added`, `counts` already updated.
  mutating func update(
    removed: Int, added: Int, counts: UnsafeBufferPointer<Int32>, total: Int
  ) {
    if removed >= 0 && removed < bin { below -= 1 }
    if added < bin { below += 1 }
    // The percentile is the first bin whose cumulative count reaches the rank.
    let rank = Int32(max(1, (fraction * Double(total)).rounded(.up)))
    while below + counts[bin] < rank && bin + 1 < counts.count {
      below += counts[bin]
      bin += 1
    }
    while bin > 0 && below >= rank {
      bin -= 1
      below -= counts[bin]
    }
  }
}
