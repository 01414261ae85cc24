import TonePlans

/// Whether the tones of a 5-tone call came from an encoder or from music.
/// An encoder holds each tone's frequency; a riff, a trill or an arpeggio
/// that lands on a plan's tones swells and fades note by note, its notes
/// waver (vibrato, chorus, a glide) and lie off the plan's grid. Judged on
/// the call's median tone, so one tone a burst of noise spoilt does not
/// decide it.
///
/// A swell alone decides nothing: GSM 06.10 pumps a call's level as much
/// as a player's touch does (median level spread 0.7 to 6.7 dB over 213
/// calls), but keeps its tones steady. The numbers lie beyond what real
/// calls measure: through FM at 3 to 15 dB CNR (the channel evaluation's,
/// and calls at 3, 4 and 5 dB, where fewer than a fifth still decode at
/// 3 dB) and through GSM 06.10, sent up to 1.5 % off, tones swelling
/// `wavySpread` or more kept a median phase steadiness of 0.970 or more
/// and every tone within 1.27 %. Of the game music's false calls, 85 %
/// swell and waver or stray further. Pure data; any thread.
enum SelectiveCallRule {
  /// Above this median level spread (dB, `ToneRun.levelSpread`), the
  /// call's tones must be held like an encoder's (`steadyCoherence`,
  /// `heldTolerance`). Below it, noise alone can account for whatever
  /// they measure: a call through FM at 3 dB CNR wavers to 0.953.
  static let wavySpread = 1.4
  /// The median phase steadiness (`ToneRun.coherence`) an encoder's tones
  /// keep over that spread.
  static let steadyCoherence = 0.96
  /// How far off its nominal frequency any tone of such a call may lie,
  /// relative: an encoder's crystal, with room for its estimate through
  /// a codec.
  static let heldTolerance = 0.016

  /// Whether `tones`, a call's runs in order, were sent by an encoder of
  /// `plan` (whose symbols the runs' `symbol` index).
  static func soundsEncoded(_ tones: [ToneRun], plan: TonePlan) -> Bool {
    guard !tones.isEmpty else { return false }
    var spreads = tones.map(\.levelSpread)
    guard ToneTracker.median(&spreads) >= wavySpread else { return true }
    let worstError = tones.map { run in
      let nominal = plan.symbols[run.symbol].frequencies[0]
      return abs(run.frequencies.0 - nominal) / nominal
    }.max()!
    var steadiness = tones.map(\.coherence)
    return ToneTracker.median(&steadiness) >= steadyCoherence && worstError < heldTolerance
  }
}
