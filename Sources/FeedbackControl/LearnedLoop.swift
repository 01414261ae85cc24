import SignalDSP

/// A ring-out plan from a loop response the guard learned while the loop
/// ran (`LoopLearner`), trusted only where it is plausible:
///
/// - only the lags from `minimumDelay` on are read: no sound from the
///   speaker comes back sooner than the loop's buffering;
/// - a crossing within `learnedPlausibility` dB of its limit at the gain the
///   loop has been running at (`gainDecibels`) would have rung, so it is not
///   the loop but what the talker left predictable (a held note): its band
///   is left out before planning.
///
/// What a talker leaves predictable further from the limit cannot be told
/// from a loop by listening alone — in an open loop (headphones) it is all
/// there is to learn — so the guard acts on a learned plan only when the
/// gain jumps, and lets its notches lift as found ones do.
///
/// Control thread.
public enum LearnedLoop {
  /// Octaves either side of a crossing not believed that are left out, in
  /// notch half-widths.
  static let silencedWidths = 1.0
  /// Most implausible crossings left out of one response before it is given up.
  static let mostSilenced = 64

  /// The plan for the learned response `impulseResponse` (from lag
  /// `delay` on) of a loop that has been running at `gainDecibels` and
  /// cannot bring sound back sooner than `minimumDelay` frames, or `nil`
  /// when nothing plausible is left to plan for. The spectrum is worked
  /// out in `transform` (`LoopSpectrum.init(workingIn:)`): a caller
  /// planning again and again keeps it.
  public static func plan(
    impulseResponse: [Float], delay: Int, minimumDelay: Int, sampleRate: Double,
    gainDecibels: Double, settings: HowlGuardSettings, transform: inout RealFourierTransform?
  ) -> RingOutPlan? {
    let split = min(impulseResponse.count, max(0, minimumDelay - delay))
    let loop = Array(impulseResponse[split...])
    guard
      var spectrum = LoopSpectrum(
        impulseResponse: loop, sampleRate: sampleRate, delay: delay + split,
        lowest: settings.learnedLowest,
        highest: min(
          settings.learnedHighest, 0.9 * ExponentialSweep.band(sampleRate: sampleRate).high),
        workingIn: &transform)
    else { return nil }
    let width = silencedWidths * settings.notchHalfWidth
    let ceiling = Decibels.amplitude(-settings.learnedPlausibility - gainDecibels)
    var silenced = 0
    while let worst = spectrum.worstCrossing, worst.gain >= ceiling {
      guard silenced < mostSilenced else { return nil }
      spectrum.silence(near: worst.frequency, octaves: width)
      silenced += 1
    }
    return RingOutPlan(spectrum: spectrum, margin: settings.learnedMargin, settings: settings)
  }
}
