import SignalDSP

/// Accumulates the peak and the mean square of a run of samples.
///
/// Peak is the largest |x|; RMS is √(Σx² / n) over every sample, as
/// `sox -n stats` reports them ("Pk lev dB", "RMS lev dB"). The caller
/// feeds contiguous blocks of one channel.
///
/// Samples are summed in chunks of `peakChunk`, counted from the first
/// sample (or the last `endChunk`), not from the start of each block: a
/// chunk a block leaves open stays open for the next, and every sample
/// goes to the lane of its place in its chunk. So the levels, and the
/// chunk peaks a peak meter reads, are the same bits however the samples
/// are cut into blocks. No allocation; real-time safe; one caller at a time.
public struct LevelAccumulator: Sendable {
  /// Peak of the chunks ended so far.
  private var endedPeak: Float = 0
  /// Sum of squares of the chunks ended so far.
  private var endedSum: Double = 0
  /// Samples accumulated.
  public private(set) var sampleCount: Int = 0
  /// The open chunk: each lane's peak and Float sum of squares, lane k
  /// holding the samples at places k, k + 8, … of the chunk.
  private var peakLanes = SIMD8<Float>(repeating: 0)
  private var squareLanes = SIMD8<Float>(repeating: 0)
  /// Squares of the open chunk's samples too large for a Float square, in double precision.
  private var spill: Double = 0
  /// Samples in the open chunk.
  public private(set) var openChunkLength = 0

  public init() {}

  /// Largest absolute sample value seen.
  public var peak: Float { max(endedPeak, Self.largest(peakLanes)) }

  /// Sum of squared samples, kept in double precision.
  public var sumOfSquares: Double { endedSum + Double(squareLanes.sum()) + spill }

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
    endChunk()
    endedPeak = max(endedPeak, other.peak)
    endedSum += other.sumOfSquares
    sampleCount += other.sampleCount
  }

  /// Samples per chunk of `accumulate`'s chunk peaks.
  public static let peakChunk = 256

  /// The most chunk peaks `accumulate` writes for `count` samples.
  public static func chunkCount(forSamples count: Int) -> Int {
    (count + peakChunk - 1) / peakChunk
  }

  /// Adds a block of finite samples; with `chunkPeaks`, also writes the
  /// peak of each chunk of `peakChunk` samples the block completes, for a
  /// peak meter's ballistics — from the same pass.
  /// - Returns: the chunk peaks written (chunks completed).
  @discardableResult
  public mutating func accumulate(
    _ samples: UnsafeBufferPointer<Float>, chunkPeaks: UnsafeMutablePointer<Float>? = nil
  ) -> Int {
    guard let base = samples.baseAddress else { return 0 }
    let count = samples.count
    var index = 0
    var written = 0
    while index < count {
      // This block's part of the open chunk.
      let partStart = index
      let partEnd = min(count, index + Self.peakChunk - openChunkLength)
      let squaresBefore = squareLanes
      // Single samples up to a place that is a multiple of 8, then eight at a time.
      while index < partEnd && (openChunkLength + index - partStart) & 7 != 0 {
        addToLane(base[index], lane: (openChunkLength + index - partStart) & 7)
        index += 1
      }
      while index + 8 <= partEnd {
        let v = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
        // |v| by clearing the sign bits; max and square-add, one instruction each per four lanes.
        let magnitude = v.magnitudes
        peakLanes.replace(with: magnitude, where: magnitude .> peakLanes)
        squareLanes += v * v
        index += 8
      }
      while index < partEnd {
        addToLane(base[index], lane: (openChunkLength + index - partStart) & 7)
        index += 1
      }
      if !squareLanes.sum().isFinite {
        // Samples beyond ±1.8e19 overflow a Float square: add this part in double precision.
        squareLanes = squaresBefore
        for position in partStart..<partEnd {
          spill += Double(base[position]) * Double(base[position])
        }
      }
      openChunkLength += partEnd - partStart
      if openChunkLength == Self.peakChunk {
        let chunkPeak = closeChunk()
        chunkPeaks?[written] = chunkPeak
        written += 1
      }
    }
    sampleCount += count
    return written
  }

  /// Ends the open chunk (at the end of a metering interval, say), adding
  /// it to the totals; returns its peak (0 when none was open; its length
  /// was `openChunkLength`). The next sample starts a chunk.
  @discardableResult
  public mutating func endChunk() -> Float { closeChunk() }

  /// `endChunk`, inlined in the pass over the samples.
  @inline(__always)
  private mutating func closeChunk() -> Float {
    let chunkPeak = Self.largest(peakLanes)
    endedPeak = max(endedPeak, chunkPeak)
    endedSum += Double(squareLanes.sum())
    endedSum += spill
    peakLanes = SIMD8(repeating: 0)
    squareLanes = SIMD8(repeating: 0)
    spill = 0
    openChunkLength = 0
    return chunkPeak
  }

  @inline(__always)
  private mutating func addToLane(_ v: Float, lane: Int) {
    peakLanes[lane] = max(peakLanes[lane], abs(v))
    squareLanes[lane] += v * v
  }

  private static func largest(_ l: SIMD8<Float>) -> Float {
    max(max(max(l[0], l[1]), max(l[2], l[3])), max(max(l[4], l[5]), max(l[6], l[7])))
  }
}
