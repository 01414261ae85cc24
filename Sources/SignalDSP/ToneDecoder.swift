/// Decodes the tones of one or more plans from a mono stream given in
/// blocks of any size. Plans that need the same frame length share one
/// FFT per frame: 20 ms frames every 5 ms for DTMF and `freq:` (50 Hz bins
/// resolve DTMF's closest pair, short enough for its 40 ms tones); for
/// 5-tone and two-tone plans 0.45 of the tone's length, 20 to 40 ms (EEA
/// and EIA 20 ms, ZVEI 31.5 ms, CCIR-1 40 ms); 80 ms frames every 20 ms for
/// Handshake (its characters are only 43 Hz apart and its 200 ms tones
/// leave time for the finer bins). Single tones are looked for in the
/// stream with clicks taken out (`ImpulseBlanker`).
///
/// Owned by one thread (not the audio thread: events allocate strings).
public final class ToneDecoder {
  private final class Analysis {
    let analyzer: SpectrumAnalyzer
    let hop: Int
    /// Whether it listens to the stream with clicks taken out.
    let isBlanked: Bool
    var history: [Float]
    var writeIndex = 0
    var filled = 0
    var untilFrame: Int
    var plans: [PlanDecoder] = []

    init(frameLength: Int, hop: Int, sampleRate: Double, isBlanked: Bool) {
      self.isBlanked = isBlanked
      analyzer = SpectrumAnalyzer(frameLength: frameLength, sampleRate: sampleRate)
      self.hop = hop
      history = [Float](repeating: 0, count: frameLength)
      untilFrame = frameLength
    }
  }

  private struct PlanDecoder {
    var classifier: ToneFrameClassifier
    var tracker: ToneTracker
    var interpreter: ToneInterpreter
    /// For a siren plan, how long a signal sounds before it is reported.
    var reportAfter: Double?
    /// The symbol the last frame found, if any.
    var lastSymbol: Int? = nil
    /// The last tone found with the full share, and its level (dBFS).
    var held: (symbol: Int, level: Double)? = nil
  }

  public let plans: [TonePlan]
  public let sampleRate: Double
  private let settings: ToneDetectionSettings
  private var analyses: [Analysis] = []
  private var subAudible: [CTCSSDetector] = []
  /// Clicks are taken out before any plan listens.
  private var blanker: ImpulseBlanker

  /// - Throws: when a plan's tones do not fit below half of `sampleRate`.
  public init(
    plans: [TonePlan], sampleRate: Double, settings: ToneDetectionSettings = ToneDetectionSettings()
  ) throws(TonePlanError) {
    // A siren signal is addressed by the ZVEI call before it.
    let plans =
      plans.contains { if case .alarm = $0.kind { true } else { false } }
        && !plans.contains(where: \.isZVEI)
      ? plans + [.zvei1] : plans
    self.plans = plans
    self.sampleRate = sampleRate
    self.settings = settings
    blanker = ImpulseBlanker(sampleRate: sampleRate)
    for plan in plans {
      try Self.checkRate(plan, sampleRate: sampleRate, settings: settings)
      if case .subAudible(let table) = plan.kind {
        subAudible.append(
          CTCSSDetector(
            plan: plan.name, tones: table, sampleRate: sampleRate,
            minimumLevel: settings.minimumLevel))
        continue
      }
      let (frameSeconds, hopSeconds) =
        switch plan.kind {
        case .characterCode: (0.08, 0.02)
        // Longer tones afford longer frames: finer bins and more of the
        // tone's energy against a click or the noise in each.
        case .sequential, .pager: (min(0.04, max(0.02, 0.45 * plan.toneDuration)), 0.005)
        case .alarm: (0.04, 0.01)
        case .dualTone, .arbitrary, .subAudible: (0.02, 0.005)
        }
      let frameLength = SpectrumAnalyzer.friendlyLength(
        near: Int((frameSeconds * sampleRate).rounded()))
      let hop = max(1, Int((hopSeconds * sampleRate).rounded()))
      // Single tones are found in the blanked stream; pairs of tones in
      // the stream as it came (see `ImpulseBlanker`).
      let isBlanked: Bool =
        switch plan.kind {
        case .sequential, .pager, .arbitrary, .characterCode: true
        case .dualTone, .subAudible, .alarm: false
        }
      let analysis =
        analyses.first {
          $0.analyzer.frameLength == frameLength && $0.hop == hop && $0.isBlanked == isBlanked
        }
        ?? {
          let created = Analysis(
            frameLength: frameLength, hop: hop, sampleRate: sampleRate, isBlanked: isBlanked)
          analyses.append(created)
          return created
        }()
      analysis.plans.append(
        PlanDecoder(
          classifier: ToneFrameClassifier(plan: plan, sampleRate: sampleRate, settings: settings),
          tracker: ToneTracker(
            hop: Double(hop) / sampleRate, firstCentre: Double(frameLength) / 2 / sampleRate),
          interpreter: ToneInterpreter(plan: plan, settings: settings),
          reportAfter: {
            if case .alarm(_, let after) = plan.kind { after } else { nil }
          }()))
    }
  }

  private static func checkRate(
    _ plan: TonePlan, sampleRate: Double, settings: ToneDetectionSettings
  ) throws(TonePlanError) {
    let nyquist = sampleRate / 2
    let lowest: Double
    let needed: Double
    switch plan.kind {
    case .characterCode(let marker, let base, let step):
      lowest = marker
      needed = base + step * 32
    case .subAudible(let table):
      lowest = table.min() ?? 0
      needed = (table.max() ?? 0) * (1 + settings.frequencyTolerance)
    case .dualTone, .sequential, .arbitrary, .pager, .alarm:
      lowest = plan.symbols.flatMap(\.frequencies).min() ?? 0
      needed = (plan.symbols.flatMap(\.frequencies).max() ?? 0) * (1 + settings.frequencyTolerance)
    }
    guard needed < nyquist else {
      let rate = Int(min(1e9, (2 * needed / 1000).rounded(.up) * 1000))
      throw TonePlanError(
        .sampleRateTooLow(required: rate),
        description:
          "plan \(plan.name) needs a sample rate of at least \(rate) Hz (its tones reach \(Int(min(1e9, needed))) Hz), the input has \(Int(sampleRate)) Hz"
      )
    }
    guard lowest >= 20 else {
      throw TonePlanError(
        .tonesTooLow, description: "plan \(plan.name) has tones below 20 Hz; use 20 Hz or more")
    }
  }

  /// Decodes `samples`, calling `emit` for every tone and sequence completed.
  public func process(_ samples: UnsafeBufferPointer<Float>, emit: (ToneDecoderEvent) -> Void) {
    withoutActuallyEscaping(emit) { emit in
      let emit = linkingAlarms(emit)
      analyse(samples, blanked: false, emit: emit)
      if hasBlankedAnalyses {
        blanker.process(samples) { analyse($0, blanked: true, emit: emit) }
      }
    }
  }

  /// The last ZVEI call, which a siren signal that follows within 1 s is for.
  private var lastCall: DecodedSequence?

  /// `emit`, with siren signals given the ZVEI call just before them.
  private func linkingAlarms(_ emit: @escaping (ToneDecoderEvent) -> Void) -> (ToneDecoderEvent)
    -> Void
  {
    { [unowned self] event in
      guard case .sequence(var sequence) = event else { return emit(event) }
      if TonePlan.named(sequence.plan)?.isZVEI == true {
        lastCall = sequence
      } else if sequence.plan == TonePlan.siren.name, let call = lastCall {
        let pause = sequence.time - (call.time + call.duration)
        if pause >= -0.2 && pause <= 1 { sequence.call = call.text }
      }
      emit(.sequence(sequence))
    }
  }

  private var hasBlankedAnalyses: Bool { analyses.contains { $0.isBlanked } }

  /// Clicks blanked so far, in blocks of `blockLength` samples (about 0.5 ms).
  public var blankedClicks: Int { blanker.blankedBlocks }

  private func analyse(
    _ samples: UnsafeBufferPointer<Float>, blanked: Bool, emit: (ToneDecoderEvent) -> Void
  ) {
    for analysis in analyses where analysis.isBlanked == blanked {
      feed(analysis, samples, emit: emit)
    }
    if !blanked { for detector in subAudible { detector.process(samples, emit: emit) } }
  }

  /// Ends the stream: reports what was still open.
  public func finish(emit: (ToneDecoderEvent) -> Void) {
    withoutActuallyEscaping(emit) { emit in
      let emit = linkingAlarms(emit)
      blanker.flush { analyse($0, blanked: true, emit: emit) }
      for detector in subAudible { detector.finish(emit: emit) }
      for analysis in analyses {
        for index in analysis.plans.indices {
          if let run = analysis.plans[index].tracker.finish(),
            analysis.plans[index].reportAfter == nil,
            analysis.plans[index].classifier.accepts(run)
          {
            analysis.plans[index].interpreter.take(run, emit: emit)
          }
          analysis.plans[index].interpreter.finish(emit: emit)
        }
      }
    }
  }

  private func feed(
    _ analysis: Analysis, _ samples: UnsafeBufferPointer<Float>,
    emit: (ToneDecoderEvent) -> Void
  ) {
    let length = analysis.history.count
    var offset = 0
    while offset < samples.count {
      let chunk = min(samples.count - offset, analysis.untilFrame, length - analysis.writeIndex)
      analysis.history.withUnsafeMutableBufferPointer { history in
        for index in 0..<chunk {
          history[analysis.writeIndex + index] = samples[offset + index]
        }
      }
      offset += chunk
      analysis.writeIndex = (analysis.writeIndex + chunk) % length
      analysis.untilFrame -= chunk
      if analysis.untilFrame == 0 {
        analysis.untilFrame = analysis.hop
        analyzeFrame(analysis, emit: emit)
      }
    }
  }

  private func analyzeFrame(_ analysis: Analysis, emit: (ToneDecoderEvent) -> Void) {
    let split = analysis.writeIndex
    analysis.history.withUnsafeBufferPointer { history in
      analysis.analyzer.analyze(
        UnsafeBufferPointer(rebasing: history[split...]),
        UnsafeBufferPointer(rebasing: history[..<split]))
    }
    for index in analysis.plans.indices {
      // The tone in progress: found in the last frame, or still the open run.
      let plan = analysis.plans[index]
      let holding = plan.held.flatMap {
        $0.symbol == plan.lastSymbol || $0.symbol == plan.tracker.openSymbol ? $0 : nil
      }
      let tone = plan.classifier.classify(analysis.analyzer, holding: holding)
      analysis.plans[index].lastSymbol = tone?.isWeak == false ? tone?.symbol : nil
      if let tone, tone.share >= settings.minimumShare {
        analysis.plans[index].held = (tone.symbol, tone.level)
      }
      if let run = analysis.plans[index].tracker.add(tone),
        analysis.plans[index].reportAfter == nil,
        analysis.plans[index].classifier.accepts(run)
      {
        analysis.plans[index].interpreter.take(run, emit: emit)
      }
      // A siren signal is reported while it sounds, once it has lasted long enough.
      if let after = analysis.plans[index].reportAfter,
        let run = analysis.plans[index].tracker.runReaching(after),
        analysis.plans[index].classifier.accepts(run)
      {
        analysis.plans[index].interpreter.take(run, emit: emit)
      }
      let tracker = analysis.plans[index].tracker
      if !tracker.isRunOpen && !tracker.isToneRising {
        analysis.plans[index].interpreter.advance(to: tracker.latestCentre, emit: emit)
      }
    }
  }
}
