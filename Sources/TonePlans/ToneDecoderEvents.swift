/// One decoded tone (a DTMF digit, one tone of a 5-tone call, one Handshake
/// character). Pure data; any thread.
public struct DecodedTone: Sendable, Equatable {
  /// The plan's name, as `--plan` spells it.
  public var plan: String
  /// What kind of plan it is.
  public var kind: PlanKind
  /// Seconds from the start of the stream to the tone's start.
  public var time: Double
  public var duration: Double
  /// The symbol as received (in 5-tone plans the repeat tone is its own symbol).
  public var symbol: Character
  /// Measured frequencies in Hz (two for DTMF: low group, high group).
  public var frequencies: [Double]
  /// Peak level of each tone in dBFS, in the order of `frequencies`.
  public var levels: [Double]

  public init(
    plan: String, kind: PlanKind, time: Double, duration: Double, symbol: Character,
    frequencies: [Double], levels: [Double]
  ) {
    self.plan = plan
    self.kind = kind
    self.time = time
    self.duration = duration
    self.symbol = symbol
    self.frequencies = frequencies
    self.levels = levels
  }
}

/// A whole decoded message of a 5-tone or Handshake plan, or a siren
/// signal. Pure data.
public struct DecodedSequence: Sendable, Equatable {
  public var plan: String
  /// What kind of plan it is (5-tone, Handshake or siren signals).
  public var kind: PlanKind
  /// Seconds from the start of the stream to the first tone.
  public var time: Double
  /// Seconds; for a siren signal, how long it had sounded when reported.
  public var duration: Double
  /// The message, with repeat tones expanded ("12335"); a siren signal's name.
  public var text: String
  /// The symbols as received ("123E5").
  public var symbols: String
  /// For a siren signal: the ZVEI call that ended at most 1 s before it.
  public var call: String?

  public init(
    plan: String, kind: PlanKind, time: Double, duration: Double, text: String, symbols: String,
    call: String? = nil
  ) {
    self.plan = plan
    self.kind = kind
    self.time = time
    self.duration = duration
    self.text = text
    self.symbols = symbols
    self.call = call
  }
}

/// A two-tone page: tone A then tone B of one configured pager, or its A
/// tone held long alone (a group call). Pure data.
public struct DecodedPage: Sendable, Equatable {
  /// The pager's plan, as `--plan` spelled it (`twotone:A,B…`).
  public var plan: String
  /// Always `.pager`: a page's kind, as every event has one.
  public var kind: PlanKind { .pager }
  /// Seconds from the start of the stream to tone A.
  public var time: Double
  public var duration: Double
  /// Measured frequencies: A and B, or A alone for a group call.
  public var frequencies: [Double]
  /// Whether it is the group call (A alone, held long).
  public var isGroupCall: Bool

  /// How many lengths of a pager's A tone a lone A tone must last to be
  /// the group call rather than a page's first tone.
  package static let groupCallShare = 2.5
  /// The shortest lone A tone that is a group call, in seconds: encoders
  /// hold it 8 s (Quick Call II's all-call), decoders wait for more than
  /// 5 s, and a note held or sung 2.5–5 s on a pager's tone is music.
  package static let shortestGroupCall = 5.0

  /// How long a lone A tone of `aDuration` seconds must last to be the
  /// group call.
  package static func groupCallDuration(aDuration: Double) -> Double {
    max(shortestGroupCall, groupCallShare * aDuration)
  }

  public init(
    plan: String, time: Double, duration: Double, frequencies: [Double], isGroupCall: Bool
  ) {
    self.plan = plan
    self.time = time
    self.duration = duration
    self.frequencies = frequencies
    self.isGroupCall = isGroupCall
  }
}

/// What the tone decoder reports, in stream order.
public enum ToneDecoderEvent: Sendable, Equatable {
  case tone(DecodedTone)
  /// A long tone (CTCSS) found while it still sounds, with its start and
  /// its duration so far; its `tone` event follows when it ends.
  case toneStart(DecodedTone)
  case sequence(DecodedSequence)
  case page(DecodedPage)

  /// The plan's name, as `--plan` spells it.
  public var plan: String {
    switch self {
    case .tone(let tone), .toneStart(let tone): tone.plan
    case .sequence(let sequence): sequence.plan
    case .page(let page): page.plan
    }
  }

  /// What kind of plan it came from.
  public var kind: PlanKind {
    switch self {
    case .tone(let tone), .toneStart(let tone): tone.kind
    case .sequence(let sequence): sequence.kind
    case .page(let page): page.kind
    }
  }

  /// Seconds from the start of the stream.
  public var time: Double {
    switch self {
    case .tone(let tone), .toneStart(let tone): return tone.time
    case .sequence(let sequence): return sequence.time
    case .page(let page): return page.time
    }
  }
}

/// The decisions of the tone decoder; every field has a default that
/// follows the plans' standards.
public struct ToneDetectionSettings: Sendable {
  /// The largest frequency error accepted, relative to the nominal tone.
  /// DTMF (ITU-T Q.24) must accept 1.5 % and reject 3.5 %: 2.5 % sits
  /// between them with room for the estimate's own error.
  public var frequencyTolerance = 0.025
  /// Each tone must be at least this loud (dBFS).
  public var minimumLevel = -50.0
  /// The share of the band's power the plan's tones must hold in a frame.
  public var minimumShare = 0.6
  /// The share that keeps a tone going once a frame has found it with
  /// `minimumShare`, while its level stays within 10 dB: clicks and noise
  /// bursts of a radio channel dent a tone's share for a frame or four
  /// without ending it.
  public var holdingShare = 0.35
  /// The median share of its frames a whole DTMF tone must hold: speech
  /// can put two harmonics on DTMF frequencies for a frame or two, never
  /// this cleanly.
  public var minimumRunShare = 0.9
  /// DTMF twist (high group relative to low group) accepted, in dB, as
  /// the median over a key's frames. The standard accepts −8 to +4 dB;
  /// the margin absorbs the level estimate's noise at 6 dB SNR (the weaker
  /// tone below the noise) and what GSM 06.10 does to a key: it takes a
  /// weak high tone down by 5 dB more and overshoots a short key's high
  /// tone by 5 dB for most of its length. Speech is told from keys by
  /// share, frequency and coherence: twist rejects none of the talk-off
  /// speech's near misses.
  public var twist: ClosedRange<Double> = -14...10
  /// Shortest tone reported by plans without sequences, in seconds; `nil`
  /// uses the plan's own (DTMF: 31 ms, between the 23 ms that must be
  /// rejected and the 40 ms that must be accepted).
  public var minimumDuration: Double?
  /// Fewest tones in a valid 5-tone sequence.
  public var minimumSequenceLength = 5

  public init() {}
}
