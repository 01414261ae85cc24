#if canImport(Glibc)
  import Glibc
#endif

/// A ring-out plan from a loop response the guard learned while the loop
/// ran (`LoopLearner`), trusted only where it is plausible: the loop ran
/// without ringing at `gainDecibels`, so a learned crossing within
/// `learnedPlausibility` dB of its limit at that gain is not the loop but
/// what the talker left predictable (a held note, a steady vowel); its band
/// is left out before planning. Control thread.
public enum LearnedLoop {
  /// Octaves either side of an implausible crossing that are left out, in
  /// notch half-widths.
  static let silencedWidths = 1.0
  /// Most implausible crossings left out of one response before it is given up.
  static let mostSilenced = 64

  /// The plan for the learned response `impulseResponse` (from lag
  /// `delay` on) of a loop that has been running at `gainDecibels`, or
  /// `nil` when nothing plausible is left to plan for.
  public static func plan(
    impulseResponse: [Float], delay: Int, sampleRate: Double, gainDecibels: Double,
    settings: HowlGuardSettings
  ) -> RingOutPlan? {
    guard
      var spectrum = LoopSpectrum(
        impulseResponse: impulseResponse, sampleRate: sampleRate, delay: delay,
        lowest: settings.learnedLowest,
        highest: 0.9 * ExponentialSweep.band(sampleRate: sampleRate).high)
    else { return nil }
    let ceiling = Decibels.amplitude(-settings.learnedPlausibility - gainDecibels)
    var silenced = 0
    while let worst = spectrum.worstCrossing, worst.gain >= ceiling {
      guard silenced < mostSilenced else { return nil }
      spectrum.silence(
        near: worst.frequency, octaves: silencedWidths * settings.notchHalfWidth)
      silenced += 1
    }
    return RingOutPlan(spectrum: spectrum, margin: settings.learnedMargin, settings: settings)
  }
}
