import TonePlans

/// Turns one plan's tone runs into decoded tones and sequences: single
/// tones (DTMF, `freq:`) need the minimum duration; 5-tone and Handshake
/// tones are only reported inside a whole sequence that validates, so
/// speech that briefly matches one tone reports nothing. Owned by the decoder.
struct ToneInterpreter {
  private let plan: TonePlan
  private let settings: ToneDetectionSettings
  private var pending: [ToneRun] = []
  /// A run too short to be a tone on its own, kept in case the rest of
  /// its tone follows.
  private var fragment: ToneRun?

  /// The shortest single tone (DTMF, `freq:`) reported when the settings
  /// name none, in seconds: between the 23 ms Q.24 says must be rejected
  /// and the 40 ms it says must be accepted.
  static let shortestSingleTone = 0.031
  /// The longest silence inside a two-tone page, and the shortest tone
  /// of one, in seconds.
  static let pagerGap = 0.3
  static let shortestPagerTone = 0.1
  /// The widest `ToneRun.levelSpread` of a group call's tone, in dB: a
  /// transmitter holds it (1.2 dB through FM at 4 dB CNR, 2.4 dB at 2 dB),
  /// a note held or sung as long swells and fades (3.9 dB and more).
  static let groupCallLevelSpread = 3.0
  /// How much of a plan's tone length a silence inside a 5-tone or
  /// Handshake sequence may last.
  static let sequenceGapShare = 0.5
  /// How much of a plan's tone length a tone of a sequence must last;
  /// a shorter run is kept as a fragment in case the rest follows.
  static let shortestSequenceToneShare = 0.5

  init(plan: TonePlan, settings: ToneDetectionSettings) {
    self.plan = plan
    self.settings = settings
  }

  /// The longest silence inside a sequence, in seconds (a gap of exactly
  /// that long counts: run times are sums of frame hops, a little off).
  var maximumGap: Double {
    let gap =
      switch plan.kind {
      case .sequential, .characterCode: Self.sequenceGapShare * plan.toneDuration
      case .pager: Self.pagerGap
      case .dualTone, .arbitrary, .subAudible, .alarm: 0.0
      }
    return gap + Self.timeSlack
  }

  /// How far apart two run times may be and still be the same time, in
  /// seconds: far below a frame hop, far above a sum's rounding.
  static let timeSlack = 1e-6

  /// The plan's symbol for a frame symbol index.
  func character(_ symbol: Int) -> Character {
    if case .characterCode = plan.kind {
      return symbol == 0 ? "^" : Character(Unicode.Scalar(UInt8(symbol)))
    }
    return plan.symbols[symbol].symbol
  }

  mutating func take(_ run: ToneRun, emit: (ToneDecoderEvent) -> Void) {
    switch plan.kind {
    case .alarm(let names, _):
      var signal = run
      if let piece = alarmPiece(continuedBy: run) {
        // The rest of a signal a burst of noise cut: reported already, or
        // reported from where it began.
        if piece.reported { return }
        signal.start = piece.run.start
        signal.duration = run.end - piece.run.start
      }
      isOpenRunReported = true
      emit(
        .sequence(
          DecodedSequence(
            plan: plan.name, kind: plan.kind.planKind, time: signal.start,
            duration: signal.duration,
            text: names[run.symbol], symbols: String(character(run.symbol)))))
    case .dualTone, .arbitrary, .subAudible:
      if run.duration >= settings.shortestReportedTone { emit(.tone(decoded(run))) }
    case .sequential, .characterCode, .pager:
      // Noise can cut a tone in two: pieces of one symbol close together
      // and as loud are one tone (a sequence never sends a symbol twice in
      // a row).
      if let last = pending.last, isPiece(run, of: last) {
        pending[pending.count - 1].duration = run.end - last.start
        pending[pending.count - 1].levelSpread = max(last.levelSpread, run.levelSpread)
        pending[pending.count - 1].coherence = min(last.coherence, run.coherence)
        fragment = nil
        return
      }
      var run = run
      if let piece = fragment, isPiece(run, of: piece) {
        run.duration = run.end - piece.start
        run.start = piece.start
        run.levelSpread = max(run.levelSpread, piece.levelSpread)
        run.coherence = min(run.coherence, piece.coherence)
      }
      fragment = nil
      let shortest =
        if case .pager = plan.kind {
          Self.shortestPagerTone
        } else {
          Self.shortestSequenceToneShare * plan.toneDuration
        }
      guard run.duration >= shortest else {
        fragment = run
        return
      }
      if let last = pending.last, run.start - last.end > maximumGap || !isSameSource(run) {
        close(emit: emit)
      }
      pending.append(run)
    }
  }

  /// Whether `run` continues `earlier`, a piece of the same tone a burst
  /// of noise cut off: the same symbol, soon after, within 12 dB (not the
  /// tone's own echo in a receiver's filters, 20 dB down).
  private func isPiece(_ run: ToneRun, of earlier: ToneRun) -> Bool {
    earlier.symbol == run.symbol && run.start - earlier.end <= maximumGap
      && abs(run.levels.0 - earlier.levels.0) <= 12
  }

  /// How far a 5-tone call's tones may lie from each other's level, in
  /// dB: an encoder sends them at one level, and GSM 06.10 scatters them
  /// by up to 15.5 dB; a squelch tail's whistle comes 20 dB down.
  static let sameSourceSpread = 16.0

  /// Whether `run` can belong to the 5-tone sequence pending: a tone
  /// `sameSourceSpread` weaker or stronger than every tone before it (a
  /// squelch tail's whistle after a call, a stray tone in the noise before
  /// one) starts a sequence of its own.
  private func isSameSource(_ run: ToneRun) -> Bool {
    guard case .sequential = plan.kind, !pending.isEmpty else { return true }
    var loudest = -Double.infinity
    var softest = Double.infinity
    for tone in pending {
      loudest = max(loudest, tone.levels.0)
      softest = min(softest, tone.levels.0)
    }
    return run.levels.0 >= loudest - Self.sameSourceSpread
      && run.levels.0 <= softest + Self.sameSourceSpread
  }

  /// The longest break inside one siren signal, in seconds.
  private static let alarmGap = 0.5
  /// The last run of an alarm plan that ended (pieces of one signal
  /// joined), and whether the signal it belongs to was reported.
  private var alarmPiece: (run: ToneRun, reported: Bool)?
  private var isOpenRunReported = false

  /// The last alarm piece, if `run` is more of the same signal.
  private func alarmPiece(continuedBy run: ToneRun) -> (run: ToneRun, reported: Bool)? {
    guard let piece = alarmPiece, piece.run.symbol == run.symbol,
      run.start - piece.run.end <= Self.alarmGap
    else { return nil }
    return piece
  }

  /// Alarm plans: a run has ended (reported while it sounded, if it grew
  /// long enough). Kept so that the next piece of the same signal is
  /// reported from the signal's start, or not again.
  mutating func ended(_ run: ToneRun) {
    defer { isOpenRunReported = false }
    if let piece = alarmPiece(continuedBy: run) {
      var joined = piece.run
      joined.duration = run.end - piece.run.start
      alarmPiece = (joined, piece.reported || isOpenRunReported)
    } else {
      alarmPiece = (run, isOpenRunReported)
    }
  }

  /// Closes a sequence once `time` is past its possible continuation.
  mutating func advance(to time: Double, emit: (ToneDecoderEvent) -> Void) {
    // A fragment may still be joined by the rest of its tone.
    guard let last = pending.last, time - max(last.end, fragment?.end ?? 0) > maximumGap else {
      return
    }
    close(emit: emit)
  }

  mutating func finish(emit: (ToneDecoderEvent) -> Void) { close(emit: emit) }

  private func decoded(_ run: ToneRun, duration: Double? = nil) -> DecodedTone {
    let isDual = run.levels.1.isFinite && plan.soundsTwoTones
    return DecodedTone(
      plan: plan.name, kind: plan.kind.planKind, time: run.start,
      duration: duration ?? run.duration,
      symbol: character(run.symbol),
      frequencies: isDual ? [run.frequencies.0, run.frequencies.1] : [run.frequencies.0],
      levels: isDual ? [run.levels.0, run.levels.1] : [run.levels.0])
  }

  private mutating func close(emit: (ToneDecoderEvent) -> Void) {
    defer { pending.removeAll(keepingCapacity: true) }
    guard !pending.isEmpty else { return }
    switch plan.kind {
    case .sequential(let repeatSymbol): closeSelectiveCall(repeatSymbol: repeatSymbol, emit: emit)
    case .characterCode: closeCharacters(emit: emit)
    case .pager(let aDuration, let bDuration):
      closePages(aDuration: aDuration, bDuration: bDuration, emit: emit)
    case .dualTone, .arbitrary, .subAudible, .alarm: return
    }
  }

  /// Two-tone pages: A at least half its length then B at least half its
  /// length is a page; A alone at least
  /// `DecodedPage.groupCallDuration(aDuration:)`, its level held within
  /// `groupCallLevelSpread`, is the group call.
  private func closePages(
    aDuration: Double, bDuration: Double, emit: (ToneDecoderEvent) -> Void
  ) {
    var index = 0
    while index < pending.count {
      let run = pending[index]
      defer { index += 1 }
      guard run.symbol == 0, run.duration >= 0.5 * aDuration else { continue }
      if index + 1 < pending.count, pending[index + 1].symbol == 1,
        pending[index + 1].duration >= 0.5 * bDuration
      {
        let b = pending[index + 1]
        emit(
          .page(
            DecodedPage(
              plan: plan.name, time: run.start, duration: b.end - run.start,
              frequencies: [run.frequencies.0, b.frequencies.0], isGroupCall: false)))
        index += 1
      } else if run.duration >= DecodedPage.groupCallDuration(aDuration: aDuration),
        run.levelSpread <= Self.groupCallLevelSpread
      {
        emit(
          .page(
            DecodedPage(
              plan: plan.name, time: run.start, duration: run.duration,
              frequencies: [run.frequencies.0], isGroupCall: true)))
      }
    }
  }

  /// 5-tone: enough tones, back to back, every inner tone of standard
  /// length, held like an encoder's (`SelectiveCallRule`).
  private func closeSelectiveCall(repeatSymbol: Character, emit: (ToneDecoderEvent) -> Void) {
    guard pending.count >= settings.minimumSequenceLength else { return }
    // A tone lasts from the middle of the gap before it to the middle of the gap after it.
    var spans = [Double]()
    for index in pending.indices {
      let start =
        index == 0 ? pending[index].start : (pending[index - 1].end + pending[index].start) / 2
      let end =
        index == pending.count - 1
        ? pending[index].end : (pending[index].end + pending[index + 1].start) / 2
      spans.append(end - start)
    }
    let nominal = plan.toneDuration
    for (index, span) in spans.enumerated() {
      let isInner = index > 0 && index < spans.count - 1
      guard span >= 0.6 * nominal, !isInner || span <= 1.6 * nominal else { return }
    }
    guard SelectiveCallRule.soundsEncoded(pending, plan: plan) else { return }
    var symbols = ""
    var text = ""
    var previous: Character?
    for (index, run) in pending.enumerated() {
      let symbol = character(run.symbol)
      emit(.tone(decoded(run, duration: spans[index])))
      symbols.append(symbol)
      let expanded = symbol == repeatSymbol ? (previous ?? symbol) : symbol
      text.append(expanded)
      previous = expanded
    }
    emit(
      .sequence(
        DecodedSequence(
          plan: plan.name, kind: plan.kind.planKind, time: pending[0].start,
          duration: pending.last!.end - pending[0].start,
          text: text, symbols: symbols)))
  }

  /// Handshake: every character tone must follow a marker tone.
  private func closeCharacters(emit: (ToneDecoderEvent) -> Void) {
    let nominal = plan.toneDuration
    func isStandard(_ run: ToneRun) -> Bool {
      run.duration >= 0.5 * nominal && run.duration <= 2 * nominal
    }
    var text = ""
    var first: ToneRun?
    for index in pending.indices.dropFirst() {
      let marker = pending[index - 1]
      let run = pending[index]
      guard marker.symbol == 0, run.symbol != 0, isStandard(marker), isStandard(run) else {
        continue
      }
      if first == nil { first = marker }
      emit(.tone(decoded(run)))
      text.append(character(run.symbol))
    }
    guard let first, !text.isEmpty else { return }
    emit(
      .sequence(
        DecodedSequence(
          plan: plan.name, kind: plan.kind.planKind, time: first.start,
          duration: pending.last!.end - first.start,
          text: text, symbols: text)))
  }
}

extension ToneDetectionSettings {
  /// The shortest single tone (DTMF, `freq:`) reported, in seconds: the
  /// settings' own, else `ToneInterpreter.shortestSingleTone`.
  var shortestReportedTone: Double { minimumDuration ?? ToneInterpreter.shortestSingleTone }
}
