import SignalDSP
import TonePlans

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
  /// Frames of one length and hop from one stream, and the plans that
  /// read their spectra. Frames are analysed in pairs (2k and 2k + 1, one
  /// transform for both; see `PairedSpectrumAnalyzer`), so frame 2k is
  /// decided once frame 2k + 1 is due.
  final class Analysis {
    let analyzer: PairedSpectrumAnalyzer
    let ring: FrameRing
    /// Which of the decoder's streams it listens to.
    let stream: ToneStreams.Stream
    var plans: [PlanDecoder] = []
    /// The plans' classifiers, apart: frames are measured while the plans
    /// are worked on in place.
    private(set) var classifiers = ClassifierSet([])
    /// The first frame of the pair the analyser holds, and which of its
    /// two frames have been measured into `measured` (one set per frame).
    private var pair = -1
    private var measuredFrames = (false, false)
    private var measured: UnsafeMutablePointer<FrameMeasurement>
    /// A frame measured further for a held tone (`completeMeasurement`),
    /// while its plan decides it.
    let completed = UnsafeMutablePointer<FrameMeasurement>.allocate(capacity: 1)
    /// Which frames are put off while nothing is heard (see `decide`).
    var skip = FrameSkipRule()
    /// Frames measured ahead on another thread, while a block of them is
    /// decoded (`process(_: ToneBlock)`).
    var ahead: AheadFrames?
    /// For DTMF: the harmonic series of a voice under a run that passed.
    private(set) var seriesProbe: HarmonicSeriesProbe?
    /// For DTMF: whether a run's tones were sounding before it began.
    private(set) var onsetProbe: ToneOnsetProbe?
    /// For DTMF: what a run's span holds under the voice band.
    private(set) var lowBandProbe: LowBandProbe?

    init(frameLength: Int, hop: Int, sampleRate: Double, stream: ToneStreams.Stream) {
      self.stream = stream
      analyzer = PairedSpectrumAnalyzer(frameLength: frameLength, sampleRate: sampleRate)
      ring = FrameRing(
        frameLength: frameLength, hop: hop,
        extraHops: ToneDecoder.framesHeld
          + HarmonicSeriesProbe.extraHops(hop: hop, sampleRate: sampleRate)
          + (ToneOnsetProbe.extraSamples(sampleRate: sampleRate) + hop - 1) / hop)
      measured = .allocate(capacity: 0)
      completed.initialize(to: FrameMeasurement(isQuiet: true, isQuietHolding: true))
      self.sampleRate = sampleRate
    }

    deinit {
      measured.deallocate()
      completed.deinitialize(count: 1)
      completed.deallocate()
    }

    private let sampleRate: Double

    func add(_ plan: PlanDecoder) {
      plans.append(plan)
      if plan.classifier.looksForVoices, seriesProbe == nil {
        seriesProbe = HarmonicSeriesProbe(sampleRate: sampleRate)
        onsetProbe = ToneOnsetProbe(sampleRate: sampleRate)
        lowBandProbe = LowBandProbe(sampleRate: sampleRate)
      }
      classifiers = ClassifierSet(plans.map(\.classifier))
      let bins = plans.map(\.classifier.readBins)
      analyzer.workedBins =
        bins.map(\.lowerBound).min()!..<bins.map(\.upperBound).max()!
      measured.deallocate()
      measured = .allocate(capacity: 2 * plans.count)
      measured.initialize(
        repeating: FrameMeasurement(isQuiet: true, isQuietHolding: true), count: 2 * plans.count)
      pair = -1
    }

    /// What frame `number` holds for each plan, in plan order: measured
    /// ahead if it was, else measured now (valid until another pair of
    /// frames is analysed here).
    func measurements(of number: Int) -> UnsafePointer<FrameMeasurement> {
      if let ahead, let slot = ahead.slot(of: number) {
        return UnsafePointer(ahead.measurements(slot))
      }
      let side = number & 1
      let set = measured + side * classifiers.count
      analyze(number)
      if side == 0 ? !measuredFrames.0 : !measuredFrames.1 {
        classifiers.measure(analyzer.spectrum(side), into: set)
        if side == 0 { measuredFrames.0 = true } else { measuredFrames.1 = true }
      }
      return UnsafePointer(set)
    }

    /// What frame `number` holds for plan `index` with a tone held
    /// (`FrameMeasurement.isComplete`).
    func completeMeasurement(ofPlan index: Int, frame number: Int) -> FrameMeasurement {
      analyze(number)
      return classifiers.measureHolding(analyzer.spectrum(number & 1), plan: index)
    }

    /// Makes the analyser hold the pair of frame `number` (the second
    /// frame silent when it is not due: the stream ended).
    private func analyze(_ number: Int) {
      let first = number & ~1
      guard first != pair else { return }
      analyzer.analyze(
        ring.frame(first), first + 1 < ring.framesDue ? ring.frame(first + 1) : nil)
      pair = first
      measuredFrames = (false, false)
    }
  }

  /// One plan's stages, owned by the analysis whose spectra it reads.
  struct PlanDecoder {
    let classifier: ToneFrameClassifier
    var tracker: ToneTracker
    var interpreter: ToneInterpreter
    /// For a siren plan, how long a signal sounds before it is reported.
    let reportAfter: Double?
    /// The symbol the last frame found, if any.
    var lastSymbol: Int? = nil
    /// The last tone found with the full share, and its level (dBFS).
    var held: (symbol: Int, level: Double)? = nil
  }

  public let plans: [TonePlan]
  public let sampleRate: Double
  private let settings: ToneDetectionSettings
  private(set) var analyses: [Analysis] = []
  /// What the analyses listen to, made from the input.
  let streams: ToneStreams
  private var subAudible: [CTCSSDetector] = []
  /// Decimates the input a `ToneDecoderAhead` left undecimated, into
  /// `decimated`.
  private var decimator: FIRDecimator?
  private var decimated: UnsafeMutablePointer<Float>?

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
    zveiPlans = Set(plans.filter(\.isZVEI).map(\.name))
    for plan in plans { try Self.checkRate(plan, sampleRate: sampleRate, settings: settings) }
    let heard = plans.map(Self.stream)
    // Signalling tones lie below a few kHz: they are analysed at the lowest
    // rate, a whole fraction of the input's, that keeps their band clear.
    streams = ToneStreams(
      sampleRate: sampleRate, bandTop: plans.compactMap(Self.bandTop).max() ?? 0,
      isFullHeard: heard.contains(.full) || heard.contains(nil),
      isSignallingHeard: heard.contains(.signalling), isBlankedHeard: heard.contains(.blanked))
    if streams.canLeaveDecimation, let decimator = streams.decimatorCopy() {
      self.decimator = decimator
      decimated = .allocate(capacity: decimator.maximumOutputCount(forInput: ToneStreams.chunk))
    }
    for (plan, stream) in zip(plans, heard) {
      guard let stream else {
        if case .subAudible(let table) = plan.kind {
          subAudible.append(
            CTCSSDetector(
              plan: plan.name, tones: table, sampleRate: sampleRate,
              minimumLevel: settings.minimumLevel))
        }
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
      let rate = stream == .full ? sampleRate : streams.signallingRate
      let lag = stream == .full ? 0 : streams.signallingDelay
      let frameLength = SpectrumAnalyzer.friendlyLength(
        near: Int((frameSeconds * rate).rounded()))
      let hop = max(1, Int((hopSeconds * rate).rounded()))
      let analysis =
        analyses.first {
          $0.ring.frameLength == frameLength && $0.ring.hop == hop && $0.stream == stream
        }
        ?? {
          let created = Analysis(
            frameLength: frameLength, hop: hop, sampleRate: rate, stream: stream)
          analyses.append(created)
          return created
        }()
      let classifier = ToneFrameClassifier(
        plan: plan, sampleRate: rate, frameLength: frameLength, settings: settings)
      analysis.add(
        PlanDecoder(
          classifier: classifier,
          tracker: ToneTracker(
            hop: Double(hop) / rate, firstCentre: Double(frameLength) / 2 / rate - lag,
            bridgedGap: Self.bridgedGap(plan, hop: Double(hop) / rate),
            needsHarmonics: classifier.needsHarmonicEvidence),
          interpreter: ToneInterpreter(plan: plan, settings: settings),
          reportAfter: {
            if case .alarm(_, let after) = plan.kind { after } else { nil }
          }()))
    }
  }

  /// Frames without a finding that a run of `plan` outlasts: a quarter of
  /// a tone of a sequence or a page, at most 50 ms (a tone near the top of
  /// a noisy FM channel's band fades under the holding share for 15 ms at
  /// 6 dB CNR). None for DTMF, where a 40 ms pause separates keys.
  private static func bridgedGap(_ plan: TonePlan, hop: Double) -> Int {
    switch plan.kind {
    case .sequential, .pager: Int(min(0.25 * plan.toneDuration, 0.05) / hop)
    case .dualTone, .alarm, .arbitrary, .characterCode, .subAudible: 0
    }
  }

  /// The stream a plan's analysis listens to, or `nil` for plans decoded
  /// by a detector of their own (CTCSS, on the input as it is).
  private static func stream(_ plan: TonePlan) -> ToneStreams.Stream? {
    switch plan.kind {
    case .characterCode: .full
    // Single tones are found in the blanked stream; pairs of tones in
    // the stream as it came (see `ImpulseBlanker`).
    case .sequential, .pager, .arbitrary: .blanked
    case .dualTone, .alarm: .signalling
    case .subAudible: nil
    }
  }

  /// The highest input rate decoded: an SDR's 10 MS/s. The full-rate
  /// analyses' frames and the decimator's filter grow with the rate.
  public static let maximumSampleRate = 10_000_000.0

  private static func checkRate(
    _ plan: TonePlan, sampleRate: Double, settings: ToneDetectionSettings
  ) throws(TonePlanError) {
    guard sampleRate <= maximumSampleRate else {
      throw TonePlanError(
        .sampleRateTooHigh(limit: Int(maximumSampleRate)),
        description:
          "tones are decoded from input of up to \(Int(maximumSampleRate)) Hz, the input has \(Int(min(sampleRate, 1e15))) Hz"
      )
    }
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

  /// The highest frequency a plan's analysis looks at (its band), or `nil`
  /// for plans analysed at the full rate or on their own.
  private static func bandTop(_ plan: TonePlan) -> Double? {
    switch plan.kind {
    case .characterCode, .subAudible: return nil
    case .dualTone, .sequential, .arbitrary, .pager, .alarm:
      let highest = plan.symbols.flatMap(\.frequencies).max() ?? 0
      return SignallingBand.top(highest: highest)
    }
  }

  /// Decodes `samples`, calling `emit` for every tone and sequence completed.
  public func process(_ samples: UnsafeBufferPointer<Float>, emit: (ToneDecoderEvent) -> Void) {
    func linked(_ event: ToneDecoderEvent) { link(event, to: emit) }
    streams.prepare(samples) { hear($0, $1, emit: linked) }
  }

  /// Decodes a block prepared by `ToneDecoderAhead` (on another thread),
  /// as `process` would its input; calls `emit` as `process` would.
  package func process(_ block: ToneBlock, emit: (ToneDecoderEvent) -> Void) {
    func linked(_ event: ToneDecoderEvent) { link(event, to: emit) }
    hear(block, emit: linked)
  }

  /// Gives every stretch of `block` to the analyses, with the frames
  /// analysed ahead in it.
  private func hear(_ block: ToneBlock, emit: (ToneDecoderEvent) -> Void) {
    for (analysis, frames) in zip(analyses, block.frames) { analysis.ahead = frames }
    defer { for analysis in analyses { analysis.ahead = nil } }
    for segment in block.segments {
      guard segment.decimator >= 0, let decimated else {
        hear(segment.stream, segment.samples, emit: emit)
        continue
      }
      let (held, count, phase) = block.decimatorState(segment)
      decimator!.restore(held, held: count, phase: phase)
      let produced = decimator!.process(segment.samples, into: decimated)
      hear(.signalling, UnsafeBufferPointer(start: decimated, count: produced), emit: emit)
    }
  }

  /// Gives `samples` of `stream` to its analyses (and the input to the
  /// sub-audible detectors).
  private func hear(
    _ stream: ToneStreams.Stream, _ samples: UnsafeBufferPointer<Float>,
    emit: (ToneDecoderEvent) -> Void
  ) {
    for analysis in analyses where analysis.stream == stream {
      analysis.ring.write(samples) { frameDue(analysis, emit: emit) }
    }
    if stream == .full {
      for detector in subAudible { detector.process(samples, emit: emit) }
    }
  }

  /// The last ZVEI call, which a siren signal that follows within
  /// `callPause` is for.
  private var lastCall: DecodedSequence?
  /// The names of the ZVEI plans decoded, whose calls address siren signals.
  private let zveiPlans: Set<String>
  /// Seconds from a ZVEI call's end to a siren signal's start for the
  /// signal to be that call's: up to 1 s after it, or overlapping its last
  /// tone a little (the signal's start is measured from frames that may
  /// reach back into the call).
  public static let callPause = -0.2...1.0

  /// Gives `event` to `emit`, a siren signal with the ZVEI call just before it.
  private func link(_ event: ToneDecoderEvent, to emit: (ToneDecoderEvent) -> Void) {
    guard case .sequence(var sequence) = event else { return emit(event) }
    if sequence.kind == .sequential && zveiPlans.contains(sequence.plan) {
      lastCall = sequence
    } else if sequence.kind == .alarm, let call = lastCall {
      let pause = sequence.time - (call.time + call.duration)
      if Self.callPause.contains(pause) { sequence.call = call.text }
    }
    emit(.sequence(sequence))
  }

  deinit { decimated?.deallocate() }

  /// Clicks blanked so far, in blocks of `blockLength` samples (about 0.5 ms).
  public var blankedClicks: Int { streams.blankedClicks }

  /// Ends the stream: reports what was still open.
  public func finish(emit: (ToneDecoderEvent) -> Void) {
    func linked(_ event: ToneDecoderEvent) { link(event, to: emit) }
    streams.finish { hear($0, $1, emit: linked) }
    close(emit: linked)
  }

  /// Ends a stream prepared by `ToneDecoderAhead`: decodes its last block
  /// (`ToneDecoderAhead.prepareEnd`), then reports what was still open.
  package func finish(_ block: ToneBlock, emit: (ToneDecoderEvent) -> Void) {
    func linked(_ event: ToneDecoderEvent) { link(event, to: emit) }
    hear(block, emit: linked)
    close(emit: linked)
  }

  private func close(emit: (ToneDecoderEvent) -> Void) {
    for detector in subAudible { detector.finish(emit: emit) }
    for analysis in analyses {
      // The last frame, when it waits for a pair that will not come.
      if analysis.ring.framesDue & 1 == 1 {
        decide(analysis, frame: analysis.ring.framesDue - 1, emit: emit)
      }
      for index in analysis.plans.indices {
        if analysis.plans[index].tracker.finish(),
          let run = analysis.plans[index].tracker.closedRun,
          analysis.plans[index].reportAfter == nil,
          analysis.plans[index].classifier.accepts(run)
        {
          analysis.plans[index].interpreter.take(run, emit: emit)
        }
        analysis.plans[index].interpreter.finish(emit: emit)
      }
    }
  }

  /// Frames put off at most in a row while nothing is heard (a whole
  /// frame's length at 5 ms hops).
  static let maximumSkip = FrameSkipRule.maximumSkip
  /// Hops back a ring must reach: a frame decided with its pair's second
  /// frame due, the frames put off before it, and their pairs' first ones.
  static let framesHeld = maximumSkip + 2

  /// Whether a run `classifier` accepted is no key after all: a held
  /// note's partials, sounding before the run began, a pair over music's
  /// bass not held like a key, or a voice's pair of harmonics, by the
  /// series heard over its whole span.
  private func isVoice(_ run: ToneRun, _ classifier: ToneFrameClassifier, _ analysis: Analysis)
    -> Bool
  {
    guard let probe = analysis.seriesProbe, classifier.looksForVoices else { return false }
    // A key too short to be reported is dropped whatever it is: no probe needed.
    guard run.duration >= classifier.shortestKey else { return false }
    if let onset = analysis.onsetProbe, onset.soundedBefore(run, ring: analysis.ring) {
      return true
    }
    if let lowBand = analysis.lowBandProbe,
      !classifier.acceptsOverBass(run, bass: { lowBand.bass(run, ring: analysis.ring) })
    {
      return true
    }
    return !classifier.acceptsSpan(run) { probe.evidence(run, ring: analysis.ring) }
  }

  /// The next frame is due: an odd frame completes a pair, whose two
  /// frames are decided in order.
  private func frameDue(_ analysis: Analysis, emit: (ToneDecoderEvent) -> Void) {
    let newest = analysis.ring.framesDue - 1
    guard newest & 1 == 1 else { return }
    decide(analysis, frame: newest - 1, emit: emit)
    decide(analysis, frame: newest, emit: emit)
  }

  /// Decides frame `number`. While frames hold nothing any plan could use
  /// (not even the lobes' raw share a tone needs) and no tone is in
  /// progress, up to `maximumSkip` frames in a row are put off; the next
  /// one analysed decides: if it holds something, the ones put off are
  /// analysed after all, in order, before it; if not, they count as empty.
  /// A tone long enough to report always fills one analysed frame, so the
  /// events are those of analysing every frame, for a quarter of the work
  /// in silence or noise.
  private func decide(_ analysis: Analysis, frame number: Int, emit: (ToneDecoderEvent) -> Void) {
    if analysis.skip.putsOff() { return }
    var measured = analysis.measurements(of: number)
    // The plans are worked on in place: no copies, no access checks per field.
    analysis.plans.withUnsafeMutableBufferPointer { plans in
      var isQuiet = true
      for index in plans.indices {
        // Read in place: a copy of the tracker would retain its arrays.
        if !measured[index].isQuiet || plans[index].tracker.isRunOpen
          || plans[index].tracker.isToneRising
        {
          isQuiet = false
        }
      }
      let (replay, skipped) = analysis.skip.decided(frame: number, isQuiet: isQuiet)
      if !replay.isEmpty {
        for earlier in replay {
          let measuredEarlier = analysis.measurements(of: earlier)
          for index in plans.indices {
            track(
              &plans[index], measuredEarlier + index, analysis,
              { analysis.completeMeasurement(ofPlan: index, frame: earlier) }, emit: emit)
          }
        }
        measured = analysis.measurements(of: number)
      } else {
        for _ in 0..<skipped {
          for index in plans.indices { track(&plans[index], nil, analysis, emit: emit) }
        }
      }
      for index in plans.indices {
        track(
          &plans[index], measured + index, analysis,
          { analysis.completeMeasurement(ofPlan: index, frame: number) }, emit: emit)
      }
    }
  }

  /// One frame for one plan: its tone decided from what it holds (none
  /// without a measurement; `complete` measures it further when a tone is
  /// held), then followed through the tracker and the interpreter.
  @inline(__always) private func track(
    _ plan: inout PlanDecoder, _ measured: UnsafePointer<FrameMeasurement>?,
    _ analysis: Analysis,
    _ complete: () -> FrameMeasurement = { fatalError("no frame to measure") },
    emit: (ToneDecoderEvent) -> Void
  ) {
    // The frame's tone, read in place from its measurement, and whether it is weak.
    var isWeak: Bool?
    var found = measured
    if let measured {
      // The tone in progress: found in the last frame, or still the open run.
      let holding = plan.held.flatMap {
        $0.symbol == plan.lastSymbol || $0.symbol == plan.tracker.openSymbol ? $0 : nil
      }
      if holding == nil || measured.pointee.isComplete {
        isWeak = plan.classifier.decide(measured, holding: holding)
      } else {
        analysis.completed.pointee = complete()
        found = UnsafePointer(analysis.completed)
        isWeak = plan.classifier.decide(found!, holding: holding)
      }
    }
    plan.lastSymbol = nil
    if let isWeak, let found {
      let symbol = found.pointee.tone.symbol
      if !isWeak { plan.lastSymbol = symbol }
      if found.pointee.tone.share >= settings.minimumShare {
        // The loudest level the tone reached: its fading tail is not held.
        let level = found.pointee.tone.level
        plan.held = (symbol, plan.held?.symbol == symbol ? max(plan.held!.level, level) : level)
      }
    }
    if plan.tracker.add(isWeak.map { (found!, $0) }), let run = plan.tracker.closedRun {
      if plan.reportAfter != nil {
        plan.interpreter.ended(run)
      } else if plan.classifier.accepts(run), !isVoice(run, plan.classifier, analysis) {
        plan.interpreter.take(run, emit: emit)
      }
    }
    // A siren signal is reported while it sounds, once it has lasted long enough.
    if let after = plan.reportAfter, let run = plan.tracker.runReaching(after),
      plan.classifier.accepts(run)
    {
      plan.interpreter.take(run, emit: emit)
    }
    if !plan.tracker.isRunOpen && !plan.tracker.isToneRising {
      plan.interpreter.advance(to: plan.tracker.latestCentre, emit: emit)
    }
  }
}
