/// Accumulates the peak and the mean square of a run of samples.
///
/// Peak is the largest |x|; RMS is √(Σx² / n) over every sample, as
/// `sox -n stats` reports them ("Pk lev dB", "RMS lev dB"). The caller
/// feeds contiguous blocks of one channel. No allocation; real-time safe.
public struct LevelAccumulator: Sendable {
  /// Largest absolute sample value seen.
  public private(set) var peak: Float = 0
  /// Sum of squared samples, kept in double precision.
  public private(set) var sumOfSquares: Double = 0
  /// Samples accumulated.
  public private(set) var sampleCount: Int = 0

  public init() {}

  /// Peak level in dBFS, or `nil` for silence or no samples.
  public var peakDecibels: Double? { Decibels.fromAmplitude(Double(peak)) }

  /// Mean square of the samples (0 when empty).
  public var meanSquare: Double {
    sampleCount > 0 ? sumOfSquares / Double(sampleCount) : 0
  }

  /// RMS level in dBFS (sox convention), or `nil` for silence or no samples.
  public var rmsDecibels: Double? { Decibels.fromPower(meanSquare) }

  /// Forgets everything accumulated.
  public mutating func reset() { self = LevelAccumulator() }

  /// Adds another accumulator's samples to this one.
  public mutating func merge(_ other: LevelAccumulator) {
    peak = max(peak, other.peak)
    sumOfSquares += other.sumOfSquares
    sampleCount += other.sampleCount
  }

  /// Adds a block of finite samples.
  public mutating func accumulate(_ samples: UnsafeBufferPointer<Float>) {
    guard let base = samples.baseAddress else { return }
    let count = samples.count
    var index = 0
    var peakLanes = SIMD8<Float>(repeating: 0)
    // Float partial sums over short chunks keep the rounding error far below
    // 0.001 dB; chunks are then added in double precision.
    let chunk = 1024
    while index + 8 <= count {
      let chunkStart = index
      let chunkEnd = min(count, index + chunk) & ~7
      var squareLanes = SIMD8<Float>(repeating: 0)
      while index < chunkEnd {
        let v = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
        let magnitude = v.replacing(with: -v, where: v .< 0)
        peakLanes.replace(with: magnitude, where: magnitude .> peakLanes)
        squareLanes += v * v
        index += 8
      }
      let chunkSum = squareLanes.sum()
      if chunkSum.isFinite {
        sumOfSquares += Double(chunkSum)
      } else {
        // Samples beyond ±1.8e19 overflow a Float square: add this chunk in Double.
        for position in chunkStart..<chunkEnd {
          sumOfSquares += Double(base[position]) * Double(base[position])
        }
      }
    }
    var peakValue = peakLanes.max()
    while index < count {
      let v = base[index]
      peakValue = max(peakValue, abs(v))
      sumOfSquares += Double(v) * Double(v)
      index += 1
    }
    peak = max(peak, peakValue)
    sampleCount += count
  }
}
