import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Finds howls in a mono signal as they grow: every hop it analyses the
/// latest frame (`SpectrumAnalyzer`: Hann window, FFTW), keeps each bin's
/// level over the last hops, and reports a peak that
///
/// 1. stands out: above the level floor, `peakToNeighbours` over the bins
///    around it and `peakToHarmonics` over its octave below and its
///    second and third harmonics (a voice's or an instrument's partials
///    come in families; a howl is a lone sine);
/// 2. grows like a howl over the last `growthSpan`: its level in dB on a
///    rising straight line (at least `minimumGrowth`, within
///    `maximumDeviation`), not slowing down (`minimumCurvature`: an onset
///    settles), on one frequency (`maximumFrequencySpread`: vibrato and
///    gliding pitch wander).
///
/// Owned by the audio thread; nothing allocates after `init`.
final class HowlDetector {
  /// A howl found.
  struct Finding {
    /// Hz, refined between bins.
    var frequency: Double
    /// Level of the peak before the output gain, dB (a full-scale sine: 0).
    var level: Double
    /// dB per second over the span judged.
    var growth: Double
  }

  let settings: HowlGuardSettings
  let sampleRate: Double
  let frameLength: Int
  let hop: Int
  private let analyzer: SpectrumAnalyzer
  private let ring: UnsafeMutablePointer<Float>
  private var ringPosition = 0
  private var sinceHop = 0
  private var filled = 0
  /// Bins searched.
  private let lowBin: Int
  private let highBin: Int
  private let binCount: Int
  /// Hops of history kept.
  private let historyLength: Int
  /// Level (dB) of the strongest of each bin and its two neighbours, per hop.
  private let levels: UnsafeMutablePointer<Float>
  /// Refined frequency of a peak at or next to each bin, per hop (NaN: none).
  private let frequencies: UnsafeMutablePointer<Float>
  private var newest = 0
  private var hops = 0
  /// Each bin's level over the mean power of its neighbours, per hop (dB).
  private let prominences: UnsafeMutablePointer<Float>
  /// This hop's levels (dB) of every bin, their powers and running sums of the powers.
  private let current: UnsafeMutablePointer<Float>
  private let powers: UnsafeMutablePointer<Double>
  private let sums: UnsafeMutablePointer<Double>
  /// This hop's mean level of each bin's neighbours (dB), from `lowBin` to `highBin`.
  private let neighbours: UnsafeMutablePointer<Double>
  private let neighbourNear: Int
  private let neighbourFar: Int
  /// Hops in `growthSpan`, `fastGrowthSpan`, `slowGrowthSpan` and `steadyGrowthSpan`.
  private let span: Int
  private let fastSpan: Int
  private let longSpan: Int
  private let steadySpan: Int
  /// Hops a second: level slopes per hop become growth in dB/s.
  private let hopsPerSecond: Double
  /// Scratch for a span's levels, prominences and frequencies.
  private let spanLevels: UnsafeMutablePointer<Double>
  private let spanProminences: UnsafeMutablePointer<Double>
  private let longLevels: UnsafeMutablePointer<Double>
  private let spanFrequencies: UnsafeMutablePointer<Double>

  init(settings: HowlGuardSettings, sampleRate: Double) {
    self.settings = settings
    self.sampleRate = sampleRate
    frameLength = SpectrumAnalyzer.friendlyLength(
      near: Int((settings.frameDuration * sampleRate).rounded()))
    hop = max(16, Int((settings.hopDuration * sampleRate).rounded()))
    analyzer = SpectrumAnalyzer(frameLength: frameLength, sampleRate: sampleRate)
    ring = .allocate(capacity: frameLength)
    ring.initialize(repeating: 0, count: frameLength)
    let binWidth = sampleRate / Double(frameLength)
    binCount = frameLength / 2 + 1
    neighbourNear = max(3, Int((settings.neighbourNear / binWidth).rounded()))
    neighbourFar = max(neighbourNear + 2, Int((settings.neighbourFar / binWidth).rounded()))
    lowBin = max(neighbourFar + 1, Int((settings.lowestFrequency / binWidth).rounded()))
    highBin = min(
      binCount - neighbourFar - 2,
      Int((min(settings.highestFrequency, 0.45 * sampleRate) / binWidth).rounded()))
    hopsPerSecond = sampleRate / Double(hop)
    let hopSeconds = Double(hop) / sampleRate
    span = max(4, Int((settings.growthSpan / hopSeconds).rounded()))
    fastSpan = max(4, Int((settings.fastGrowthSpan / hopSeconds).rounded()))
    longSpan = max(span, fastSpan, Int((settings.slowGrowthSpan / hopSeconds).rounded()))
    steadySpan = max(span, Int((settings.steadyGrowthSpan / hopSeconds).rounded()))
    historyLength = max(longSpan, steadySpan)
    levels = .allocate(capacity: historyLength * binCount)
    levels.initialize(repeating: -.infinity, count: historyLength * binCount)
    frequencies = .allocate(capacity: historyLength * binCount)
    frequencies.initialize(repeating: .nan, count: historyLength * binCount)
    prominences = .allocate(capacity: historyLength * binCount)
    prominences.initialize(repeating: 0, count: historyLength * binCount)
    current = .allocate(capacity: binCount)
    current.initialize(repeating: -.infinity, count: binCount)
    powers = .allocate(capacity: binCount)
    powers.initialize(repeating: 0, count: binCount)
    sums = .allocate(capacity: binCount + 1)
    sums.initialize(repeating: 0, count: binCount + 1)
    neighbours = .allocate(capacity: binCount)
    neighbours.initialize(repeating: -300, count: binCount)
    spanLevels = .allocate(capacity: historyLength)
    spanLevels.initialize(repeating: 0, count: historyLength)
    longLevels = .allocate(capacity: historyLength)
    longLevels.initialize(repeating: 0, count: historyLength)
    spanProminences = .allocate(capacity: historyLength)
    spanProminences.initialize(repeating: 0, count: historyLength)
    spanFrequencies = .allocate(capacity: historyLength)
    spanFrequencies.initialize(repeating: 0, count: historyLength)
  }

  deinit {
    ring.deallocate()
    levels.deallocate()
    frequencies.deallocate()
    current.deallocate()
    prominences.deallocate()
    powers.deallocate()
    sums.deallocate()
    neighbours.deallocate()
    spanLevels.deallocate()
    longLevels.deallocate()
    spanProminences.deallocate()
    spanFrequencies.deallocate()
  }

  /// Whether steep howls may be caught over the short `fastGrowthSpan`
  /// (the guard sets it for a while after the gain was raised).
  var isAlert = false
  /// Whether the gain has not risen for a while: only steady growth over
  /// the long `steadyGrowthSpan` is a howl then (the guard sets it).
  var isSettled = true

  /// Hz between bins.
  var binWidth: Double { sampleRate / Double(frameLength) }

  /// Feeds `count` samples; analyses a frame at every hop and reports the
  /// howls found there to `found`.
  func analyze(
    _ samples: UnsafePointer<Float>, count: Int, gainDecibels: Double, found: (Finding) -> Void
  ) {
    var index = 0
    while index < count {
      let take = min(count - index, hop - sinceHop, frameLength - ringPosition)
      (ring + ringPosition).update(from: samples + index, count: take)
      ringPosition = (ringPosition + take) % frameLength
      sinceHop += take
      filled = min(frameLength, filled + take)
      index += take
      if sinceHop == hop {
        sinceHop = 0
        analyzeFrame(gainDecibels: gainDecibels, found: found)
      }
    }
  }

  /// Forgets the history of the bins within `octaves` of `frequency` (a
  /// notch there changed their level: what follows is judged afresh).
  func forget(around frequency: Double, octaves: Double) {
    let low = max(0, Int((frequency * pow(2, -octaves) / binWidth).rounded(.down)) - 1)
    let high = min(binCount - 1, Int((frequency * pow(2, octaves) / binWidth).rounded(.up)) + 1)
    guard low <= high else { return }
    for row in 0..<historyLength {
      for bin in low...high { levels[row * binCount + bin] = -.infinity }
    }
  }

  /// Starts again as if made anew: no signal, no history.
  func reset() {
    ring.update(repeating: 0, count: frameLength)
    ringPosition = 0
    sinceHop = 0
    filled = 0
    hops = 0
    newest = 0
    levels.update(repeating: -.infinity, count: historyLength * binCount)
    frequencies.update(repeating: .nan, count: historyLength * binCount)
    prominences.update(repeating: 0, count: historyLength * binCount)
  }

  /// Forgets every bin's history (the duck changed them all).
  func forgetAll() {
    levels.update(repeating: -.infinity, count: historyLength * binCount)
  }

  /// The least prominence (dB over the neighbours) a peak needs to be judged at all.
  private var leastProminence: Double {
    isAlert ? min(settings.peakToNeighbours, settings.fastProminence) : settings.peakToNeighbours
  }

  // MARK: One frame

  private func analyzeFrame(gainDecibels: Double, found: (Finding) -> Void) {
    guard filled == frameLength else { return }
    // The ring from its oldest sample: two contiguous pieces.
    analyzer.analyze(
      UnsafeBufferPointer(start: ring + ringPosition, count: frameLength - ringPosition),
      UnsafeBufferPointer(start: ring, count: ringPosition))
    let spectrum = analyzer.spectrum
    // `binPower`'s product read in place, and the running sum kept in a
    // register: a sum read back from memory waits on its own store.
    let (raw, scale) = (spectrum.power, spectrum.amplitudeScale)
    var running = 0.0
    sums[0] = 0
    for bin in 0..<binCount {
      let power = raw[bin] * scale + 1e-30
      powers[bin] = power
      running += power
      sums[bin + 1] = running
    }
    // Apart, so that the compiler can take several bins' levels at once.
    for bin in 0..<binCount { current[bin] = PowerLevel.decibels(Float(powers[bin])) }
    newest = (newest + 1) % historyLength
    hops += 1
    let row = levels + newest * binCount
    let frequencyRow = frequencies + newest * binCount
    let prominenceRow = prominences + newest * binCount
    measureNeighbours()
    for bin in lowBin...highBin {
      row[bin] = max(current[bin - 1], current[bin], current[bin + 1])
      frequencyRow[bin] = .nan
      prominenceRow[bin] = row[bin] - Float(neighbours[bin])
    }
    var bin = lowBin
    while bin <= highBin {
      defer { bin += 1 }
      let level = current[bin]
      guard level >= current[bin - 1], level > current[bin + 1], level >= current[bin - 2],
        level > current[bin + 2]
      else { continue }
      let frequency = refinedFrequency(bin)
      frequencyRow[bin] = Float(frequency)
      frequencyRow[bin - 1] = Float(frequency)
      if bin + 1 <= highBin { frequencyRow[bin + 1] = Float(frequency) }
      let prominence = Double(level) - neighbourLevel(bin)
      guard Double(level) + gainDecibels >= settings.levelFloor, prominence >= leastProminence
      else { continue }
      if prominence >= settings.peakToNeighbours && isSaturatedHowl(bin, gainDecibels: gainDecibels)
      {
        found(Finding(frequency: frequency, level: Double(level), growth: 0))
        continue
      }
      guard Double(level) - harmonicLevel(bin) >= settings.peakToHarmonics,
        !isInHarmonicSeries(bin),
        let growth = isSettled
          ? steadyGrowth(at: bin, prominence: prominence)
          : growth(at: bin, prominence: prominence)
      else { continue }
      found(Finding(frequency: frequency, level: Double(level), growth: growth))
    }
  }

  /// Frequency of the peak at `bin`, from a parabola through the log
  /// levels of it and its neighbours.
  private func refinedFrequency(_ bin: Int) -> Double {
    let (a, b, c) = (Double(current[bin - 1]), Double(current[bin]), Double(current[bin + 1]))
    let denominator = a - 2 * b + c
    let offset = denominator < 0 ? 0.5 * (a - c) / denominator : 0
    return (Double(bin) + max(-0.5, min(0.5, offset))) * binWidth
  }

  /// Mean power of the bins `neighbourNear` to `neighbourFar` away from
  /// `bin` (`lowBin` to `highBin`), in dB, as this hop measured it.
  private func neighbourLevel(_ bin: Int) -> Double { neighbours[bin] }

  /// Sets `neighbours` from `lowBin` to `highBin`: the mean power of the
  /// bins `neighbourNear` to `neighbourFar` away on either side, in dB.
  /// Every bin searched has all of them (`init` keeps `lowBin` and
  /// `highBin` that far from the ends), so the loop has no branch and
  /// takes several bins at once.
  private func measureNeighbours() {
    let count = Double(2 * (neighbourFar - neighbourNear + 1))
    let (near, far) = (neighbourNear, neighbourFar)
    // The sums' four ends for each bin, from `lowBin` on.
    let belowTo = UnsafePointer(sums + (lowBin - near + 1))
    let belowFrom = UnsafePointer(sums + (lowBin - far))
    let aboveTo = UnsafePointer(sums + (lowBin + far + 1))
    let aboveFrom = UnsafePointer(sums + (lowBin + near))
    let levels = neighbours + lowBin
    for index in 0..<(highBin - lowBin + 1) {
      let sum = belowTo[index] - belowFrom[index] + aboveTo[index] - aboveFrom[index]
      levels[index] = Double(PowerLevel.decibels(Float(max(1e-30, sum) / count)))
    }
  }

  /// The strongest level around half, twice and three times the bin's frequency.
  private func harmonicLevel(_ bin: Int) -> Double {
    var strongest = -Double.infinity
    for multiple in 0..<3 {
      let centre = multiple == 0 ? (bin + 1) / 2 : bin * (multiple + 1)
      guard centre - 2 >= 1, centre + 2 < binCount else { continue }
      for index in (centre - 2)...(centre + 2) {
        strongest = max(strongest, Double(current[index]))
      }
    }
    return strongest
  }

  /// Whether the peak at `bin` is a howl that grew to the top and stays
  /// there (the limiter holds it; its growth is over, and its distortion
  /// may have given it harmonics): at `saturatedLevel` or louder at the
  /// output, `isolatedProminence` over its neighbours, and loud over the
  /// whole `slowGrowthSpan`.
  private func isSaturatedHowl(_ bin: Int, gainDecibels: Double) -> Bool {
    let threshold = settings.saturatedLevel - gainDecibels
    guard Double(current[bin]) >= threshold,
      Double(current[bin]) - neighbourLevel(bin) >= settings.isolatedProminence,
      hops >= longSpan
    else { return false }
    for step in 0..<longSpan {
      let row = (newest - step + historyLength) % historyLength
      guard Double(levels[row * binCount + bin]) >= threshold - settings.saturatedSwing else {
        return false
      }
    }
    return true
  }

  /// Whether the peak at `bin` is the n-th partial of a note or a voice:
  /// prominent peaks stand where partials n − 1 and n + 1 would be (or,
  /// for the fundamental, partials 2 and 3).
  private func isInHarmonicSeries(_ bin: Int) -> Bool {
    let lowest = Double(current[bin]) - settings.seriesRange
    // Its fundamental: partials 2 and 3 above it.
    if isPartial(near: 2 * Double(bin), above: lowest)
      && isPartial(near: 3 * Double(bin), above: lowest)
    {
      return true
    }
    let fundamentalBins = settings.lowestFundamental / binWidth
    var n = 2
    while n <= settings.seriesHarmonics && Double(bin) / Double(n) >= fundamentalBins {
      defer { n += 1 }
      let spacing = Double(bin) / Double(n)
      if isPartial(near: Double(bin) - spacing, above: lowest)
        && isPartial(near: Double(bin) + spacing, above: lowest)
      {
        return true
      }
    }
    return false
  }

  /// Whether a peak louder than `lowest` (dB), standing `seriesProminence`
  /// over the bins just outside its main lobe, lies within a bin of `position`.
  private func isPartial(near position: Double, above lowest: Double) -> Bool {
    let centre = Int(position.rounded())
    guard centre >= 6, centre + 6 < binCount else { return false }
    for bin in (centre - 1)...(centre + 1) {
      let level = current[bin]
      guard level >= current[bin - 1], level >= current[bin + 1], Double(level) >= lowest else {
        continue
      }
      let outside =
        (sums[bin - 1] - sums[bin - 4]) + (sums[bin + 5] - sums[bin + 2])
      if Double(level) - 10 * log10(max(1e-30, outside / 6)) >= settings.seriesProminence {
        return true
      }
    }
    return false
  }

  /// The growth (dB/s) of the peak at `bin` if it grows like a howl, else
  /// `nil`: over `growthSpan` as a howl of any speed, or, while `isAlert`,
  /// sooner over the short `fastGrowthSpan` as a steep one standing well
  /// clear of its neighbours.
  private func growth(at bin: Int, prominence: Double) -> Double? {
    if prominence >= settings.peakToNeighbours,
      let growth = judged(
        bin, span: span, minimumGrowth: settings.minimumGrowth,
        maximumDeviation: settings.maximumDeviation)
    {
      return growth < settings.slowGrowth ? steadyOverLongSpan(bin, growth: growth) : growth
    }
    guard isAlert, prominence >= settings.fastProminence else { return nil }
    return judged(
      bin, span: fastSpan, minimumGrowth: settings.fastGrowth,
      maximumDeviation: settings.fastDeviation)
  }

  /// The growth (dB/s) of the peak at `bin` if it has grown steadily over
  /// the long `steadyGrowthSpan` (the detector is settled), else `nil`.
  private func steadyGrowth(at bin: Int, prominence: Double) -> Double? {
    guard prominence >= settings.peakToNeighbours,
      let growth = judged(
        bin, span: steadySpan, minimumGrowth: settings.steadyMinimumGrowth,
        maximumDeviation: settings.steadyDeviation,
        missedHops: Int(settings.steadyMissedHops)),
      !hasCoRisingPartial(bin, span: steadySpan), standsOverSubharmonics(bin)
    else { return nil }
    return growth
  }

  /// Whether the peak at `bin` stands `subharmonicMargin` over every peak
  /// at a fundamental it could be a partial of.
  private func standsOverSubharmonics(_ bin: Int) -> Bool {
    let ceiling = Double(current[bin]) - settings.subharmonicMargin
    let fundamentalBins = settings.lowestFundamental / binWidth
    var n = 2
    while n <= settings.coRisingPartials && Double(bin) / Double(n) >= fundamentalBins {
      defer { n += 1 }
      if isPartial(near: Double(bin) / Double(n), above: ceiling) { return false }
    }
    return true
  }

  /// Whether a partial of a note the peak at `bin` could belong to rose
  /// with it over the last `span` hops (`coRisingShare` of its rise or more).
  private func hasCoRisingPartial(_ bin: Int, span: Int) -> Bool {
    let oldest = (newest - (span - 1) + historyLength) % historyLength
    let rise = Double(levels[newest * binCount + bin] - levels[oldest * binCount + bin])
    guard rise > 0 else { return false }
    let lowest = Double(current[bin]) - settings.coRisingRange
    let fundamentalBins = settings.lowestFundamental / binWidth
    var n = 1
    while n <= settings.coRisingPartials && Double(bin) / Double(n) >= fundamentalBins {
      defer { n += 1 }
      let fundamental = Double(bin) / Double(n)
      for m in 1...settings.coRisingPartials where m != n {
        let centre = Int((fundamental * Double(m)).rounded())
        guard centre - 6 >= 0, centre + 6 < binCount, abs(centre - bin) > 2 else { continue }
        // The partial's own peak within a bin of where it should be.
        var peak = centre
        for candidate in (centre - 1)...(centre + 1) where current[candidate] > current[peak] {
          peak = candidate
        }
        guard Double(current[peak]) >= lowest, isPartial(near: Double(peak), above: lowest) else {
          continue
        }
        let partialRise = Double(
          levels[newest * binCount + peak] - levels[oldest * binCount + peak])
        if partialRise >= settings.coRisingShare * rise { return true }
      }
    }
    return false
  }

  /// The growth (dB/s) of the peak at `bin` over the last `span` hops if it
  /// grows like a howl there: at least `minimumGrowth` on a straight line
  /// (within `maximumDeviation`), over its surroundings too, not slowing
  /// down, on one frequency.
  private func judged(
    _ bin: Int, span: Int, minimumGrowth: Double, maximumDeviation: Double, missedHops: Int = 1
  ) -> Double? {
    guard hops >= span else { return nil }
    var frequencyCount = 0
    for step in 0..<span {
      let row = (newest - (span - 1 - step) + historyLength) % historyLength
      let level = levels[row * binCount + bin]
      guard level.isFinite else { return nil }
      spanLevels[step] = Double(level)
      spanProminences[step] = Double(prominences[row * binCount + bin])
      let frequency = frequencies[row * binCount + bin]
      if !frequency.isNaN {
        spanFrequencies[frequencyCount] = Double(frequency)
        frequencyCount += 1
      }
    }
    // A peak on (or next to) this bin in all hops but `missedHops`.
    guard frequencyCount >= span - missedHops else { return nil }
    let (slope, deviation) = Self.line(spanLevels, count: span)
    let growth = slope * hopsPerSecond
    guard growth >= minimumGrowth, growth <= settings.maximumGrowth,
      deviation <= maximumDeviation
    else { return nil }
    // Rising over its surroundings too: a voice's or a room's partials rise with their neighbours.
    // (A peak far over everything around it has only its own sidelobes there.)
    let prominenceSlope = Self.line(spanProminences, count: span).slope
    guard
      prominenceSlope >= settings.prominenceShare * slope
        || spanProminences[span - 1] >= settings.isolatedProminence
    else { return nil }
    let half = span / 2
    let early = Self.line(spanLevels, count: half).slope
    let late = Self.line(spanLevels + (span - half), count: half).slope
    guard (late - early) * hopsPerSecond >= settings.minimumCurvature else { return nil }
    var mean = 0.0
    for index in 0..<frequencyCount { mean += spanFrequencies[index] }
    mean /= Double(frequencyCount)
    var spread = 0.0
    for index in 0..<frequencyCount {
      spread += (spanFrequencies[index] - mean) * (spanFrequencies[index] - mean)
    }
    guard (spread / Double(frequencyCount)).squareRoot() <= settings.maximumFrequencySpread else {
      return nil
    }
    return growth
  }

  /// `growth` if the peak at `bin` grew about as fast over the longer
  /// `slowGrowthSpan` (a resonance that builds up and settles grew faster
  /// before; a howl grows steadily), else `nil`.
  private func steadyOverLongSpan(_ bin: Int, growth: Double) -> Double? {
    for step in 0..<longSpan {
      let row = (newest - (longSpan - 1 - step) + historyLength) % historyLength
      let level = levels[row * binCount + bin]
      guard level.isFinite else { return nil }
      longLevels[step] = Double(level)
    }
    let longGrowth = Self.line(longLevels, count: longSpan).slope * hopsPerSecond
    guard longGrowth >= growth / settings.slowGrowthRatio,
      longGrowth <= growth * settings.slowGrowthRatio
    else { return nil }
    return growth
  }

  /// Least-squares slope (per step) and root-mean-square deviation of `count` values.
  private static func line(_ values: UnsafePointer<Double>, count: Int) -> (
    slope: Double, deviation: Double
  ) {
    let centre = Double(count - 1) / 2
    var mean = 0.0
    for index in 0..<count { mean += values[index] }
    mean /= Double(count)
    var moment = 0.0
    var spread = 0.0
    for index in 0..<count {
      let x = Double(index) - centre
      moment += x * (values[index] - mean)
      spread += x * x
    }
    let slope = spread > 0 ? moment / spread : 0
    var squares = 0.0
    for index in 0..<count {
      let residual = values[index] - mean - slope * (Double(index) - centre)
      squares += residual * residual
    }
    return (slope, (squares / Double(count)).squareRoot())
  }
}
