import SignalDSP
import TonePlans

/// What one analysed frame holds for one plan: which symbol, at which
/// measured frequencies and levels.
struct FrameTone: Equatable {
  /// Index into the plan's symbols; for character-code plans the ASCII
  /// code, and 0 for the marker tone.
  var symbol: Int
  var frequencies: (Double, Double)
  /// Levels in dBFS; the second is −∞ for single tones.
  var levels: (Double, Double)
  /// Both tones together, in dBFS.
  var level: Double
  /// The tones' share of the band's power.
  var share: Double = 1
  /// Each tone's complex value at the bin of its nominal frequency: the
  /// phase advance from frame to frame measures the frequency far more
  /// finely than the bins do.
  var phasors: ((re: Double, im: Double), (re: Double, im: Double)) = ((0, 0), (0, 0))
  /// A single tone with at least `holdingShare` but less than the share
  /// needed here: it may lengthen a run of its symbol, never start one.
  var isWeak = false
  /// For DTMF: the frame's power spectrum over the voice band, from bin
  /// `firstBin` of width `binWidth` (Hz), kept so that the run, once its
  /// frequencies are measured finely, can look for the other harmonics of
  /// a voice its pair could belong to (`DualToneRunRule.HarmonicPair`).
  /// Unused (`binWidth` 0) for every other plan. 64 bins: 300 to 3,450 Hz
  /// at the 50 Hz bins of DTMF's 20 ms frames.
  var bandPowers = InlineArray<64, Float>(repeating: 0)
  var firstBin = 0
  var binWidth = 0.0

  static func == (a: FrameTone, b: FrameTone) -> Bool { a.symbol == b.symbol }
}

extension FrameTone {
  /// Keeps `spectrum`'s powers from bin `first` (as many as `bandPowers`
  /// holds, none past `last`).
  mutating func keepBand(_ spectrum: Spectrum, from first: Int, to last: Int) {
    firstBin = first
    binWidth = spectrum.binWidth
    let count = min(bandPowers.count, last - first + 1)
    for index in 0..<max(0, count) { bandPowers[index] = Float(spectrum.power[first + index]) }
  }
}

/// What one analysed frame holds for one plan before the tone in progress
/// is taken into account (`ToneFrameClassifier.measure`, then `decide`).
struct FrameMeasurement {
  /// Whether the frame is too quiet for any finding with no tone in
  /// progress, and with one held.
  var isQuiet: Bool
  var isQuietHolding: Bool
  /// The tone the frame holds if any finding can (`hasTone`; otherwise
  /// what is left of an earlier frame's): for pairs of tones, its share is
  /// measured as far as a held tone needs. Kept beside a flag rather than
  /// as an optional: Swift writes `nil` into an optional this large, and
  /// reads a field through `?` or `!`, by copying all its room.
  var tone = FrameTone(symbol: -1, frequencies: (0, 0), levels: (0, 0), level: -.infinity)
  var hasTone = false
  /// For pairs of tones, their main lobes' raw share of the band (−1 for a
  /// silent band).
  var rawShare: Double = -1
  /// Whether it also decides a frame with a tone held: a frame quiet for
  /// any other, or a pair's share between what a held and what a new tone
  /// needs, is measured that far only when asked (`measure(_:holding:)`).
  var isComplete = true
}

/// Decides, frame by frame, whether a plan's tones are present: the
/// strongest peak(s) in the plan's range must hold a share of the band's
/// power, be loud enough, lie within the frequency tolerance of a nominal
/// tone and, for DTMF, keep the twist within limits. Immutable; owned by
/// the decoder, and a copy (`withTablesOfItsOwn`) by each other thread
/// that measures: the reference counts of shared tables would be written
/// from both.
final class ToneFrameClassifier {
  private enum Layout {
    /// DTMF: one tone from each group (`groups`).
    case dual
    /// One tone per symbol (`frequencies`).
    case single
    /// Marker plus `base + step × code`.
    case characterCode(marker: Double, base: Double, step: Double)
  }

  /// How many tolerances off its nominal tone a frame's peak may be:
  /// frames pass with a looser test, the run's finer estimate decides.
  static let frameTolerances = 1.8
  /// How many tolerances beyond the outer tones the peaks are searched for.
  static let searchTolerances = 2.0
  /// Decibels a single frame's twist may lie beyond the settings' limits
  /// (the run's median decides): below the reverse limit, since GSM 06.10
  /// lets a weak high tone fade for a frame or two; above the standard one.
  static let frameTwistSlack = (reverse: 8.0, standard: 4.0)

  private let layout: Layout
  /// Pairs of tones: the nominal frequencies of each group, and the symbol
  /// of each pair at `symbols[low × high.count + high]` (−1 for none).
  private let groups: (low: [Double], high: [Double], symbols: [Int])
  /// Single tones: the nominal frequencies in symbol order.
  private let frequencies: [Double]
  private let settings: ToneDetectionSettings
  private let band: (Double, Double)
  private let search: (Double, Double)
  private let toleranceHz: [Double]
  /// The band's, the search range's and the groups' split bins, for the
  /// frame length the decoder analyses (made for another on demand).
  private let binsFor: Bins

  private struct Bins {
    var width: Double = 0
    var band = (0, 0)
    var search = (0, 0)
    var split = 0

    init(_ classifier: ToneFrameClassifier, _ spectrum: Spectrum) {
      self.init(
        groups: classifier.groups, band: classifier.band, search: classifier.search,
        width: spectrum.binWidth, lastBin: spectrum.frameLength / 2)
    }

    init(
      groups: (low: [Double], high: [Double], symbols: [Int]), band: (Double, Double),
      search: (Double, Double), width: Double, lastBin: Int
    ) {
      func bin(_ frequency: Double) -> Int {
        min(lastBin, max(0, Int((frequency / width).rounded())))
      }
      self.width = width
      self.band = (bin(band.0), bin(band.1))
      self.search = (bin(search.0), bin(search.1))
      if let low = groups.low.last, let high = groups.high.first { split = bin((low + high) / 2) }
    }
  }
  /// The median share a pair of tones must hold over its run: a siren
  /// signal held for seconds has proved itself by its length.
  private let runShare: Double
  /// Whether its frames keep the band's spectrum for the run to look for
  /// a voice's harmonics (DTMF; a siren signal held for seconds has
  /// proved itself by its length).
  let looksForVoices: Bool
  /// The bins of the analysed spectra this plan reads: its band and search
  /// range, with room for a main lobe and its parabola.
  var readBins: Range<Int> {
    max(0, min(binsFor.band.0, binsFor.search.0) - 3)..<max(binsFor.band.1, binsFor.search.1) + 4
  }
  /// A share no decision asks more of (a steady key's clean quarter,
  /// `DualToneRunRule.SteadyKey.cleanShare`, or the settings' own
  /// thresholds if higher).
  private let sureShare: Double

  /// - Parameter frameLength: samples per frame of the spectra it will be given.
  init(plan: TonePlan, sampleRate: Double, frameLength: Int, settings: ToneDetectionSettings) {
    self.settings = settings
    sureShare = max(
      DualToneRunRule.SteadyKey.cleanShare, settings.minimumShare, settings.holdingShare,
      settings.minimumRunShare)
    if case .alarm = plan.kind {
      runShare = min(DualToneRunRule.alarmRunShare, settings.minimumRunShare)
    } else {
      runShare = settings.minimumRunShare
    }
    if case .dualTone = plan.kind { looksForVoices = true } else { looksForVoices = false }
    let nyquist = sampleRate / 2
    let tolerance = settings.frequencyTolerance
    switch plan.kind {
    case .dualTone, .alarm:
      let low = Array(Set(plan.symbols.map { $0.frequencies[0] })).sorted()
      let high = Array(Set(plan.symbols.map { $0.frequencies[1] })).sorted()
      var symbols = [Int](repeating: -1, count: low.count * high.count)
      for (index, entry) in plan.symbols.enumerated() {
        let row = low.firstIndex(of: entry.frequencies[0])!
        let column = high.firstIndex(of: entry.frequencies[1])!
        symbols[row * high.count + column] = index
      }
      layout = .dual
      groups = (low, high, symbols)
      frequencies = []
      search = (
        low.first! * (1 - Self.searchTolerances * tolerance),
        high.last! * (1 + Self.searchTolerances * tolerance)
      )
      band = (
        SignallingBand.voiceLow, min(nyquist, SignallingBand.top(highest: high.last!))
      )
      toleranceHz = []
    case .sequential, .arbitrary, .subAudible, .pager:
      let frequencies: [Double]
      if case .subAudible(let table) = plan.kind {
        frequencies = table
      } else {
        frequencies = plan.symbols.map { $0.frequencies[0] }
      }
      layout = .single
      groups = ([], [], [])
      self.frequencies = frequencies
      let lowest = frequencies.min()!
      let highest = frequencies.max()!
      search = (
        lowest * (1 - Self.searchTolerances * tolerance),
        min(nyquist, highest * (1 + Self.searchTolerances * tolerance))
      )
      band = (
        SignallingBand.bottom(lowest: lowest), min(nyquist, SignallingBand.top(highest: highest))
      )
      // Within the tolerance, and never past halfway to a neighbouring tone.
      toleranceHz = frequencies.map { frequency in
        let nearest = frequencies.filter { $0 != frequency }.map { abs($0 - frequency) }.min()
        return min(frequency * tolerance, 0.45 * (nearest ?? .infinity))
      }
    case .characterCode(let marker, let base, let step):
      layout = .characterCode(marker: marker, base: base, step: step)
      groups = ([], [], [])
      frequencies = []
      search = (marker - step, min(nyquist, base + step * 127))
      band = (marker - SignallingBand.belowMarker, nyquist)
      toleranceHz = [0.4 * step]
    }
    binsFor = Bins(
      groups: groups, band: band, search: search, width: sampleRate / Double(frameLength),
      lastBin: frameLength / 2)
  }

  /// What a frame holds for this plan: `decide` takes it from there. The
  /// cheap tests (level, frequency) run first; the noise floor only for
  /// frames that pass them. Measured as far as a frame with no tone in
  /// progress needs, or with `holding` as far as one with a tone held
  /// needs (see `FrameMeasurement.isComplete`).
  func measure(_ spectrum: Spectrum, holding: Bool = false) -> FrameMeasurement {
    var measured = FrameMeasurement(isQuiet: true, isQuietHolding: true)
    measure(spectrum, holding: holding, into: &measured)
    return measured
  }

  /// `measure(_:holding:)` written straight into `measured` (an
  /// initialised measurement, overwritten), without moving a copy of it.
  func measure(
    _ spectrum: Spectrum, holding: Bool = false,
    into measured: UnsafeMutablePointer<FrameMeasurement>
  ) {
    let bins = bins(for: spectrum)
    // Most frames hold no tone: rule them out by the lobes' raw share of
    // the band, before any logarithm, refinement or noise estimate.
    let bandPower = spectrum.bandPower(bins: bins.band.0, bins.band.1)
    let strongest: (Int, Int)
    let lobes: Double
    switch layout {
    case .dual:
      strongest = (
        spectrum.strongestBin(bins.search.0, bins.split),
        spectrum.strongestBin(bins.split, bins.search.1)
      )
      lobes = spectrum.lobe(around: strongest.0) + spectrum.lobe(around: strongest.1)
    case .single, .characterCode:
      strongest = (spectrum.strongestBin(bins.search.0, bins.search.1), 0)
      lobes = spectrum.lobe(around: strongest.0)
    }
    // Field by field: most frames end here, and their tone's room (a few
    // hundred bytes) need not be written.
    measured.pointee.isQuiet = isQuiet(lobes, of: bandPower, holding: false)
    measured.pointee.isQuietHolding = isQuiet(lobes, of: bandPower, holding: true)
    measured.pointee.hasTone = false
    measured.pointee.rawShare = -1
    measured.pointee.isComplete = true
    guard !measured.pointee.isQuietHolding else { return }
    guard holding || !measured.pointee.isQuiet else {
      measured.pointee.isComplete = false
      return
    }
    switch layout {
    case .dual:
      guard
        let lowPeak = spectrum.peak(at: strongest.0),
        let highPeak = spectrum.peak(at: strongest.1),
        let row = nearest(lowPeak.frequency, in: groups.low),
        let column = nearest(highPeak.frequency, in: groups.high)
      else { return }
      let lowLevel = Decibels.fromAmplitude(lowPeak.amplitude) ?? -.infinity
      let highLevel = Decibels.fromAmplitude(highPeak.amplitude) ?? -.infinity
      // One frame's levels are noisy; the run's median decides the twist.
      let twist = highLevel - lowLevel
      let symbol = groups.symbols[row * groups.high.count + column]
      guard min(lowLevel, highLevel) >= settings.minimumLevel,
        twist >= settings.twist.lowerBound - Self.frameTwistSlack.reverse,
        twist <= settings.twist.upperBound + Self.frameTwistSlack.standard,
        symbol >= 0
      else { return }
      let lobePower = lowPeak.lobePower + highPeak.lobePower
      let least = min(settings.holdingShare, settings.minimumShare)
      let (rawShare, share) = tonalShare(
        lobePower, lobes: 2, of: bandPower, spectrum,
        atLeast: holding ? least : settings.minimumShare)
      measured.pointee.isComplete = share != nil || rawShare < 0.5 * least
      let combined =
        (lowPeak.amplitude * lowPeak.amplitude + highPeak.amplitude * highPeak.amplitude)
        .squareRoot()
      measured.pointee.rawShare = rawShare
      measured.pointee.hasTone = true
      measured.pointee.tone = FrameTone(
        symbol: symbol, frequencies: (lowPeak.frequency, highPeak.frequency),
        levels: (lowLevel, highLevel), level: Decibels.fromAmplitude(combined) ?? -.infinity,
        share: share ?? 0,
        phasors: (
          spectrum.value(atBin: spectrum.bin(of: groups.low[row])),
          spectrum.value(atBin: spectrum.bin(of: groups.high[column]))
        ))
      if looksForVoices, share != nil {
        measured.pointee.tone.keepBand(spectrum, from: bins.band.0, to: bins.band.1)
      }
    case .single:
      guard let peak = loudEnoughPeak(spectrum, at: strongest.0) else { return }
      var best = 0
      for index in 1..<frequencies.count
      where abs(frequencies[index] - peak.frequency) < abs(frequencies[best] - peak.frequency) {
        best = index
      }
      guard abs(frequencies[best] - peak.frequency) <= Self.frameTolerances * toleranceHz[best],
        let share = tonalShare(
          peak.lobePower, lobes: 1, of: bandPower, spectrum, atLeast: settings.holdingShare
        ).share,
        share >= settings.holdingShare
      else { return }
      measured.pointee.hasTone = true
      measured.pointee.tone = single(best, peak, nominal: frequencies[best], share: share, spectrum)
    case .characterCode(let marker, let base, let step):
      guard let peak = loudEnoughPeak(spectrum, at: strongest.0) else { return }
      let code = ((peak.frequency - base) / step).rounded()
      let isMarker = abs(peak.frequency - marker) <= toleranceHz[0]
      guard
        isMarker
          || (code >= 32 && code < 127
            && abs(peak.frequency - (base + step * code)) <= toleranceHz[0]),
        let share = tonalShare(peak.lobePower, lobes: 1, of: bandPower, spectrum, atLeast: 0.6)
          .share,
        share >= settings.minimumShare
      else { return }
      measured.pointee.hasTone = true
      measured.pointee.tone =
        isMarker
        ? single(0, peak, nominal: marker, share: share, spectrum)
        : single(Int(code), peak, nominal: base + step * code, share: share, spectrum)
    }
  }

  /// Whether the frame holds a tone for this plan: `nil` when none
  /// qualifies, else whether the tone (`measured`'s, read in place: it
  /// holds a few hundred bytes) is weak (`FrameTone.isWeak`).
  /// `holding` is the tone in progress: its symbol is kept at
  /// `holdingShare` while its level stays within 10 dB of the level given
  /// (a pause between two presses of one key is never bridged). With a tone
  /// held, `measured` must be complete.
  func decide(
    _ measured: UnsafePointer<FrameMeasurement>, holding: (symbol: Int, level: Double)?
  ) -> Bool? {
    if measured.pointee.isQuiet
      && (!isLenient(holding: holding != nil) || measured.pointee.isQuietHolding)
    {
      return nil
    }
    guard measured.pointee.hasTone else { return nil }
    let symbol = measured.pointee.tone.symbol
    let share = measured.pointee.tone.share
    let required =
      isHeld(symbol, level: measured.pointee.tone.level, holding)
      ? settings.holdingShare : settings.minimumShare
    switch layout {
    case .dual:
      guard measured.pointee.rawShare >= 0.5 * required, share >= required else { return nil }
      return measured.pointee.tone.isWeak
    case .single:
      return share < required
    case .characterCode:
      return measured.pointee.tone.isWeak
    }
  }

  /// Whether a frame cannot hold this plan's tones (with no tone in
  /// progress, or with one held): their strongest main lobes (`lobes`)
  /// hold less than half the share any finding needs (one held, or a weak
  /// single tone, needs `holdingShare`) of the band's raw power. The
  /// decoder puts off frames while they are all quiet.
  private func isQuiet(_ lobes: Double, of bandPower: Double, holding: Bool) -> Bool {
    guard bandPower > 0 else { return true }
    let least =
      0.5
      * (isLenient(holding: holding)
        ? min(settings.holdingShare, settings.minimumShare) : settings.minimumShare)
      * bandPower
    return lobes < least
  }

  /// Whether a held (or weak) tone's frames need only the share a held tone needs.
  private func isLenient(holding: Bool) -> Bool {
    switch layout {
    case .single: true
    case .dual, .characterCode: holding
    }
  }

  private func bins(for spectrum: Spectrum) -> Bins {
    spectrum.binWidth == binsFor.width ? binsFor : Bins(self, spectrum)
  }

  private func isHeld(_ symbol: Int, level: Double, _ holding: (symbol: Int, level: Double)?)
    -> Bool
  {
    guard let holding, symbol >= 0 else { return false }
    return symbol == holding.symbol && level >= holding.level - 10
  }

  /// The share of the band's power above the noise floor that `lobePower`
  /// (the main lobes of `lobes` peaks) holds above the same floor: white
  /// noise does not make a tone less of a tone, speech's other harmonics do.
  /// Also the lobes' raw share of the band; the share is `nil` when the raw
  /// share alone is under half of `required` (no noise estimate is made).
  private func tonalShare(
    _ lobePower: Double, lobes: Int, of rawPower: Double, _ spectrum: Spectrum,
    atLeast required: Double
  ) -> (raw: Double, share: Double?) {
    guard rawPower > 0 else { return (-1, nil) }
    let rawShare = lobePower / rawPower
    // Far too little even before the noise is taken out: skip the estimate.
    guard rawShare >= 0.5 * required else { return (rawShare, nil) }
    // Taking the noise out only raises a share this large (the lobes hold
    // far more of the power than of the bins), and every decision on a
    // share asks for less: the raw share decides as the exact one would.
    guard rawShare < sureShare else { return (rawShare, rawShare) }
    let (low, high) = bins(for: spectrum).band
    let noise = spectrum.noisePower(bins: low, high)
    let noisePerBin = noise / Double(max(low, high) - low + 1)
    let tonal = max(0, lobePower - Double(5 * lobes) * noisePerBin)
    return (rawShare, tonal / max(rawPower - noise, rawPower * 1e-3))
  }

  private func loudEnoughPeak(_ spectrum: Spectrum, at best: Int) -> SpectralPeak? {
    guard let peak = spectrum.peak(at: best),
      (Decibels.fromAmplitude(peak.amplitude) ?? -.infinity) >= settings.minimumLevel
    else { return nil }
    return peak
  }

  private func single(
    _ symbol: Int, _ peak: SpectralPeak, nominal: Double, share: Double,
    _ spectrum: Spectrum
  ) -> FrameTone {
    let level = Decibels.fromAmplitude(peak.amplitude) ?? -.infinity
    return FrameTone(
      symbol: symbol, frequencies: (peak.frequency, 0), levels: (level, -.infinity), level: level,
      share: share, phasors: (spectrum.value(atBin: spectrum.bin(of: nominal)), (0, 0)))
  }

  /// This classifier with copies of its tables.
  func withTablesOfItsOwn() -> ToneFrameClassifier { ToneFrameClassifier(copying: self) }

  private init(copying other: ToneFrameClassifier) {
    layout = other.layout
    groups = (
      other.groups.low.map { $0 }, other.groups.high.map { $0 }, other.groups.symbols.map { $0 }
    )
    frequencies = other.frequencies.map { $0 }
    settings = other.settings
    band = other.band
    search = other.search
    toleranceHz = other.toleranceHz.map { $0 }
    binsFor = other.binsFor
    runShare = other.runShare
    looksForVoices = other.looksForVoices
    sureShare = other.sureShare
  }

  /// The nominal frequencies of a frame symbol.
  func nominalFrequencies(of symbol: Int) -> (Double, Double) {
    switch layout {
    case .dual:
      let cell = groups.symbols.firstIndex(of: symbol)!
      return (groups.low[cell / groups.high.count], groups.high[cell % groups.high.count])
    case .single: return (frequencies[symbol], 0)
    case .characterCode(let marker, let base, let step):
      return (symbol == 0 ? marker : base + step * Double(symbol), 0)
    }
  }

  /// Whether a whole run's measured frequencies are within tolerance:
  /// frames pass with a looser test, the run's finer estimate decides.
  func accepts(_ run: ToneRun) -> Bool {
    let nominal = nominalFrequencies(of: run.symbol)
    switch layout {
    case .dual:
      let errors = Self.errors(of: run, from: nominal)
      return passesBeforeHarmonics(run, errors: errors, tolerance: pairTolerance(run))
        && DualToneRunRule.HarmonicPair.holds(run, errors: errors)
        && !(looksForVoices && DualToneRunRule.TwoNotes.holds(run, errors: errors))
    case .single:
      return abs(run.frequencies.0 - nominal.0) <= toleranceHz[run.symbol]
    case .characterCode:
      return abs(run.frequencies.0 - nominal.0) <= toleranceHz[0]
    }
  }

  /// How far a pair's tones may lie from their nominal frequencies,
  /// relative: a key's no further than a keypad may be off, a short
  /// tone's estimate closer still.
  private func pairTolerance(_ run: ToneRun) -> Double {
    if run.duration < DualToneRunRule.shortTone {
      return min(settings.frequencyTolerance, DualToneRunRule.shortToneTolerance)
    }
    return looksForVoices
      ? min(settings.frequencyTolerance, DualToneRunRule.keyTolerance)
      : settings.frequencyTolerance
  }

  /// Whether a pair of tones passes every rule but `HarmonicPair`.
  private func passesBeforeHarmonics(
    _ run: ToneRun, errors: (Double, Double), tolerance: Double
  ) -> Bool {
    errors.0 <= tolerance && errors.1 <= tolerance
      && settings.twist.contains(run.twist)
      && run.coherence >= DualToneRunRule.minimumCoherence
      && (run.share >= runShare || DualToneRunRule.SteadyKey.holds(run, errors: errors)
        || DualToneRunRule.LockedKey.holds(run, errors: errors)
        || DualToneRunRule.DentedKey.holds(run, errors: errors))
  }

  /// Whether `accepts` depends on `run`'s harmonic evidence: a pair that
  /// fails another rule, or is held like a key, is decided without it.
  func needsHarmonicEvidence(_ run: ToneRun) -> Bool {
    guard case .dual = layout, looksForVoices else { return false }
    let errors = Self.errors(of: run, from: nominalFrequencies(of: run.symbol))
    return passesBeforeHarmonics(run, errors: errors, tolerance: pairTolerance(run))
      && !DualToneRunRule.HarmonicPair.isHeldLikeAKey(run, errors: errors)
  }

  /// For DTMF, whether an accepted `run` is still a key with the
  /// `evidence` of a voice its whole span shows (`DualToneRunRule.VoiceSpan`,
  /// and for a key taken only as dented, `DualToneRunRule.DentedKey`),
  /// measured only for a run not held locked like a key.
  func acceptsSpan(_ run: ToneRun, evidence: () -> VoiceEvidence) -> Bool {
    let errors = Self.errors(of: run, from: nominalFrequencies(of: run.symbol))
    if DualToneRunRule.LockedKey.holds(run, errors: errors) { return true }
    let isDentedOnly =
      run.share < runShare && !DualToneRunRule.SteadyKey.holds(run, errors: errors)
    return isDentedOnly
      ? DualToneRunRule.DentedKey.showsNoVoice(evidence(), run: run, errors: errors)
      : DualToneRunRule.VoiceSpan.holds(run, errors: errors, evidence: evidence())
  }

  /// For DTMF, the shortest run reported as a key, in seconds.
  var shortestKey: Double { settings.shortestReportedTone }

  /// For DTMF, whether an accepted `run` is still a key over the bass
  /// `bass` measures (dB over the pair, nil if unknown;
  /// `DualToneRunRule.OverBass`), measured only for a run not held like a key.
  func acceptsOverBass(_ run: ToneRun, bass: () -> Double?) -> Bool {
    let errors = Self.errors(of: run, from: nominalFrequencies(of: run.symbol))
    if DualToneRunRule.OverBass.isHeldLikeAKey(run, errors: errors) { return true }
    guard let level = bass() else { return true }
    return level < DualToneRunRule.OverBass.bass
  }

  /// How far a pair's measured frequencies lie from its `nominal` ones,
  /// relative, each tone.
  private static func errors(of run: ToneRun, from nominal: (Double, Double)) -> (Double, Double) {
    (abs(run.frequencies.0 / nominal.0 - 1), abs(run.frequencies.1 / nominal.1 - 1))
  }

  /// The index of the nominal frequency within tolerance of `frequency`.
  private func nearest(_ frequency: Double, in nominal: [Double]) -> Int? {
    var best = 0
    for index in 1..<nominal.count
    where abs(nominal[index] - frequency) < abs(nominal[best] - frequency) {
      best = index
    }
    let error = abs(nominal[best] - frequency) / nominal[best]
    return error <= Self.frameTolerances * settings.frequencyTolerance ? best : nil
  }
}

/// The classifiers of one analysis's plans in storage of their own: a
/// frame is measured for each without copying one (a copy would count
/// references to its tables on every frame), and a thread that measures
/// ahead gets a set whose tables no other thread touches. Owned by one thread.
final class ClassifierSet {
  private let classifiers: UnsafeMutableBufferPointer<ToneFrameClassifier>

  /// Copies of `classifiers`, down to their tables.
  init(_ classifiers: [ToneFrameClassifier]) {
    self.classifiers = .allocate(capacity: classifiers.count)
    for (index, classifier) in classifiers.enumerated() {
      (self.classifiers.baseAddress! + index).initialize(to: classifier.withTablesOfItsOwn())
    }
  }

  deinit {
    classifiers.deinitialize()
    classifiers.deallocate()
  }

  var count: Int { classifiers.count }

  /// What `spectrum` holds for each plan, written over the initialised
  /// measurements `measured[0..<count]`.
  func measure(_ spectrum: Spectrum, into measured: UnsafeMutablePointer<FrameMeasurement>) {
    for index in 0..<classifiers.count {
      classifiers[index].measure(spectrum, into: measured + index)
    }
  }

  /// What `spectrum` holds for plan `index` with a tone held.
  func measureHolding(_ spectrum: Spectrum, plan index: Int) -> FrameMeasurement {
    classifiers[index].measure(spectrum, holding: true)
  }
}
