#if canImport(Glibc)
  import Glibc
#endif

/// An exponential sine sweep for measuring an impulse response (Farina's
/// method): the sweep is played, what comes back is recorded, and the
/// response is the recording divided by the sweep in the frequency domain.
/// Outside the swept band the division is held back (regularised), so the
/// response there is zero rather than amplified noise.
///
/// Made and deconvolved on the control thread; the samples may be played
/// from any thread.
public struct ExponentialSweep: Sendable {
  /// The sweep, ready to play.
  public let samples: [Float]
  public let sampleRate: Double
  public let lowFrequency: Double
  public let highFrequency: Double

  /// Fraction of the sweep's largest spectral power below which the
  /// division is regularised.
  public static let regularisation = 1e-3
  /// Seconds of raised-cosine fade at each end.
  public static let fadeDuration = 0.01

  /// The band swept when none is given: from 50 Hz to 20 kHz or 0.45 of
  /// the sample rate, whichever is lower.
  public static let defaultLowFrequency = 50.0
  public static func band(sampleRate: Double) -> (low: Double, high: Double) {
    (defaultLowFrequency, min(20_000, 0.45 * sampleRate))
  }

  /// - Parameters:
  ///   - duration: seconds of sweep.
  ///   - lowFrequency, highFrequency: the band swept (Hz); by default `band(sampleRate:)`.
  ///   - level: peak level in dBFS.
  public init(
    sampleRate: Double, duration: Double, lowFrequency: Double = Self.defaultLowFrequency,
    highFrequency: Double? = nil, level: Double = -12
  ) {
    self.sampleRate = sampleRate
    self.lowFrequency = lowFrequency
    let high = highFrequency ?? Self.band(sampleRate: sampleRate).high
    self.highFrequency = high
    let count = Int((duration * sampleRate).rounded())
    let amplitude = Decibels.amplitude(level)
    let rate = log(high / lowFrequency)
    let fade = max(1, Int(Self.fadeDuration * sampleRate))
    samples = (0..<count).map { n in
      let t = Double(n) / sampleRate
      let phase = 2 * Double.pi * lowFrequency * duration / rate * (exp(t / duration * rate) - 1)
      let edge = min(1, Double(min(n, count - 1 - n)) / Double(fade))
      return Float(amplitude * (0.5 - 0.5 * cos(Double.pi * edge)) * sin(phase))
    }
  }

  /// The impulse response, `length` samples from lag 0, of the system
  /// that turned this sweep into `recording` (which starts where the sweep
  /// started and runs at least `length` samples past its end).
  public func impulseResponse(from recording: [Float], length: Int) -> [Float] {
    var size = 1 << 10
    while size < recording.count + samples.count { size <<= 1 }
    let transform = RealFourierTransform(size: size)
    let bins = transform.binCount
    // The sweep's spectrum.
    transform.real.update(repeating: 0, count: size)
    for index in samples.indices { transform.real[index] = samples[index] }
    transform.forward()
    var sweepReal = [Double](repeating: 0, count: bins)
    var sweepImaginary = [Double](repeating: 0, count: bins)
    var largest = 0.0
    for bin in 0..<bins {
      sweepReal[bin] = Double(transform.complex[2 * bin])
      sweepImaginary[bin] = Double(transform.complex[2 * bin + 1])
      largest = max(
        largest, sweepReal[bin] * sweepReal[bin] + sweepImaginary[bin] * sweepImaginary[bin])
    }
    let floor = largest * Self.regularisation
    // The recording's spectrum, divided by the sweep's.
    transform.real.update(repeating: 0, count: size)
    for index in recording.indices { transform.real[index] = recording[index] }
    transform.forward()
    let scale = 1 / Double(size)
    for bin in 0..<bins {
      let (yr, yi) = (Double(transform.complex[2 * bin]), Double(transform.complex[2 * bin + 1]))
      let (xr, xi) = (sweepReal[bin], sweepImaginary[bin])
      let power = xr * xr + xi * xi
      let divisor = max(power, floor) * 1 / scale
      transform.complex[2 * bin] = Float((yr * xr + yi * xi) / divisor)
      transform.complex[2 * bin + 1] = Float((yi * xr - yr * xi) / divisor)
    }
    transform.inverse()
    return (0..<min(length, size)).map { transform.real[$0] }
  }
}
