/// What kind of plan a decoded event came from, without the plan's numbers:
/// what consumers (formatting, hooks, plots, repeat suppression) branch on,
/// instead of a plan's name. Pure data; any thread.
public enum PlanKind: Sendable, Equatable, Hashable, CaseIterable {
  /// Two tones at once per symbol (DTMF).
  case dualTone
  /// 5-tone selective calls (CCIR, ZVEI, EEA, EIA …).
  case sequential
  /// A marker tone before every character (Handshake): its sequences are text.
  case characterCode
  /// `freq:` tones, one per symbol, reported one by one.
  case arbitrary
  /// A sub-audible tone under the voice (CTCSS).
  case subAudible
  /// Two-tone sequential pages (`twotone:`).
  case pager
  /// Named signals of two tones held for seconds (siren control).
  case alarm

  /// Whether the plan's tones come again as a whole call (a sequence or a
  /// page): 5-tone, Handshake, pagers and siren signals. DTMF digits,
  /// `freq:` tones and CTCSS tones stand alone.
  public var reportsCalls: Bool {
    switch self {
    case .sequential, .characterCode, .pager, .alarm: true
    case .dualTone, .arbitrary, .subAudible: false
    }
  }

  /// What a sequence of this kind is called in words: a siren signal, a
  /// Handshake text, otherwise a call.
  public var sequenceNoun: String {
    switch self {
    case .alarm: "signal"
    case .characterCode: "text"
    case .dualTone, .sequential, .arbitrary, .subAudible, .pager: "call"
    }
  }
}

extension TonePlan.Kind {
  /// The kind without its numbers.
  public var planKind: PlanKind {
    switch self {
    case .dualTone: .dualTone
    case .sequential: .sequential
    case .characterCode: .characterCode
    case .arbitrary: .arbitrary
    case .subAudible: .subAudible
    case .pager: .pager
    case .alarm: .alarm
    }
  }
}
