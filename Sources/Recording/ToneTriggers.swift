import TonePlans

/// A call that starts a recording (`--start-on`): a plan and, for plans
/// that carry one, the sequence the call must be ("dtmf:*1#",
/// "zvei1:12345"); without a sequence any call of the plan starts one
/// ("ccir", "twotone:1000,1200"). Pure data; any thread.
public struct ToneStart: Sendable, Equatable {
  public let plan: TonePlan
  /// The digits, keys or text the call must carry; `nil` for any.
  public let sequence: String?

  /// Why a start could not be read from text; the description says what to write.
  public struct ParseError: Error, Sendable, CustomStringConvertible {
    /// What kind of mistake it was, for a front end's own hint.
    public enum Reason: Sendable, Equatable {
      /// A sub-audible tone (CTCSS) named as a start: it gates instead.
      case subTone
      /// A sequence given to a plan that carries none.
      case noSequence
      case other
    }
    public let description: String
    public var reason = Reason.other
  }

  public init(plan: TonePlan, sequence: String?) {
    self.plan = plan
    self.sequence = sequence
  }

  /// Reads `PLAN[:SEQUENCE]`. `twotone:A,B[:A_MS,B_MS]` and `freq:F…` are
  /// plans whose numbers follow the colon; they take no sequence.
  public init(parsing text: String) throws(ParseError) {
    let lowered = text.lowercased()
    if lowered.hasPrefix("twotone:") || lowered.hasPrefix("freq:") {
      guard let plan = TonePlan.named(text) else {
        throw ParseError(
          description:
            "'\(text)' is not a pager or tone: write twotone:A,B (Hz) or freq:F1,F2 (Hz), for example twotone:1000,1200"
        )
      }
      self.init(plan: plan, sequence: nil)
      return
    }
    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let name = String(parts[0])
    guard let plan = TonePlan.named(name) else {
      throw ParseError(
        description: "unknown plan '\(name)' in '\(text)'; use one of \(TonePlan.names)")
    }
    if case .subAudible = plan.kind {
      throw ParseError(
        description:
          "a CTCSS sub-tone does not start a recording; gate the recording on it instead",
        reason: .subTone)
    }
    var sequence: String?
    if parts.count == 2 {
      let given = String(parts[1]).uppercased()
      guard !given.isEmpty else {
        throw ParseError(
          description:
            "'\(text)' ends in ':'; give the sequence after it (dtmf:*1#) or leave it out")
      }
      switch plan.kind {
      case .dualTone, .sequential, .characterCode:
        if case .characterCode = plan.kind {
          sequence = String(parts[1])
        } else {
          for symbol in given where plan.frequencies(of: symbol) == nil {
            throw ParseError(
              description:
                "'\(symbol)' is not a symbol of \(plan.name); the sequence '\(given)' cannot be sent"
            )
          }
          sequence = given
        }
      default:
        throw ParseError(
          description: "\(plan.name) carries no sequence; name the plan alone", reason: .noSequence)
      }
    }
    self.init(plan: plan, sequence: sequence)
  }

  /// Seconds a two-tone group call holds its A tone (Quick Call II: 8 s).
  static let groupCallDuration = 8.0

  /// How the index names it: "dtmf:*1#", "zvei1:12345", "twotone:1000,1200".
  public var label: String { sequence.map { "\(plan.name):\($0)" } ?? plan.name }

  /// Seconds from a call's first tone until the decoder has reported it
  /// at the latest: the whole call, the decoder's checks after it, and for
  /// DTMF keys pressed by hand the pauses between them.
  var reportLatency: Double {
    let settle = 1.0
    switch plan.kind {
    case .pager(let a, let b):
      // A page (A then B) or a group call (A alone, held); reported after
      // whichever is longer has ended and the pager's gap has passed.
      let groupCall = max(Self.groupCallDuration, DecodedPage.groupCallDuration(aDuration: a))
      return max(a + b, groupCall) + settle + 0.5
    case .dualTone:
      let keys = Double(max(1, sequence?.count ?? 1))
      return keys * (DTMFKeys.longestPause + 0.2) + settle
    case .sequential:
      let tones = Double(max(5, sequence?.count ?? 5))
      return tones * plan.toneDuration * 1.5 + settle
    case .characterCode:
      let characters = Double(max(1, sequence?.count ?? 4))
      return characters * 0.45 + settle
    case .alarm(_, let after): return after + settle
    case .arbitrary, .subAudible: return settle
    }
  }
}

/// A call found in the decoded events: where it began and ended (seconds
/// of stream time), and what it was.
struct MatchedCall: Equatable {
  var start: Double
  var end: Double
  var label: String
}

/// DTMF keys gathered into what was dialled: a key starting within
/// `longestPause` of the last one's end continues the same sequence.
struct DTMFKeys {
  static let longestPause = 1.5
  private(set) var keys: [(symbol: Character, start: Double, end: Double)] = []

  /// Adds a key; returns the keys dialled so far in this sequence.
  mutating func add(_ tone: DecodedTone) {
    if let last = keys.last, tone.time - last.end > Self.longestPause { keys.removeAll() }
    keys.append((tone.symbol, tone.time, tone.time + tone.duration))
    if keys.count > 64 { keys.removeFirst(keys.count - 64) }
  }

  /// The last `count` keys when they spell `sequence`.
  func suffix(matching sequence: String) -> (start: Double, end: Double)? {
    let wanted = Array(sequence)
    guard keys.count >= wanted.count else { return nil }
    let tail = keys.suffix(wanted.count)
    guard zip(tail, wanted).allSatisfy({ $0.symbol == $1 }) else { return nil }
    return (tail.first!.start, tail.last!.end)
  }

  mutating func reset() { keys.removeAll() }
}

/// Finds the calls that start recordings among decoded events. Control thread.
struct CallMatcher {
  let starts: [ToneStart]
  private var dtmf = DTMFKeys()

  init(starts: [ToneStart]) { self.starts = starts }

  /// The calls `event` completes.
  mutating func match(_ event: ToneDecoderEvent) -> [MatchedCall] {
    var calls = [MatchedCall]()
    if case .tone(let tone) = event, tone.kind == .dualTone {
      dtmf.add(tone)
    }
    for start in starts {
      switch (start.plan.kind, event) {
      case (.dualTone, .tone(let tone)) where tone.plan == start.plan.name:
        if let sequence = start.sequence {
          if let found = dtmf.suffix(matching: sequence) {
            calls.append(MatchedCall(start: found.start, end: found.end, label: start.label))
            dtmf.reset()
          }
        } else {
          calls.append(
            MatchedCall(start: tone.time, end: tone.time + tone.duration, label: start.label))
        }
      case (.arbitrary, .tone(let tone)) where tone.plan == start.plan.name:
        calls.append(
          MatchedCall(start: tone.time, end: tone.time + tone.duration, label: start.label))
      case (_, .sequence(let sequence)) where sequence.plan == start.plan.name:
        if start.sequence == nil || start.sequence == sequence.text.uppercased()
          || start.sequence == sequence.text
        {
          calls.append(
            MatchedCall(
              start: sequence.time, end: sequence.time + sequence.duration, label: start.label))
        }
      case (_, .page(let page)) where page.plan == start.plan.name:
        calls.append(
          MatchedCall(start: page.time, end: page.time + page.duration, label: start.label))
      default: break
      }
    }
    return calls
  }
}

/// The CTCSS gate (`--ctcss HZ`): spans of stream time in which the
/// sub-tone was found. Control thread.
struct SubToneGate {
  let frequency: Double
  /// Accepted distance from the frequency asked for: the nearest standard
  /// tones are at least 2.2 Hz (3 %) apart.
  static let tolerance = 0.012
  /// Seconds from a sub-tone's start or end until the decoder has reported
  /// it at the latest: a start is reported 0.8 s after the tone was found,
  /// which may take seconds under a voice, and an end after a second's
  /// wait for its return.
  static let reportLatency = 4.5

  func matches(_ tone: DecodedTone) -> Bool {
    tone.kind == .subAudible
      && tone.frequencies.contains { abs($0 - frequency) <= frequency * Self.tolerance }
  }
}
