/// How a meter's reading follows the signal: the standard meters people
/// who meter audio for a living read. Each case documents its numbers and
/// where they come from; `BallisticMeter` implements them.
public enum MeterBallistics: String, Sendable, CaseIterable {
  /// Digital peak meter (IEC 60268-18): instant attack on the sample peak,
  /// held 1 s, then falling 20 dB in 1.7 s.
  case digital
  /// Quasi-peak programme meter Type I (IEC 60268-10, the German DIN
  /// meter): 5 ms integration (a 5 ms burst of a steady tone reads 2 dB
  /// low), falling 20 dB in 1.7 s.
  case ppm1
  /// Quasi-peak programme meter Type II (IEC 60268-10, the BBC meter):
  /// 10 ms integration (bursts of 10, 5 and 1.5 ms read 2, 4 and 9 dB
  /// low), falling 24 dB in 2.8 s.
  case ppm2
  /// The EBU programme meter (IEC 60268-10 Type IIb): Type II ballistics
  /// on the EBU scale (its 0 is −18 dBFS for a sine's peak; micloop reports dBFS).
  case ebu
  /// The VU meter (IEC 60268-17): full-wave average with a critically
  /// damped response reaching 99 % of a step in 300 ms, rising and
  /// falling; reads a sine's RMS.
  case vu
  /// Momentary loudness (EBU R128: 400 ms, K-weighted), in LUFS.
  case lufs

  /// Time constant in seconds with which the rectified signal charges a
  /// quasi-peak meter (0: instant). Fitted to the standard's tone bursts
  /// (5 kHz at 48 kHz): Type II reads 10, 5 and 1.5 ms bursts 1.6, 3.7
  /// and 10.0 dB low (the standard: 2 ± 0.5, 4 ± 0.5, 9 ± 1); Type I
  /// reads a 5 ms burst 2.0 dB low.
  var attackTime: Double {
    switch self {
    case .ppm1: return 0.00135
    case .ppm2, .ebu: return 0.0023
    case .digital, .vu, .lufs: return 0
    }
  }

  /// Fall in dB per second once the signal drops (peak meters).
  var fallRate: Double {
    switch self {
    case .digital, .ppm1: return 20 / 1.7
    case .ppm2, .ebu: return 24 / 2.8
    case .vu, .lufs: return 0
    }
  }

  /// Seconds a new maximum is held before the fall starts.
  var holdTime: Double { self == .digital ? 1 : 0 }

  /// Time in seconds the VU meter takes to reach 99 % of a step.
  static let vuRiseTime = 0.3
}
