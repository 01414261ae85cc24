/// Decodes the tones of one or more plans from a mono stream given in
/// blocks of any size. Plans that need the same frame length share one
/// FFT per frame: 20 ms frames every 5 ms for DTMF, 5-tone and `freq:`
/// (short enough for 33 ms EIA tones, 50 Hz bins resolve DTMF's closest
/// pair); 80 ms frames every 20 ms for Handshake (its characters are only
/// 43 Hz apart and its 200 ms tones leave time for the finer bins).
///
/// Owned by one thread (not the audio thread: events allocate strings).
public final class ToneDecoder {
  private final class Analysis {
    let analyzer: SpectrumAnalyzer
    let hop: Int
    var history: [Float]
    var writeIndex = 0
    var filled = 0
    var untilFrame: Int
    var plans: [PlanDecoder] = []

    init(frameLength: Int, hop: Int, sampleRate: Double) {
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
  }

  public let plans: [TonePlan]
  public let sampleRate: Double
  private var analyses: [Analysis] = []
  private var subAudible: [CTCSSDetector] = []

  /// - Throws: when a plan's tones do not fit below half of `sampleRate`.
  public init(
    plans: [TonePlan], sampleRate: Double, settings: ToneDetectionSettings = ToneDetectionSettings()
  ) throws(TonePlanError) {
    self.plans = plans
    self.sampleRate = sampleRate
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
        if case .characterCode = plan.kind { (0.08, 0.02) } else { (0.02, 0.005) }
      let frameLength = SpectrumAnalyzer.friendlyLength(
        near: Int((frameSeconds * sampleRate).rounded()))
      let hop = max(1, Int((hopSeconds * sampleRate).rounded()))
      let analysis =
        analyses.first { $0.analyzer.frameLength == frameLength && $0.hop == hop }
        ?? {
          let created = Analysis(frameLength: frameLength, hop: hop, sampleRate: sampleRate)
          analyses.append(created)
          return created
        }()
      analysis.plans.append(
        PlanDecoder(
          classifier: ToneFrameClassifier(plan: plan, sampleRate: sampleRate, settings: settings),
          tracker: ToneTracker(
            hop: Double(hop) / sampleRate, firstCentre: Double(frameLength) / 2 / sampleRate),
          interpreter: ToneInterpreter(plan: plan, settings: settings)))
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
    case .dualTone, .sequential, .arbitrary, .pager:
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
    for analysis in analyses { feed(analysis, samples, emit: emit) }
    for detector in subAudible { detector.process(samples, emit: emit) }
  }

  /// Ends the stream: reports what was still open.
  public func finish(emit: (ToneDecoderEvent) -> Void) {
    for detector in subAudible { detector.finish(emit: emit) }
    for analysis in analyses {
      for index in analysis.plans.indices {
        if let run = analysis.plans[index].tracker.finish(),
          analysis.plans[index].classifier.accepts(run)
        {
          analysis.plans[index].interpreter.take(run, emit: emit)
        }
        analysis.plans[index].interpreter.finish(emit: emit)
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
      let tone = analysis.plans[index].classifier.classify(analysis.analyzer)
      if let run = analysis.plans[index].tracker.add(tone),
        analysis.plans[index].classifier.accepts(run)
      {
        analysis.plans[index].interpreter.take(run, emit: emit)
      }
      let tracker = analysis.plans[index].tracker
      if !tracker.isRunOpen {
        analysis.plans[index].interpreter.advance(to: tracker.latestCentre, emit: emit)
      }
    }
  }
}
