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

/// Decides, frame by frame, whether a plan's tones are present: the
/// strongest peak(s) in the plan's range must hold a share of the band's
/// power, be loud enough, lie within the frequency tolerance of a nominal
/// tone and, for DTMF, keep the twist within limits. Owned by the decoder.
struct ToneFrameClassifier {
  private enum Layout {
    /// DTMF: one tone from each group; `symbols[low × highCount + high]`.
    case dual(low: [Double], high: [Double], symbols: [Int])
    /// One tone per symbol, nominal frequencies in symbol order.
    case single(frequencies: [Double])
    /// Marker plus `base + step × code`.
    case characterCode(marker: Double, base: Double, step: Double)
  }

  private let layout: Layout
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
        layout: classifier.layout, band: classifier.band, search: classifier.search,
        width: spectrum.binWidth, lastBin: spectrum.frameLength / 2)
    }

    init(
      layout: Layout, band: (Double, Double), search: (Double, Double), width: Double,
      lastBin: Int
    ) {
      func bin(_ frequency: Double) -> Int {
        min(lastBin, max(0, Int((frequency / width).rounded())))
      }
      self.width = width
      self.band = (bin(band.0), bin(band.1))
      self.search = (bin(search.0), bin(search.1))
      if case .dual(let low, let high, _) = layout { split = bin((low.last! + high.first!) / 2) }
    }
  }
  /// The median share a pair of tones must hold over its run: a siren
  /// signal held for seconds has proved itself by its length.
  private let runShare: Double

  /// - Parameter frameLength: samples per frame of the spectra it will be given.
  init(plan: TonePlan, sampleRate: Double, frameLength: Int, settings: ToneDetectionSettings) {
    self.settings = settings
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
      layout = .dual(low: low, high: high, symbols: symbols)
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
      layout = .single(frequencies: frequencies)
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
      search = (marker - step, min(nyquist, base + step * 127))
      band = (marker - 1_000, nyquist)
      toleranceHz = [0.4 * step]
    }
    binsFor = Bins(
      layout: layout, band: band, search: search, width: sampleRate / Double(frameLength),
      lastBin: frameLength / 2)
  }

  /// The frame's tone for this plan, or `nil` when none qualifies. The
  /// cheap tests (level, frequency) run first; the noise floor only for
  /// frames that pass them.
  /// `holding` is the tone in progress: its symbol is kept at
  /// `holdingShare` while its level stays within 10 dB of the level given
  /// (a pause between two presses of one key is never bridged).
  /// `isLoud` is what `isQuiet(spectrum)` (not holding) already said of
  /// the frame, negated, or `nil` when it was not asked.
  func classify(
    _ spectrum: Spectrum, holding: (symbol: Int, level: Double)? = nil,
    isLoud: Bool? = nil
  ) -> FrameTone? {
    // Most frames hold no tone: rule them out by the lobes' raw share of
    // the band, before any logarithm, refinement or noise estimate.
    switch isLoud {
    case true?: break
    case false? where isLenient(holding: holding != nil) == isLenient(holding: false):
      return nil
    default: guard !isQuiet(spectrum, holding: holding != nil) else { return nil }
    }
    switch layout {
    case .dual(let low, let high, let symbols):
      let bins = bins(for: spectrum)
      guard
        let lowPeak = spectrum.peak(bins: bins.search.0, bins.split),
        let highPeak = spectrum.peak(bins: bins.split, bins.search.1),
        let row = nearest(lowPeak.frequency, in: low),
        let column = nearest(highPeak.frequency, in: high)
      else { return nil }
      let lowLevel = Decibels.fromAmplitude(lowPeak.amplitude) ?? -.infinity
      let highLevel = Decibels.fromAmplitude(highPeak.amplitude) ?? -.infinity
      // One frame's levels are noisy; the run's mean decides the twist.
      let twist = highLevel - lowLevel
      let symbol = symbols[row * high.count + column]
      let combinedLevel =
        Decibels.fromAmplitude(
          (lowPeak.amplitude * lowPeak.amplitude + highPeak.amplitude * highPeak.amplitude)
            .squareRoot()) ?? -.infinity
      let required =
        isHeld(symbol, level: combinedLevel, holding)
        ? settings.holdingShare : settings.minimumShare
      guard min(lowLevel, highLevel) >= settings.minimumLevel,
        twist >= settings.twist.lowerBound - 4, twist <= settings.twist.upperBound + 4,
        symbol >= 0,
        let share = tonalShare(
          lowPeak.lobePower + highPeak.lobePower, lobes: 2, spectrum, atLeast: required),
        share >= required
      else { return nil }
      let combined =
        (lowPeak.amplitude * lowPeak.amplitude + highPeak.amplitude * highPeak.amplitude)
        .squareRoot()
      return FrameTone(
        symbol: symbol, frequencies: (lowPeak.frequency, highPeak.frequency),
        levels: (lowLevel, highLevel), level: Decibels.fromAmplitude(combined) ?? -.infinity,
        share: share,
        phasors: (
          spectrum.value(atBin: spectrum.bin(of: low[row])),
          spectrum.value(atBin: spectrum.bin(of: high[column]))
        ))
    case .single(let frequencies):
      guard let peak = loudEnoughPeak(spectrum) else { return nil }
      var best = 0
      for index in 1..<frequencies.count
      where abs(frequencies[index] - peak.frequency) < abs(frequencies[best] - peak.frequency) {
        best = index
      }
      let level = Decibels.fromAmplitude(peak.amplitude) ?? -.infinity
      let required =
        isHeld(best, level: level, holding)
        ? settings.holdingShare : settings.minimumShare
      guard abs(frequencies[best] - peak.frequency) <= 1.8 * toleranceHz[best],
        let share = tonalShare(
          peak.lobePower, lobes: 1, spectrum, atLeast: settings.holdingShare),
        share >= settings.holdingShare
      else { return nil }
      var tone = single(best, peak, nominal: frequencies[best], share: share, spectrum)
      tone.isWeak = share < required
      return tone
    case .characterCode(let marker, let base, let step):
      guard let peak = loudEnoughPeak(spectrum) else { return nil }
      let code = ((peak.frequency - base) / step).rounded()
      let isMarker = abs(peak.frequency - marker) <= toleranceHz[0]
      guard
        isMarker
          || (code >= 32 && code < 127
            && abs(peak.frequency - (base + step * code)) <= toleranceHz[0]),
        let share = tonalShare(peak.lobePower, lobes: 1, spectrum), share >= settings.minimumShare
      else { return nil }
      return isMarker
        ? single(0, peak, nominal: marker, share: share, spectrum)
        : single(Int(code), peak, nominal: base + step * code, share: share, spectrum)
    }
  }

  /// Whether the frame cannot hold this plan's tones: their strongest main
  /// lobes hold less than half the share any finding needs (one held, or a
  /// weak single tone, needs `holdingShare`) of the band's raw power. The
  /// decoder puts off frames while they are all quiet.
  func isQuiet(_ spectrum: Spectrum, holding: Bool = false) -> Bool {
    let bins = bins(for: spectrum)
    let bandPower = spectrum.bandPower(bins: bins.band.0, bins.band.1)
    guard bandPower > 0 else { return true }
    let least =
      0.5
      * (isLenient(holding: holding)
        ? min(settings.holdingShare, settings.minimumShare) : settings.minimumShare)
      * bandPower
    switch layout {
    case .dual:
      return spectrum.strongestLobe(bins: bins.search.0, bins.split)
        + spectrum.strongestLobe(bins: bins.split, bins.search.1) < least
    case .single, .characterCode:
      return spectrum.strongestLobe(bins: bins.search.0, bins.search.1) < least
    }
  }

  /// Whether `isQuiet` asks only the share a held (or weak) tone needs.
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
  private func tonalShare(
    _ lobePower: Double, lobes: Int, _ spectrum: Spectrum, atLeast required: Double = 0.6
  ) -> Double? {
    let (low, high) = bins(for: spectrum).band
    let rawPower = spectrum.bandPower(bins: low, high)
    // Far too little even before the noise is taken out: skip the estimate.
    guard rawPower > 0, lobePower / rawPower >= 0.5 * required else { return nil }
    let noise = spectrum.noisePower(bins: low, high)
    let noisePerBin = noise / Double(max(low, high) - low + 1)
    let tonal = max(0, lobePower - Double(5 * lobes) * noisePerBin)
    return tonal / max(rawPower - noise, rawPower * 1e-3)
  }

  private func loudEnoughPeak(_ spectrum: Spectrum) -> SpectralPeak? {
    let bins = bins(for: spectrum)
    guard let peak = spectrum.peak(bins: bins.search.0, bins.search.1),
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

  /// The nominal frequencies of a frame symbol.
  func nominalFrequencies(of symbol: Int) -> (Double, Double) {
    switch layout {
    case .dual(let low, let high, let symbols):
      let cell = symbols.firstIndex(of: symbol)!
      return (low[cell / high.count], high[cell % high.count])
    case .single(let frequencies): return (frequencies[symbol], 0)
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
      // voices that passed for keys through FM: 0.29 to 0.75).
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
  /// frequencies, both phases advancing steadily (coherence 0.97 or more),
  /// and a median share of 0.82, or 0.75 with a quarter of its frames at
  /// 0.93 or more. An FM channel's clicks and limiter products dent some
  /// frames of a key (keys with 1633 Hz, at 6 dB CNR) while those between
  /// them hold nearly the whole band; a voice that holds two keys' tones
  /// this long and this close glides (coherence under 0.95 in the talk-off
  /// speech) or keeps its other harmonics in every frame.
  private func isSteadyKey(_ run: ToneRun, errors: (Double, Double)) -> Bool {
    run.duration >= 0.055 && max(errors.0, errors.1) <= 0.01 && run.coherence >= 0.97
      && (run.share >= 0.82 || (run.share >= 0.75 && run.upperShare >= 0.93))
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
