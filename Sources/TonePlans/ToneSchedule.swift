/// One tone of an encoded message: what it stands for, its frequencies, how
/// long it sounds and the silence after it. Pure data; any thread.
public struct ToneSegment: Sendable, Equatable {
  /// The symbol as sent (in 5-tone plans a repeated digit is sent as the repeat symbol).
  public var symbol: Character
  public var frequencies: [Double]
  public var duration: Double
  public var gap: Double

  public init(symbol: Character, frequencies: [Double], duration: Double, gap: Double) {
    self.symbol = symbol
    self.frequencies = frequencies
    self.duration = duration
    self.gap = gap
  }
}

/// Why a plan cannot send a message or decode at a sample rate. The
/// description names the problem; `kind` lets a program add its own advice.
public struct TonePlanError: Error, Sendable, CustomStringConvertible {
  public enum Kind: Sendable, Equatable {
    /// There was nothing to send.
    case emptyMessage
    /// The message has symbols the plan lacks.
    case unknownSymbols
    /// Some symbols' tones are at or above half the sample rate.
    case aboveNyquist
    /// The plan's tones need this sample rate or more to be decoded.
    case sampleRateTooLow(required: Int)
    /// The input's sample rate is above what the decoder takes.
    case sampleRateTooHigh(limit: Int)
    /// The plan has tones too low to decode.
    case tonesTooLow
  }

  public var kind: Kind
  public var description: String

  public init(_ kind: Kind, description: String) {
    self.kind = kind
    self.description = description
  }
}

extension TonePlan {
  /// The tones that send `text`, with the plan's timing unless `toneDuration`
  /// or `gapDuration` override it. Refuses symbols the plan does not have
  /// and tones at or above half the sample rate, naming every one of them.
  /// A frequency in whole hertz, or as it is when too large for an integer.
  private static func hertz(_ value: Double) -> String {
    abs(value) < 1e15 ? String(Int(value.rounded())) : String(value)
  }

  public func schedule(
    for text: String, sampleRate: Double, toneDuration: Double? = nil, gapDuration: Double? = nil
  ) throws(TonePlanError) -> [ToneSegment] {
    let tone = toneDuration ?? self.toneDuration
    let gap = gapDuration ?? self.gapDuration
    guard !text.isEmpty else {
      throw TonePlanError(.emptyMessage, description: "nothing to send")
    }
    if case .subAudible = kind {
      throw TonePlanError(
        .unknownSymbols,
        description:
          "plan \(name) is a tone held under the voice, not a message; play one with micloop tone -f 67.0 (or any of its 50 standard frequencies)"
      )
    }
    var message = Array(text)
    switch kind {
    case .dualTone, .sequential, .pager, .alarm:
      // "ŉ" upper-cases to two characters: such a symbol stays as it is (and unknown).
      message = message.map { symbol in
        let upper = symbol.uppercased()
        return upper.count == 1 ? Character(upper) : symbol
      }
    case .characterCode, .arbitrary, .subAudible: break
    }
    var unknown = [Character]()
    var tooHigh = [(Character, Double)]()
    for symbol in message {
      guard let frequencies = frequencies(of: symbol) else {
        if !unknown.contains(symbol) { unknown.append(symbol) }
        continue
      }
      if let highest = frequencies.max(), highest >= sampleRate / 2,
        !tooHigh.contains(where: { $0.0 == symbol })
      {
        tooHigh.append((symbol, highest))
      }
    }
    if !unknown.isEmpty {
      let listed = unknown.map { "'\($0)'" }.joined(separator: ", ")
      throw TonePlanError(
        .unknownSymbols,
        description: "plan \(name) cannot send \(listed); it sends \(alphabetDescription)")
    }
    if !tooHigh.isEmpty {
      let listed = tooHigh.map { "'\($0.0)' (\(Self.hertz($0.1)) Hz)" }.joined(separator: ", ")
      throw TonePlanError(
        .aboveNyquist,
        description:
          "plan \(name) cannot send \(listed) at \(Self.hertz(sampleRate)) Hz: above \(Self.hertz(sampleRate / 2)) Hz"
      )
    }
    var segments = [ToneSegment]()
    switch kind {
    case .pager(let aDuration, let bDuration):
      for symbol in message {
        segments.append(
          ToneSegment(
            symbol: symbol, frequencies: frequencies(of: symbol)!,
            duration: toneDuration ?? (symbol == "A" ? aDuration : bDuration), gap: gapDuration ?? 0
          ))
      }
    case .dualTone, .arbitrary, .subAudible, .alarm:
      for symbol in message {
        segments.append(
          ToneSegment(
            symbol: symbol, frequencies: frequencies(of: symbol)!, duration: tone, gap: gap))
      }
    case .sequential(let repeatSymbol):
      var previous: Character?
      for symbol in message {
        let sent = symbol == previous ? repeatSymbol : symbol
        previous = sent == repeatSymbol && symbol != repeatSymbol ? nil : symbol
        segments.append(
          ToneSegment(symbol: sent, frequencies: frequencies(of: sent)!, duration: tone, gap: gap))
      }
    case .characterCode(let marker, _, _):
      for symbol in message {
        segments.append(ToneSegment(symbol: "^", frequencies: [marker], duration: tone, gap: 0))
        segments.append(
          ToneSegment(
            symbol: symbol, frequencies: frequencies(of: symbol)!, duration: tone, gap: gap))
      }
    }
    return segments
  }

  /// The symbols this plan sends, for error messages.
  public var alphabetDescription: String {
    switch kind {
    case .characterCode: return "printable ASCII characters"
    default: return String(symbols.map(\.symbol))
    }
  }
}
