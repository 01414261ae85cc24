#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Conversions between linear values and decibels.
///
/// Levels follow sox's convention: an amplitude of 1.0 is 0 dBFS, so a
/// full-scale sine reads 0.00 dB peak and −3.01 dB RMS. Silence has no
/// level in decibels and is returned as `nil`. Safe on any thread.
public enum Decibels {
  /// Decibels of an amplitude ratio, or `nil` when `amplitude` is zero.
  @inlinable
  public static func fromAmplitude(_ amplitude: Double) -> Double? {
    amplitude > 0 ? 20 * log10(amplitude) : nil
  }

  /// Decibels of a power ratio, or `nil` when `power` is zero.
  @inlinable
  public static func fromPower(_ power: Double) -> Double? {
    power > 0 ? 10 * log10(power) : nil
  }

  /// The amplitude ratio of a value in decibels.
  @inlinable
  public static func amplitude(_ decibels: Double) -> Double {
    pow(10, decibels / 20)
  }

  /// Offset added to RMS levels under the AES17 convention, where a
  /// full-scale sine reads 0 dB RMS instead of −3.01 dB.
  public static let aes17Offset = 10 * log10(2.0)
}

/// The one-pole smoothing coefficient `exp(-1 / (time × sampleRate))`.
///
/// A one-pole filter with this coefficient reaches 1 − 1/e (63.2 %) of a
/// step after exactly `time` seconds. A time of zero gives 0 (no smoothing).
@inlinable
public func onePoleCoefficient(time: Double, sampleRate: Double) -> Float {
  guard time > 0, sampleRate > 0 else { return 0 }
  return Float(exp(-1 / (time * sampleRate)))
}
