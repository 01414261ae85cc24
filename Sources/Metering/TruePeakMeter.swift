internal import CVectorKernels

#if canImport(Glibc)
  import Glibc
#endif

/// True peak per ITU-R BS.1770-4 annex 2 for one channel: the largest
/// magnitude of the signal oversampled 4× (2× from 96 kHz, not at all from
/// 192 kHz) by a Hann-windowed sinc interpolator of 12 taps per phase plus
/// one (49 taps at 4×, the length libebur128 uses, so that the two agree),
/// and never less than the sample peak.
///
/// Runs of 32 samples whose own peak, times the most any interpolated
/// value can exceed its neighbours (the largest sum of a phase's tap
/// magnitudes), stays below the true peak found so far cannot raise it and
/// are not interpolated. Buffers are allocated in `init`; `process` is
/// real-time safe. One caller at a time.
public final class TruePeakMeter {
  /// Oversampling factor: 4, 2 or 1.
  public let factor: Int
  /// Largest true peak so far (linear).
  public private(set) var peak: Float = 0
  /// Taps per phase (the last is zero except in phase 0).
  static let tapsPerPhase = 13
  /// `coefficients[k]` holds tap k of every phase, one lane per phase.
  private let coefficients: [SIMD4<Float>]
  private let overshoot: Float
  /// The last `tapsPerPhase − 1` samples, then the block being measured.
  private let buffer: UnsafeMutablePointer<Float>
  private let capacity: Int

  public init(sampleRate: Double, maximumBlock: Int) {
    let factor = sampleRate < 96_000 ? 4 : sampleRate < 192_000 ? 2 : 1
    self.factor = factor
    let taps = Self.tapsPerPhase
    // An odd length centred on a sample: phase 0 passes the samples through.
    let length = (taps - 1) * factor + 1
    let centre = Double(length - 1) / 2
    var prototype = (0..<(taps * factor)).map { index -> Double in
      guard index < length else { return 0 }
      let t = (Double(index) - centre) / Double(factor)
      let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
      return sinc * 0.5 * (1 - cos(2 * Double.pi * Double(index) / Double(length - 1)))
    }
    if factor == 1 { prototype = [1] + Array(repeating: 0, count: taps - 1) }
    var lanes = [SIMD4<Float>](repeating: .zero, count: taps)
    var worst: Float = 1
    for phase in 0..<factor {
      let tapsOfPhase = (0..<taps).map { prototype[phase + $0 * factor] }
      for k in 0..<taps { lanes[k][phase] = Float(tapsOfPhase[k]) }
      worst = max(worst, Float(tapsOfPhase.map { Swift.abs($0) }.reduce(0, +)))
    }
    coefficients = lanes
    overshoot = worst * 1.001
    capacity = maximumBlock + taps - 1
    buffer = .allocate(capacity: capacity)
    buffer.initialize(repeating: 0, count: capacity)
  }

  deinit { buffer.deallocate() }

  /// Measures `count` samples read `stride` apart from `samples` (at most
  /// `maximumBlock`).
  public func process(_ samples: UnsafePointer<Float>, count: Int, stride: Int) {
    let history = Self.tapsPerPhase - 1
    precondition(count <= capacity - history)
    for index in 0..<count { buffer[history + index] = samples[index * stride] }
    var start = 0
    while start < count {
      let end = min(count, start + Self.run)
      // Values between samples start and end depend on the run and the
      // `history` samples before it (from this call or the last), so a run
      // is skipped only when none of those could raise the peak: whatever
      // the cut into calls, the peak is the largest value of all.
      let reach = vk_largest_magnitude(buffer + start, history + end - start)
      if reach * overshoot > peak { interpolate(from: start, to: end) }
      start = end
    }
    buffer.update(from: buffer + count, count: history)
  }

  /// Samples per run checked for skipping (at least the history).
  private static let run = 32

  private func interpolate(from start: Int, to end: Int) {
    let taps = Self.tapsPerPhase
    let newest = taps - 1
    var largest = SIMD4<Float>(repeating: peak)
    for index in start..<end {
      var sum = SIMD4<Float>(repeating: 0)
      for k in 0..<taps { sum += coefficients[k] * buffer[index + newest - k] }
      let size = sum.magnitudes
      largest = largest.replacing(with: size, where: size .> largest)
      let sample = abs(buffer[index + newest])
      if sample > largest[0] { largest[0] = sample }
    }
    peak = max(peak, largest.max())
  }
}
