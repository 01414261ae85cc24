import SignalDSP

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

  /// All bits of a Float but its sign.
  private static let magnitudeMask = SIMD8<UInt32>(repeating: 0x7FFF_FFFF)

  /// Samples per chunk of `accumulate`'s chunk peaks.
  public static let peakChunk = 256

  /// Chunk peaks `accumulate` writes for `count` samples.
  public static func chunkCount(forSamples count: Int) -> Int {
    (count + peakChunk - 1) / peakChunk
  }

  /// Adds a block of finite samples; with `chunkPeaks`, also writes the
  /// peak of each `peakChunk` samples of the block (the last chunk may be
  /// shorter) for a peak meter's ballistics — from the same pass.
  public mutating func accumulate(
    _ samples: UnsafeBufferPointer<Float>, chunkPeaks: UnsafeMutablePointer<Float>? = nil
  ) {
    guard let base = samples.baseAddress else { return }
    let count = samples.count
    var index = 0
    var chunk = 0
    var blockPeak: Float = 0
    // Float partial sums over short chunks keep the rounding error far below
    // 0.001 dB; chunks are then added in double precision.
    while index < count {
      let chunkStart = index
      let chunkEnd = min(count, index + Self.peakChunk)
      let vectorEnd = chunkStart + ((chunkEnd - chunkStart) & ~7)
      var peakLanes = SIMD8<Float>(repeating: 0)
      var squareLanes = SIMD8<Float>(repeating: 0)
      while index < vectorEnd {
        let v = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
        // |v| by clearing the sign bits; max and square-add, one instruction each per four lanes.
        let magnitude = unsafeBitCast(
          unsafeBitCast(v, to: SIMD8<UInt32>.self) & Self.magnitudeMask, to: SIMD8<Float>.self)
        peakLanes.replace(with: magnitude, where: magnitude .> peakLanes)
        squareLanes += v * v
        index += 8
      }
      let l = peakLanes
      var chunkPeak = max(
        max(max(l[0], l[1]), max(l[2], l[3])), max(max(l[4], l[5]), max(l[6], l[7])))
      let vectorSum = squareLanes.sum()
      if vectorSum.isFinite {
        sumOfSquares += Double(vectorSum)
      } else {
        // Samples beyond ±1.8e19 overflow a Float square: add this chunk in Double.
        for position in chunkStart..<vectorEnd {
          sumOfSquares += Double(base[position]) * Double(base[position])
        }
      }
      while index < chunkEnd {
        let v = base[index]
        chunkPeak = max(chunkPeak, abs(v))
        sumOfSquares += Double(v) * Double(v)
        index += 1
      }
      blockPeak = max(blockPeak, chunkPeak)
      chunkPeaks?[chunk] = chunkPeak
      chunk += 1
    }
    peak = max(peak, blockPeak)
    sampleCount += count
  }
}
