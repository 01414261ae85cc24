package import CFFTW
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The strongest spectral component in a band of one analysed frame.
public struct SpectralPeak: Sendable, Equatable {
  /// Frequency in Hz, refined between bins.
  public var frequency: Double
  /// Peak amplitude of the sine it stands for (1.0 = full scale).
  public var amplitude: Double
  /// Power in the peak's main lobe, in the analyser's units (for shares).
  public var lobePower: Double
}

/// Short-time spectra of one frame length: a Hann window and an FFTW
/// real-to-complex transform planned once in `init`. `analyze` windows a
/// frame and keeps its power spectrum for the peak and band queries, or
/// leaves it in storage the caller gives (a frame analysed ahead).
///
/// Owned by one thread at a time; `analyze` and the queries never allocate.
public final class SpectrumAnalyzer {
  /// Samples per frame (also the transform size).
  public let frameLength: Int
  public let sampleRate: Double
  /// Hz between bins.
  public let binWidth: Double
  /// Bins in a spectrum: `frameLength / 2 + 1`.
  var binCount: Int { frameLength / 2 + 1 }
  private let window: UnsafeMutablePointer<Float>
  private let input: UnsafeMutablePointer<Float>
  private let output: UnsafeMutablePointer<fftwf_complex>
  private let power: UnsafeMutablePointer<Double>
  private let scratch: UnsafeMutablePointer<Double>
  private let plan: fftwf_plan
  /// Converts main-lobe power into a sine's squared amplitude.
  private let amplitudeScale: Double

  /// FFTW's planner is not thread-safe (transforms are): every plan in this
  /// package is made and destroyed under this one lock.
  static let plannerLock = Mutex(())

  /// The plan `make` returns, made under `plannerLock`. Any thread.
  package static func makePlan(_ make: () -> fftwf_plan?) -> fftwf_plan {
    nonisolated(unsafe) let make = make
    nonisolated(unsafe) var planned: fftwf_plan?
    plannerLock.withLock { _ in planned = make() }
    return planned!
  }

  /// Destroys `plan` under `plannerLock`. Any thread.
  package static func destroyPlan(_ plan: fftwf_plan) {
    nonisolated(unsafe) let plan = plan
    plannerLock.withLock { _ in fftwf_destroy_plan(plan) }
  }

  /// Readies FFTW's planner on a thread of its own and returns at once: the
  /// planner's first use registers all its algorithms (about a
  /// millisecond), which a program can so do while it starts up, before it
  /// makes its first analyser. Any thread.
  public static func prepareInBackground() {
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    pthread_create(
      &thread, &attributes,
      { _ in
        SpectrumAnalyzer.prepare()
        return nil
      }, nil)
    pthread_attr_destroy(&attributes)
  }

  /// Plans and forgets a small transform: FFTW's planner is ready after.
  private static func prepare() {
    let input = fftwf_alloc_real(16)!
    let output = fftwf_alloc_complex(9)!
    destroyPlan(makePlan { fftwf_plan_dft_r2c_1d(16, input, output, UInt32(FFTW_ESTIMATE)) })
    fftwf_free(input)
    fftwf_free(output)
  }

  /// A periodic Hann window of `length` samples (its bins are exactly two
  /// wide, so a main lobe spans five), and the scale that turns a bin's
  /// power into the squared amplitude of a sinusoid centred on it.
  static func hannWindow(length: Int) -> (
    window: UnsafeMutablePointer<Float>, amplitudeScale: Double
  ) {
    let window = UnsafeMutablePointer<Float>.allocate(capacity: length)
    var sumOfSquares = 0.0
    for n in 0..<length {
      let value = HannWindow.value(n, length: length)
      window[n] = Float(value)
      sumOfSquares += value * value
    }
    return (window, 4 / (Double(length) * sumOfSquares))
  }

  /// - Parameters:
  ///   - frameLength: samples per frame; `friendlyLength(near:)` picks a fast one.
  ///   - sampleRate: Hz, for converting bins to frequencies.
  public init(frameLength: Int, sampleRate: Double) {
    precondition(frameLength >= 8, "a frame needs at least 8 samples")
    self.frameLength = frameLength
    self.sampleRate = sampleRate
    binWidth = sampleRate / Double(frameLength)
    (window, amplitudeScale) = Self.hannWindow(length: frameLength)
    input = fftwf_alloc_real(frameLength)!
    output = fftwf_alloc_complex(frameLength / 2 + 1)!
    power = .allocate(capacity: frameLength / 2 + 1)
    power.initialize(repeating: 0, count: frameLength / 2 + 1)
    UnsafeMutableRawPointer(output).initializeMemory(
      as: Float.self, repeating: 0, count: 2 * (frameLength / 2 + 1))
    scratch = .allocate(capacity: 2 * (frameLength / 2 + 1))
    let (length, input, output) = (Int32(frameLength), input, output)
    plan = Self.makePlan {
      fftwf_plan_dft_r2c_1d(length, input, output, UInt32(FFTW_ESTIMATE))
    }
  }

  deinit {
    Self.destroyPlan(plan)
    fftwf_free(input)
    fftwf_free(output)
    window.deallocate()
    power.deallocate()
    scratch.deallocate()
  }

  /// The nearest length to `target` that has only the prime factors 2, 3,
  /// 5 and 7, which FFTW transforms fastest.
  public static func friendlyLength(near target: Int) -> Int {
    func isSmooth(_ value: Int) -> Bool {
      var rest = value
      for prime in [2, 3, 5, 7] { while rest % prime == 0 { rest /= prime } }
      return rest == 1
    }
    let start = max(8, target)
    for offset in 0..<start {
      if isSmooth(start - offset) && start - offset >= 8 { return start - offset }
      if isSmooth(start + offset) { return start + offset }
    }
    return start
  }

  /// The last frame analysed into the analyser's own storage.
  package var spectrum: Spectrum {
    Spectrum(
      frameLength: frameLength, binWidth: binWidth, amplitudeScale: amplitudeScale,
      power: power, values: UnsafeRawPointer(output).assumingMemoryBound(to: Float.self),
      scratch: scratch)
  }

  /// A frame analysed into `power` and `values` (storage of `binCount`
  /// powers and `binCount` complex values), with this analyser's work
  /// space for its noise estimate.
  func spectrum(power: UnsafePointer<Double>, values: UnsafePointer<Float>) -> Spectrum {
    Spectrum(
      frameLength: frameLength, binWidth: binWidth, amplitudeScale: amplitudeScale,
      power: power, values: values, scratch: scratch)
  }

  /// Windows and transforms one frame given as two contiguous pieces (the
  /// two halves of a ring), `first.count + second.count == frameLength`.
  public func analyze(_ first: UnsafeBufferPointer<Float>, _ second: UnsafeBufferPointer<Float>) {
    transform(first, second)
    powers(into: power)
  }

  /// `analyze`, leaving the frame's powers and complex values in the
  /// caller's storage (`binCount` of each) instead of the analyser's.
  func analyze(
    _ first: UnsafeBufferPointer<Float>, _ second: UnsafeBufferPointer<Float>,
    power: UnsafeMutablePointer<Double>, values: UnsafeMutablePointer<Float>
  ) {
    transform(first, second)
    powers(into: power)
    values.update(
      from: UnsafeRawPointer(output).assumingMemoryBound(to: Float.self), count: 2 * binCount)
  }

  private func transform(_ first: UnsafeBufferPointer<Float>, _ second: UnsafeBufferPointer<Float>)
  {
    if let base = first.baseAddress { windowed(base, count: first.count, at: 0) }
    if let base = second.baseAddress { windowed(base, count: second.count, at: first.count) }
    fftwf_execute(plan)
  }

  /// Each bin's power from the transform's output. Plain loops over plain
  /// pointers: the compiler vectorises them.
  private func powers(into power: UnsafeMutablePointer<Double>) {
    let values = UnsafeRawPointer(output).assumingMemoryBound(to: Float.self)
    for bin in 0..<frameLength / 2 + 1 {
      let re = Double(values[2 * bin])
      let im = Double(values[2 * bin + 1])
      power[bin] = re * re + im * im
    }
  }

  /// Copies `count` samples into the transform's input from `offset` on,
  /// multiplied by the window.
  private func windowed(_ samples: UnsafePointer<Float>, count: Int, at offset: Int) {
    let weights = window + offset
    let target = input + offset
    for index in 0..<count { target[index] = samples[index] * weights[index] }
  }

  /// The complex value of `bin` in the last frame analysed.
  public func value(atBin bin: Int) -> (re: Double, im: Double) { spectrum.value(atBin: bin) }

  /// The power of `bin` in the last frame analysed, scaled so that a
  /// sine's main lobe (five bins) sums to its squared amplitude (the centre
  /// bin of a full-scale sine alone reads 2/3, −1.8 dB).
  public func binPower(_ bin: Int) -> Double { spectrum.binPower(bin) }

  /// The bin nearest `frequency`, clamped to the spectrum.
  public func bin(of frequency: Double) -> Int { spectrum.bin(of: frequency) }

  /// Total power of the bins from `lower` to `upper` Hz.
  public func bandPower(from lower: Double, to upper: Double) -> Double {
    bandPower(bins: bin(of: lower), bin(of: upper))
  }

  /// The power of the broadband noise in the bins from `lower` to `upper`
  /// Hz, estimated from their 30th percentile: a noise bin's power is
  /// exponentially distributed, and tones and harmonics only lift the top.
  public func noisePower(from lower: Double, to upper: Double) -> Double {
    noisePower(bins: bin(of: lower), bin(of: upper))
  }

  /// `noisePower(from:to:)` for the bins from `low` to `high`.
  public func noisePower(bins low: Int, _ high: Int) -> Double {
    spectrum.noisePower(bins: low, high)
  }

  /// The power in the main lobe (five bins) around the strongest bin from
  /// `low` to `high`: what `peak` would measure, without refining it.
  public func strongestLobe(bins low: Int, _ high: Int) -> Double {
    spectrum.strongestLobe(bins: low, high)
  }

  /// Total power of the bins from `low` to `high`.
  public func bandPower(bins low: Int, _ high: Int) -> Double {
    spectrum.bandPower(bins: low, high)
  }

  /// The strongest peak between `lower` and `upper` Hz, its frequency refined
  /// by a parabola through the log powers of the peak bin and its two
  /// neighbours; `nil` when the band is silent.
  public func peak(from lower: Double, to upper: Double) -> SpectralPeak? {
    peak(bins: bin(of: lower), bin(of: upper))
  }

  /// `peak(from:to:)` for the bins from `low` to `high`.
  public func peak(bins low: Int, _ high: Int) -> SpectralPeak? { spectrum.peak(bins: low, high) }
}
