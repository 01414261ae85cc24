#if canImport(Glibc)
  import Glibc
#endif

/// Loudness blocks (as mean-square energies) counted in bins of 0.01 LU
/// from −70 to +30 LUFS, with the exact sum of the energies in each bin:
/// the gated means of BS.1770 and the percentiles of EBU Tech 3342 from
/// fixed memory, for any length of programme. Blocks below −70 LUFS (the
/// absolute gate) are not counted. Allocated in `init`; `add` is real-time safe.
struct LoudnessHistogram {
  static let lowest = -70.0
  static let binsPerLU = 100.0
  static let binCount = 10_000
  private var counts: [Int]
  private var sums: [Double]
  private(set) var total = 0

  init() {
    counts = Array(repeating: 0, count: Self.binCount)
    sums = Array(repeating: 0, count: Self.binCount)
  }

  /// The energy of a loudness (LUFS) and back.
  static func energy(_ loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }
  static func loudness(_ energy: Double) -> Double { -0.691 + 10 * log10(energy) }

  mutating func add(_ energy: Double) {
    guard energy >= Self.energy(Self.lowest) else { return }
    let position = (Self.loudness(energy) - Self.lowest) * Self.binsPerLU
    let bin = min(Self.binCount - 1, Int(position))
    counts[bin] += 1
    sums[bin] += energy
    total += 1
  }

  /// The first bin whose blocks are all at or above `energy` (to within a bin).
  private func firstBin(atLeast energy: Double) -> Int {
    guard energy > Self.energy(Self.lowest) else { return 0 }
    let position = (Self.loudness(energy) - Self.lowest) * Self.binsPerLU
    return min(Self.binCount, max(0, Int(position.rounded())))
  }

  /// Mean energy of the blocks at or above `energy`, and how many there are.
  func mean(atLeast energy: Double) -> (mean: Double, count: Int) {
    var sum = 0.0
    var count = 0
    for bin in firstBin(atLeast: energy)..<Self.binCount where counts[bin] > 0 {
      sum += sums[bin]
      count += counts[bin]
    }
    return (count > 0 ? sum / Double(count) : 0, count)
  }

  /// Integrated loudness (BS.1770-4): the mean of the blocks above the
  /// absolute gate, then of those within 10 LU of that mean.
  func gatedLoudness(relativeGate: Double) -> Double? {
    let ungated = mean(atLeast: 0)
    guard ungated.count > 0 else { return nil }
    let gated = mean(atLeast: ungated.mean * pow(10, relativeGate / 10))
    return gated.count > 0 ? Self.loudness(gated.mean) : nil
  }

  /// Loudness range (EBU Tech 3342): of the blocks within 20 LU of their
  /// mean, the 95th minus the 10th percentile.
  func range() -> Double? {
    let ungated = mean(atLeast: 0)
    guard ungated.count > 0 else { return nil }
    let start = firstBin(atLeast: ungated.mean * 0.01)
    var count = 0
    for bin in start..<Self.binCount { count += counts[bin] }
    guard count > 0 else { return nil }
    let low = Int((Double(count - 1) * 0.10).rounded())
    let high = Int((Double(count - 1) * 0.95).rounded())
    var seen = 0
    var lowLoudness: Double?
    for bin in start..<Self.binCount where counts[bin] > 0 {
      seen += counts[bin]
      let loudness = Self.loudness(sums[bin] / Double(counts[bin]))
      if lowLoudness == nil && seen > low { lowLoudness = loudness }
      if seen > high { return loudness - (lowLoudness ?? loudness) }
    }
    return nil
  }
}
