/// A tone-signalling plan as data: which frequencies stand for which symbol,
/// and the standard timing an encoder uses. Pure data; any thread.
public struct TonePlan: Sendable, Equatable {
  /// How symbols are signalled.
  public enum Kind: Sendable, Equatable {
    /// Two simultaneous tones per symbol, a pause between symbols (DTMF).
    case dualTone
    /// One tone per symbol, back to back; a repeated symbol is sent as the
    /// repeat tone (5-tone selective call).
    case sequential(repeatSymbol: Character)
    /// A marker tone before every character; the character's tone is
    /// `base + step × ASCII code` (Handshake).
    case characterCode(marker: Double, base: Double, step: Double)
    /// Arbitrary tones, one per symbol ("1", "2" … in the order given).
    case arbitrary
    /// One of a table of sub-audible tones held under the voice for a whole
    /// transmission (CTCSS); decoded by its own detector, never sent as a message.
    case subAudible(frequencies: [Double])
    /// Two-tone sequential paging (Motorola Quick Call II and compatibles):
    /// tone A then tone B for the given seconds; A alone held long is the
    /// group call. Symbols `A` and `B`.
    case pager(aDuration: Double, bDuration: Double)
    /// Two simultaneous tones held for seconds, each pair a named signal
    /// (TR-BOS siren control): reported by name once it has lasted
    /// `reportAfter` seconds, as receivers act on it.
    case alarm(names: [String], reportAfter: Double)
  }

  public let name: String
  public let kind: Kind
  /// Symbols and their frequencies in Hz (two for dual-tone plans).
  public let symbols: [(symbol: Character, frequencies: [Double])]
  /// Standard length of one tone and of the pause after it, in seconds.
  public let toneDuration: Double
  public let gapDuration: Double

  public static func == (a: TonePlan, b: TonePlan) -> Bool { a.name == b.name }

  /// The frequencies of `symbol`, if this plan has it.
  public func frequencies(of symbol: Character) -> [Double]? {
    if case .characterCode(_, let base, let step) = kind {
      guard let code = symbol.asciiValue, code >= 32, code < 127 else { return nil }
      return [base + step * Double(code)]
    }
    return symbols.first { $0.symbol == symbol }?.frequencies
  }

  /// Every plan by name, as `--plan` spells it.
  public static let all: [TonePlan] = [
    dtmf, ccir1, ccir2, pccir, zvei1, zvei2, zvei3, dzvei, pzvei, eea, eia, handshake, ctcss, siren,
  ]

  /// Finds a plan by name (case-insensitive; `ccir` is CCIR-1), or parses
  /// `freq:F1,F2,...` into an arbitrary plan. Nil when the name is unknown.
  public static func named(_ name: String) -> TonePlan? {
    let lowered = name.lowercased()
    if lowered.hasPrefix("freq:") {
      let values = lowered.dropFirst(5).split(separator: ",").map { Double($0) }
      guard !values.isEmpty, values.allSatisfy({ $0 != nil && $0! > 0 && $0!.isFinite }) else {
        return nil
      }
      let alphabet = Array("123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
      guard values.count <= alphabet.count else { return nil }
      return TonePlan(
        name: name, kind: .arbitrary,
        symbols: values.enumerated().map { (alphabet[$0.offset], [$0.element!]) },
        toneDuration: 0.1, gapDuration: 0.05)
    }
    if lowered.hasPrefix("twotone:") { return pager(lowered) }
    let aliases = ["ccir": "ccir-1", "ccir1": "ccir-1", "ccir2": "ccir-2"]
    let key = aliases[lowered] ?? lowered
    return all.first { $0.name == key }
  }

  /// `twotone:A,B[:A_MS,B_MS]`: a pager's two tones in Hz, and how long
  /// each lasts in ms (1000 and 3000 by default, as Quick Call II sends them).
  private static func pager(_ name: String) -> TonePlan? {
    let parts = name.dropFirst(8).split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 1 || parts.count == 2 else { return nil }
    let tones = parts[0].split(separator: ",").map { Double($0) }
    let times = parts.count == 2 ? parts[1].split(separator: ",").map { Double($0) } : [1000, 3000]
    guard tones.count == 2, times.count == 2,
      let a = tones[0], let b = tones[1], let aTime = times[0], let bTime = times[1],
      [a, b].allSatisfy({ $0 > 0 && $0.isFinite }), abs(a - b) > 0.05 * min(a, b),
      [aTime, bTime].allSatisfy({ $0 >= 100 && $0 <= 60_000 })
    else { return nil }
    return TonePlan(
      name: name, kind: .pager(aDuration: aTime / 1000, bDuration: bTime / 1000),
      symbols: [("A", [a]), ("B", [b])], toneDuration: aTime / 1000, gapDuration: 0)
  }

  /// Whether a symbol sounds two tones at once (DTMF, siren signals).
  public var soundsTwoTones: Bool {
    switch kind {
    case .dualTone, .alarm: true
    case .sequential, .characterCode, .arbitrary, .subAudible, .pager: false
    }
  }

  /// Whether this is one of the ZVEI 5-tone plans, whose calls a siren
  /// signal follows.
  public var isZVEI: Bool { ["zvei1", "zvei2", "zvei3", "dzvei", "pzvei"].contains(name) }

  /// The names `--plan` accepts, for help and errors.
  public static var names: String {
    all.map(\.name).joined(separator: ", ") + ", freq:F1,F2,..., twotone:A,B[:A_MS,B_MS]"
  }

  // MARK: The tables

  /// CTCSS, EIA/TIA-603: the 50 standard sub-audible tones, 67.0–254.1 Hz.
  /// Decoded tones carry the symbol `~`; their frequency names them.
  public static let ctcss = TonePlan(
    name: "ctcss",
    kind: .subAudible(frequencies: [
      67.0, 69.3, 71.9, 74.4, 77.0, 79.7, 82.5, 85.4, 88.5, 91.5, 94.8, 97.4, 100.0, 103.5, 107.2,
      110.9, 114.8, 118.8, 123.0, 127.3, 131.8, 136.5, 141.3, 146.2, 151.4, 156.7, 159.8, 162.2,
      165.5, 167.9, 171.3, 173.8, 177.3, 179.9, 183.5, 186.2, 189.9, 192.8, 196.6, 199.5, 203.5,
      206.5, 210.7, 218.1, 225.7, 229.1, 233.6, 241.8, 250.3, 254.1,
    ]),
    symbols: [], toneDuration: 0, gapDuration: 0)

  /// Siren control of the German BOS radio network (TR-BOS): after a ZVEI
  /// call, 675 Hz together with a second tone for about 5 s; receivers act
  /// after about 2 s of it. Symbols F (fire alarm, 1240 Hz), T (siren test,
  /// 1860 Hz), W (warning, 2280 Hz), C (civil defence alarm, 825 Hz) and
  /// A (all clear, 1010 Hz).
  public static let siren = TonePlan(
    name: "siren",
    kind: .alarm(
      names: ["fire alarm", "siren test", "warning", "civil defence alarm", "all clear"],
      reportAfter: 2),
    symbols: [
      ("F", [675, 1240]), ("T", [675, 1860]), ("W", [675, 2280]), ("C", [675, 825]),
      ("A", [675, 1010]),
    ],
    toneDuration: 5, gapDuration: 1)

  /// DTMF, ITU-T Q.23 (frequencies) and Q.24 (timing: tones and pauses of
  /// at least 40 ms must be accepted; 70 ms on, 70 ms off is customary).
  public static let dtmf = TonePlan(
    name: "dtmf", kind: .dualTone,
    symbols: {
      let low: [Double] = [697, 770, 852, 941]
      let high: [Double] = [1209, 1336, 1477, 1633]
      let keys = Array("123A456B789C*0#D")
      return keys.enumerated().map { ($0.element, [low[$0.offset / 4], high[$0.offset % 4]]) }
    }(),
    toneDuration: 0.07, gapDuration: 0.07)

  // 5-tone selective call. Digits 0-9 then A-F; E is the repeat tone in every
  // plan here. The digit columns agree across published tables; the A-F
  // columns differ between sources (radio manufacturers' manuals, decoder
  // programs, ham-radio encoders). Where they disagree we follow the tables
  // of the multimon-ng decoder, so that its decodes are comparable with ours,
  // and note the alternative:
  // - ZVEI2 B: 810 Hz (some tables list 825 Hz).
  // - ZVEI3: ZVEI1's digits with A-F = 885, 810, 2800, 680, 970, 2600 Hz
  //   (some tables shift the digits down as in DZVEI: 0 = 2200, 1 = 970 Hz).
  // - EIA B: 2433 Hz (some list 2435 Hz); EIA F: 1091 Hz.
  // - PZVEI E: 2600 Hz as in ZVEI1. Some tables give 2400 Hz, which is also
  //   digit 0; multimon-ng's PZVEI decoder, built on such a table, decodes
  //   neither 0 nor E. We keep the tones distinct.
  // Durations: CCIR-1 100 ms, CCIR-2 70 ms, PCCIR 100 ms, ZVEI 70 ms,
  // EEA 40 ms, EIA 33 ms (CCIR Rec. 257 / ZVEI / EEA and EIA RS-220 usage).

  private static func sequential(
    _ name: String, _ frequencies: [Double], tone: Double
  ) -> TonePlan {
    let alphabet = Array("0123456789ABCDEF")
    return TonePlan(
      name: name, kind: .sequential(repeatSymbol: "E"),
      symbols: zip(alphabet, frequencies).filter { $0.1 > 0 }.map { ($0.0, [$0.1]) },
      toneDuration: tone, gapDuration: 0)
  }

  private static let ccirTable: [Double] = [
    1981, 1124, 1197, 1275, 1358, 1446, 1540, 1640, 1747, 1860, 2400, 930, 2247, 991, 2110, 1055,
  ]
  public static let ccir1 = sequential("ccir-1", ccirTable, tone: 0.1)
  public static let ccir2 = sequential("ccir-2", ccirTable, tone: 0.07)
  /// PCCIR: CCIR digits; group A, reset C and no F differ.
  public static let pccir = sequential(
    "pccir",
    [1981, 1124, 1197, 1275, 1358, 1446, 1540, 1640, 1747, 1860, 1050, 930, 2400, 991, 2110, 0],
    tone: 0.1)
  public static let zvei1 = sequential(
    "zvei1",
    [2400, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 2200, 2800, 810, 970, 885, 2600, 680],
    tone: 0.07)
  public static let zvei2 = sequential(
    "zvei2",
    [2400, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 2200, 885, 810, 740, 680, 970, 2600],
    tone: 0.07)
  public static let zvei3 = sequential(
    "zvei3",
    [2400, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 2200, 885, 810, 2800, 680, 970, 2600],
    tone: 0.07)
  public static let dzvei = sequential(
    "dzvei",
    [2200, 970, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 825, 740, 2600, 885, 2400, 680],
    tone: 0.07)
  public static let pzvei = sequential(
    "pzvei",
    [2400, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 2200, 970, 810, 2800, 885, 2600, 680],
    tone: 0.07)
  public static let eea = sequential(
    "eea",
    [1981, 1124, 1197, 1275, 1358, 1446, 1540, 1640, 1747, 1860, 1050, 930, 2400, 991, 2110, 2247],
    tone: 0.04)
  public static let eia = sequential(
    "eia",
    [600, 741, 882, 1023, 1164, 1305, 1446, 1587, 1728, 1869, 2151, 2433, 2010, 2292, 459, 1091],
    tone: 0.033)

  /// Handshake ultrasonic character code: 19000 Hz + 43 Hz × ASCII code,
  /// each character preceded by a 200 ms 19000 Hz marker, 200 ms per tone.
  public static let handshake = TonePlan(
    name: "handshake", kind: .characterCode(marker: 19_000, base: 19_000, step: 43), symbols: [],
    toneDuration: 0.2, gapDuration: 0)
}
