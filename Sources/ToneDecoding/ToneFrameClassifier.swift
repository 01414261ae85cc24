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

  static func == (a: FrameTone, b: FrameTone) -> Bool { a.symbol == b.symbol }
}

/// What one analysed frame holds for one plan before the tone in progress
/// is taken into account (`ToneFrameClassifier.measure`, then `decide`).
struct FrameMeasurement {
  /// Whether the frame is too quiet for any finding with no tone in
  /// progress, and with one held.
  var isQuiet: Bool
  var isQuietHolding: Bool
  /// The tone the frame holds if any finding can: for pairs of tones, its
  /// share is measured as far as a held tone needs.
  var tone: FrameTone? = nil
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
  /// The bins of the analysed spectra this plan reads: its band and search
  /// range, with room for a main lobe and its parabola.
  var readBins: Range<Int> {
    max(0, min(binsFor.band.0, binsFor.search.0) - 3)..<max(binsFor.band.1, binsFor.search.1) + 4
  }
  /// A share no decision asks more of (`isSteadyKey`'s clean quarter,
  /// or the settings' own thresholds if higher).
  private let sureShare: Double

  /// - Parameter frameLength: samples per frame of the spectra it will be given.
  init(plan: TonePlan, sampleRate: Double, frameLength: Int, settings: ToneDetectionSettings) {
    self.settings = settings
    sureShare = max(
      0.93, settings.minimumShare, settings.holdingShare, settings.minimumRunShare)
    if case .alarm = plan.kind {
      runShare = min(0.7, settings.minimumRunShare)
    } else {
      runShare = settings.minimumRunShare
    }
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
      search = (low.first! * (1 - 2 * tolerance), high.last! * (1 + 2 * tolerance))
      // From 300 Hz, as a telephone or radio voice channel: a CTCSS sub-tone
      // or hum below it is no part of the signalling band.
      band = (300, min(nyquist, max(3400, high.last! * 1.5)))
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
      search = (lowest * (1 - 2 * tolerance), min(nyquist, highest * (1 + 2 * tolerance)))
      band = (min(300, lowest * 0.5), min(nyquist, max(3400, highest * 1.5)))
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
      band = (marker - 1_000, nyquist)
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
    var measured = FrameMeasurement(
      isQuiet: isQuiet(lobes, of: bandPower, holding: false),
      isQuietHolding: isQuiet(lobes, of: bandPower, holding: true))
    guard !measured.isQuietHolding else { return measured }
    guard holding || !measured.isQuiet else {
      measured.isComplete = false
      return measured
    }
    switch layout {
    case .dual:
      guard
        let lowPeak = spectrum.peak(at: strongest.0),
        let highPeak = spectrum.peak(at: strongest.1),
        let row = nearest(lowPeak.frequency, in: groups.low),
        let column = nearest(highPeak.frequency, in: groups.high)
      else { return measured }
      let lowLevel = Decibels.fromAmplitude(lowPeak.amplitude) ?? -.infinity
      let highLevel = Decibels.fromAmplitude(highPeak.amplitude) ?? -.infinity
      // One frame's levels are noisy; the run's median decides the twist.
      // GSM 06.10 lets a weak high tone fade for a frame or two (20 dB
      // under the low one): frames allow 8 dB past the reverse limit.
      let twist = highLevel - lowLevel
      let symbol = groups.symbols[row * groups.high.count + column]
      guard min(lowLevel, highLevel) >= settings.minimumLevel,
        twist >= settings.twist.lowerBound - 8, twist <= settings.twist.upperBound + 4,
        symbol >= 0
      else { return measured }
      let lobePower = lowPeak.lobePower + highPeak.lobePower
      let least = min(settings.holdingShare, settings.minimumShare)
      let (rawShare, share) = tonalShare(
        lobePower, lobes: 2, of: bandPower, spectrum,
        atLeast: holding ? least : settings.minimumShare)
      measured.isComplete = share != nil || rawShare < 0.5 * least
      let combined =
        (lowPeak.amplitude * lowPeak.amplitude + highPeak.amplitude * highPeak.amplitude)
        .squareRoot()
      measured.rawShare = rawShare
      measured.tone = FrameTone(
        symbol: symbol, frequencies: (lowPeak.frequency, highPeak.frequency),
        levels: (lowLevel, highLevel), level: Decibels.fromAmplitude(combined) ?? -.infinity,
        share: share ?? 0,
        phasors: (
          spectrum.value(atBin: spectrum.bin(of: groups.low[row])),
          spectrum.value(atBin: spectrum.bin(of: groups.high[column]))
        ))
    case .single:
      guard let peak = loudEnoughPeak(spectrum, at: strongest.0) else { return measured }
      var best = 0
      for index in 1..<frequencies.count
      where abs(frequencies[index] - peak.frequency) < abs(frequencies[best] - peak.frequency) {
        best = index
      }
      guard abs(frequencies[best] - peak.frequency) <= 1.8 * toleranceHz[best],
        let share = tonalShare(
          peak.lobePower, lobes: 1, of: bandPower, spectrum, atLeast: settings.holdingShare
        ).share,
        share >= settings.holdingShare
      else { return measured }
      measured.tone = single(best, peak, nominal: frequencies[best], share: share, spectrum)
    case .characterCode(let marker, let base, let step):
      guard let peak = loudEnoughPeak(spectrum, at: strongest.0) else { return measured }
      let code = ((peak.frequency - base) / step).rounded()
      let isMarker = abs(peak.frequency - marker) <= toleranceHz[0]
      guard
        isMarker
          || (code >= 32 && code < 127
            && abs(peak.frequency - (base + step * code)) <= toleranceHz[0]),
        let share = tonalShare(peak.lobePower, lobes: 1, of: bandPower, spectrum, atLeast: 0.6)
          .share,
        share >= settings.minimumShare
      else { return measured }
      measured.tone =
        isMarker
        ? single(0, peak, nominal: marker, share: share, spectrum)
        : single(Int(code), peak, nominal: base + step * code, share: share, spectrum)
    }
    return measured
  }

  /// The frame's tone for this plan, or `nil` when none qualifies.
  /// `holding` is the tone in progress: its symbol is kept at
  /// `holdingShare` while its level stays within 10 dB of the level given
  /// (a pause between two presses of one key is never bridged). With a tone
  /// held, `measured` must be complete.
  func decide(_ measured: FrameMeasurement, holding: (symbol: Int, level: Double)?) -> FrameTone? {
    if measured.isQuiet && (!isLenient(holding: holding != nil) || measured.isQuietHolding) {
      return nil
    }
    guard var tone = measured.tone else { return nil }
    let required =
      isHeld(tone.symbol, level: tone.level, holding)
      ? settings.holdingShare : settings.minimumShare
    switch layout {
    case .dual:
      guard measured.rawShare >= 0.5 * required, tone.share >= required else { return nil }
    case .single:
      tone.isWeak = tone.share < required
    case .characterCode:
      break
    }
    return tone
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
      // Speech that passes for a key does so briefly and off-key: a tone
      // under 45 ms must be within 1.8 % (Q.24's 1.5 % that must be
      // accepted, with room for the estimate's error at 6 dB SNR).
      let tolerance =
        run.duration < 0.045
        ? min(settings.frequencyTolerance, 0.018) : settings.frequencyTolerance
      let errors = (abs(run.frequencies.0 / nominal.0 - 1), abs(run.frequencies.1 / nominal.1 - 1))
      // A voice's harmonic pair glides: its phases do not advance steadily
      // (keys: 0.95 or more in noise at 6 dB SNR, 0.89 through GSM 06.10;
      // voices that passed for keys through FM: 0.29 to 0.89). A key at
      // −8 dB twist in noise at 6 dB SNR may advance as unsteadily (0.88):
      // there the two overlap.
      return errors.0 <= tolerance && errors.1 <= tolerance
        && settings.twist.contains(run.twist)
        && run.coherence >= 0.8
        && (run.share >= runShare || isSteadyKey(run, errors: errors))
    case .single:
      return abs(run.frequencies.0 - nominal.0) <= toleranceHz[run.symbol]
    case .characterCode:
      return abs(run.frequencies.0 - nominal.0) <= toleranceHz[0]
    }
  }

  /// Whether a pair of tones short of the run share was held like a key
  /// through a noisy channel: 55 ms or more, within 1 % of both
  /// frequencies, both phases advancing steadily (coherence 0.97 or more)
  /// and a median share of 0.82, or 0.7 with a quarter of its frames at
  /// 0.93 or more; a key a click dented for two frames may advance a little
  /// less steadily (0.955) if it holds both. An FM channel's clicks and
  /// limiter products dent some frames of a key (at 6 dB CNR) while those
  /// between them hold nearly the whole band; a voice that holds two keys'
  /// tones this long and this close glides or keeps its other harmonics in
  /// every frame (in the talk-off speech, through GSM too, no quarter of
  /// its frames reached 0.89 where it held a pair within 1 % for 55 ms).
  private func isSteadyKey(_ run: ToneRun, errors: (Double, Double)) -> Bool {
    guard run.duration >= 0.055, max(errors.0, errors.1) <= 0.01 else { return false }
    let isClean = run.upperShare >= 0.93
    return run.coherence >= 0.97 && (run.share >= 0.82 || (run.share >= 0.7 && isClean))
      || run.coherence >= 0.955 && run.share >= 0.82 && isClean
  }

  /// The index of the nominal frequency within tolerance of `frequency`.
  private func nearest(_ frequency: Double, in nominal: [Double]) -> Int? {
    var best = 0
    for index in 1..<nominal.count
    where abs(nominal[index] - frequency) < abs(nominal[best] - frequency) {
      best = index
    }
    let error = abs(nominal[best] - frequency) / nominal[best]
    return error <= 1.8 * settings.frequencyTolerance ? best : nil
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

  /// What `spectrum` holds for each plan, written to `measured[0..<count]`
  /// (initialised or not: measurements are plain values).
  func measure(_ spectrum: Spectrum, into measured: UnsafeMutablePointer<FrameMeasurement>) {
    for index in 0..<classifiers.count {
      (measured + index).initialize(to: classifiers[index].measure(spectrum))
    }
  }

  /// What `spectrum` holds for plan `index` with a tone held.
  func measureHolding(_ spectrum: Spectrum, plan index: Int) -> FrameMeasurement {
    classifiers[index].measure(spectrum, holding: true)
  }
}
