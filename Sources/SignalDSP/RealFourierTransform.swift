internal import CFFTW

/// A real-to-complex and complex-to-real FFTW transform pair of one size,
/// planned once in `init` (under the module's planner lock), with buffers of
/// its own: write samples into `real` and call `forward` to get
/// `binCount` complex values in `complex` (real and imaginary parts in
/// turn), or write those and call `inverse` to get `size` samples back,
/// scaled by `size` (FFTW's unnormalised convention). `inverse` overwrites
/// `complex`.
///
/// For convolution and offline analysis (impulse responses, loop
/// responses). Owned by one thread at a time; `forward` and `inverse`
/// never allocate, so they may run on the audio thread.
public final class RealFourierTransform: @unchecked Sendable {
  /// Samples in a frame.
  public let size: Int
  /// Complex values in a spectrum: `size / 2 + 1`.
  public let binCount: Int
  /// `size` samples: the forward transform's input, the inverse's output.
  public let real: UnsafeMutablePointer<Float>
  /// `2 × binCount` values: the forward transform's output, the inverse's input.
  public let complex: UnsafeMutablePointer<Float>
  private let forwardPlan: fftwf_plan
  private let inversePlan: fftwf_plan

  /// - Parameter size: samples per frame (even; sizes with only the prime
  ///   factors 2, 3, 5 and 7 are fastest).
  public init(size: Int) {
    precondition(size >= 2 && size % 2 == 0, "a real transform needs an even size")
    self.size = size
    binCount = size / 2 + 1
    let real = fftwf_alloc_real(size)!
    let spectrum = fftwf_alloc_complex(size / 2 + 1)!
    real.initialize(repeating: 0, count: size)
    let complex = UnsafeMutableRawPointer(spectrum).bindMemory(
      to: Float.self, capacity: 2 * (size / 2 + 1))
    complex.initialize(repeating: 0, count: 2 * (size / 2 + 1))
    self.real = real
    self.complex = complex
    let length = Int32(size)
    forwardPlan = SpectrumAnalyzer.makePlan {
      fftwf_plan_dft_r2c_1d(length, real, spectrum, UInt32(FFTW_ESTIMATE))
    }
    inversePlan = SpectrumAnalyzer.makePlan {
      fftwf_plan_dft_c2r_1d(length, spectrum, real, UInt32(FFTW_ESTIMATE))
    }
  }

  deinit {
    SpectrumAnalyzer.destroyPlan(forwardPlan)
    SpectrumAnalyzer.destroyPlan(inversePlan)
    fftwf_free(real)
    fftwf_free(complex)
  }

  /// `real` → `complex`.
  public func forward() { fftwf_execute(forwardPlan) }

  /// `complex` → `real`, scaled by `size`; `complex` is overwritten.
  public func inverse() { fftwf_execute(inversePlan) }
}
