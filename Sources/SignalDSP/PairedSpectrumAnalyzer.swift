internal import CFFTW

#if canImport(Glibc)
  import Glibc
#endif

/// Spectra of frames two at a time: both Hann-windowed into one complex
/// FFTW transform of the frame length (the first as its real part, the
/// second as its imaginary part) and told apart by symmetry,
/// A[k] = (Z[k] + conj Z[N−k]) / 2 and B[k] = (Z[k] − conj Z[N−k]) / 2i.
/// One complex transform costs about what one real transform of the same
/// length does, so each frame costs about half. Each bin's power is worked
/// out at once; a bin's complex value only when asked. A frame's spectrum
/// depends on the frame it shares a transform with in its last bits only:
/// whoever must agree pairs the same frames.
///
/// Owned by one thread at a time; `analyze` and the queries never allocate.
package final class PairedSpectrumAnalyzer {
  package let frameLength: Int
  package let sampleRate: Double
  /// Bins in each spectrum: `frameLength / 2 + 1`.
  package let binCount: Int
  private let binWidth: Double
  private let window: UnsafeMutablePointer<Float>
  private let input: UnsafeMutablePointer<fftwf_complex>
  private let output: UnsafeMutablePointer<fftwf_complex>
  private let plan: fftwf_plan
  /// Both frames' powers, the first's then the second's (`stride` apart:
  /// bins are worked out two at a time, one past the last).
  private let powers: UnsafeMutablePointer<Double>
  private let stride: Int
  private let scratch: UnsafeMutablePointer<Double>
  private let amplitudeScale: Double
  /// The bins whose powers are worked out (the others stay 0): those the
  /// readers of the spectra look at. All unless narrowed.
  package var workedBins: Range<Int> {
    get { bins }
    set { bins = max(0, newValue.lowerBound & ~1)..<min(binCount, newValue.upperBound) }
  }
  // `workedBins`, stored privately so that the optimiser can prove no
  // access to it from another module overlaps the loops reading it (no
  // run-time exclusivity checks there).
  private var bins: Range<Int>

  package init(frameLength: Int, sampleRate: Double) {
    precondition(frameLength >= 8, "a frame needs at least 8 samples")
    self.frameLength = frameLength
    self.sampleRate = sampleRate
    binCount = frameLength / 2 + 1
    bins = 0..<binCount
    binWidth = sampleRate / Double(frameLength)
    // The window of `SpectrumAnalyzer`: the same spectra.
    (window, amplitudeScale) = SpectrumAnalyzer.hannWindow(length: frameLength)
    // One complex value more than the transform: two bins are read at once.
    input = fftwf_alloc_complex(frameLength + 1)!
    output = fftwf_alloc_complex(frameLength + 1)!
    UnsafeMutableRawPointer(input).initializeMemory(
      as: Float.self, repeating: 0, count: 2 * frameLength + 2)
    UnsafeMutableRawPointer(output).initializeMemory(
      as: Float.self, repeating: 0, count: 2 * frameLength + 2)
    stride = binCount + 1
    powers = .allocate(capacity: 2 * stride)
    powers.initialize(repeating: 0, count: 2 * stride)
    scratch = .allocate(capacity: 2 * binCount)
    let (length, input, output) = (Int32(frameLength), input, output)
    plan = SpectrumAnalyzer.makePlan {
      fftwf_plan_dft_1d(length, input, output, FFTW_FORWARD, UInt32(FFTW_ESTIMATE))
    }
  }

  deinit {
    SpectrumAnalyzer.destroyPlan(plan)
    fftwf_free(input)
    fftwf_free(output)
    window.deallocate()
    powers.deallocate()
    scratch.deallocate()
  }

  /// A frame as the two contiguous pieces of a ring it lies in.
  package typealias Frame = (UnsafeBufferPointer<Float>, UnsafeBufferPointer<Float>)

  /// Windows and transforms `first` and `second` (silence when `nil`).
  package func analyze(_ first: Frame, _ second: Frame?) {
    let interleaved = UnsafeMutableRawPointer(input).assumingMemoryBound(to: Float.self)
    // Stretches over which both frames run on in one piece of their rings.
    var start = 0
    while start < frameLength {
      var end = frameLength
      if start < first.0.count { end = first.0.count }
      if let second, start < second.0.count { end = min(end, second.0.count) }
      windowed(
        Self.piece(first, from: start), second.map { Self.piece($0, from: start) },
        from: start, count: end - start, into: interleaved)
      start = end
    }
    fftwf_execute(plan)
    separatePowers()
  }

  /// The spectrum of the first (0) or second (1) frame of the last pair.
  package func spectrum(_ which: Int) -> Spectrum {
    Spectrum(
      frameLength: frameLength, binWidth: binWidth, amplitudeScale: amplitudeScale,
      power: powers + which * stride,
      values: UnsafeRawPointer(output).assumingMemoryBound(to: Float.self), pairing: which,
      scratch: scratch)
  }

  /// The samples of `frame` from `index` on.
  private static func piece(_ frame: Frame, from index: Int) -> UnsafePointer<Float> {
    index < frame.0.count
      ? frame.0.baseAddress! + index : frame.1.baseAddress! + (index - frame.0.count)
  }

  /// Writes `count` samples of each frame from window position `start` on,
  /// times the window, as the real and imaginary parts of complex values:
  /// four at a time.
  private func windowed(
    _ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>?, from start: Int,
    count: Int, into target: UnsafeMutablePointer<Float>
  ) {
    let weights = window + start
    let pairs = target + 2 * start
    var index = 0
    if let second {
      let a = UnsafeRawPointer(first)
      let b = UnsafeRawPointer(second)
      let w = UnsafeRawPointer(weights)
      let out = UnsafeMutableRawPointer(pairs)
      while index &+ 4 <= count {
        let offset = index &* 4
        let weight = w.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
        let x = a.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self) * weight
        let y = b.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self) * weight
        out.storeBytes(
          of: SIMD4(x[0], y[0], x[1], y[1]), toByteOffset: 2 &* offset, as: SIMD4<Float>.self)
        out.storeBytes(
          of: SIMD4(x[2], y[2], x[3], y[3]), toByteOffset: 2 &* offset &+ 16,
          as: SIMD4<Float>.self)
        index &+= 4
      }
    }
    while index < count {
      pairs[2 &* index] = first[index] * weights[index]
      pairs[2 &* index &+ 1] = second.map { $0[index] * weights[index] } ?? 0
      index &+= 1
    }
  }

  /// Each bin's power in both frames, two bins at a time: with Z[k] and
  /// its mirror Z[N−k], 2A[k] = (re + re', im − im') and
  /// 2B[k] = (im + im', re' − re).
  private func separatePowers() {
    let z = UnsafeRawPointer(output)
    let powerA = powers
    let powerB = powers + stride
    let halves = SIMD4<Float>(0.5, -0.5, 0.5, -0.5)
    var bin = workedBins.lowerBound
    while bin < workedBins.upperBound {
      // The mirrors of bins k and k + 1 are N − k and N − k − 1 (bin 0 is its own).
      let here = z.loadUnaligned(fromByteOffset: 8 &* bin, as: SIMD4<Float>.self)
      let mirror: SIMD4<Float>
      if bin == 0 {
        let next = z.loadUnaligned(fromByteOffset: 8 &* (frameLength &- 1), as: SIMD2<Float>.self)
        mirror = SIMD4(here[0], here[1], next[0], next[1])
      } else {
        let there = z.loadUnaligned(
          fromByteOffset: 8 &* (frameLength &- bin &- 1), as: SIMD4<Float>.self)
        mirror = SIMD4(there[2], there[3], there[0], there[1])
      }
      let a = here * 0.5 + mirror * halves
      let b =
        SIMD4(mirror[1], mirror[0], mirror[3], mirror[2]) * 0.5
        + SIMD4(here[1], here[0], here[3], here[2]) * halves
      let a0 = SIMD2<Double>(a.lowHalf)
      let a1 = SIMD2<Double>(a.highHalf)
      let b0 = SIMD2<Double>(b.lowHalf)
      let b1 = SIMD2<Double>(b.highHalf)
      let squares = (a0 * a0, a1 * a1, b0 * b0, b1 * b1)
      powerA[bin] = squares.0[0] + squares.0[1]
      powerA[bin &+ 1] = squares.1[0] + squares.1[1]
      powerB[bin] = squares.2[0] + squares.2[1]
      powerB[bin &+ 1] = squares.3[0] + squares.3[1]
      bin &+= 2
    }
  }
}
