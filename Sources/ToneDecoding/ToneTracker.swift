import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// A stretch of frames holding the same symbol, measured: start and length
/// from the frames whose level is within 6 dB of the run's reference level
/// (the level three quarters of its frames stay under; with a Hann window
/// those are the frames centred inside the tone), frequencies averaged and
/// share and twist the medians over the same frames, the level from the
/// frames within 3 dB of the reference.
struct ToneRun {
  var symbol: Int
  var start: Double
  var duration: Double
  var frequencies: (Double, Double)
  var levels: (Double, Double)
  /// The tones' median share of the band's power over the run's frames.
  var share: Double
  /// The share three quarters of the run's frames stay under.
  var upperShare: Double = 0
  /// The median of the frames' twists (second tone over first, dB): a
  /// codec's overshoot at a tone's onset does not decide it.
  var twist: Double = 0
  /// How far the louder quarter of the run's frames lies above the softer
  /// quarter, in dB (between the 75th and the 25th percentile of their
  /// levels): a transmitter holds its tone's level, a played or sung note
  /// swells and fades.
  var levelSpread: Double = 0
  /// How far the frames' twists spread (between their 75th and 25th
  /// percentile), in dB: one transmitter holds both tones' levels, two
  /// notes beat and swell each on its own.
  var twistSpread: Double = 0
  /// How steadily each tone's phase advanced from frame to frame (the
  /// length of the summed frame-to-frame phasor products over the sum of
  /// their lengths, the lesser of the two tones; a single tone's own):
  /// 1 for a held tone, less for a voice's gliding harmonics or a played
  /// note's vibrato.
  var coherence: Double = 0
  /// How far the other harmonics of a voice its pair could be two of
  /// stand over the power halfway between them, as a share of the pair's
  /// power (`DualToneRunRule.HarmonicPair`); 0 for plans that do not look
  /// for voices.
  var harmonics: Double = 0
  /// The tracker's first and last frame of the run (frame `k` starts at
  /// stream sample `k × hop`).
  var frames: ClosedRange<Int> = 0...0
  var end: Double { start + duration }

  /// The stream samples the run's tones held, in a stream cut into frames
  /// of `frameLength` every `hop` samples: from its first frame's centre
  /// less half a hop to its last's plus half a hop, without the frames'
  /// edges.
  func heldSamples(frameLength: Int, hop: Int) -> Range<Int> {
    let edge = (frameLength - hop) / 2
    return (frames.lowerBound * hop + edge)..<(frames.upperBound * hop + frameLength - edge)
  }
}

extension FrameRing {
  /// Copies the samples `run`'s tones held (`ToneRun.heldSamples`) into
  /// `samples`: the first `capacity` of them, or the last if the ring no
  /// longer holds the first. How many, or nil when the ring holds neither
  /// or they fill less than half a frame.
  func copyHeld(
    by run: ToneRun, atMost capacity: Int, into samples: UnsafeMutablePointer<Float>
  ) -> Int? {
    let held = run.heldSamples(frameLength: frameLength, hop: hop)
    let count = min(held.upperBound - held.lowerBound, capacity)
    guard count >= frameLength / 2,
      copy(from: held.lowerBound, count: count, into: samples)
        || copy(from: held.upperBound - count, count: count, into: samples)
    else { return nil }
    return count
  }
}

/// Turns per-frame decisions of one plan into runs. A majority vote over
/// three frames bridges a single missing or stray frame (a noise burst, a
/// transition) at the cost of one frame of delay; plans with long tones
/// bridge longer gaps (`bridgedGap`). Weak findings (a single tone with
/// less than the full share) never start a run, but those just before a
/// run of their symbol join it. Owned by the decoder.
struct ToneTracker {
  private let hop: Double
  private let firstCentre: Double
  /// The symbols of the last three frames' findings (−1 for none, and for
  /// a weak one), oldest first, and the last two findings themselves, by
  /// frame index modulo 2.
  private var recent = (-1, -1, -1)
  private var latest: (FrameTone, FrameTone)
  private var frameIndex = -1
  private var runSymbol: Int?
  private var runFirstFrame = 0
  /// The open run's frames' findings (a frame without one holds a
  /// placeholder, and `false` in `runFound`).
  private var runFrames: [FrameTone] = []
  private var runFound: [Bool] = []
  private let none: FrameTone
  /// The last frames' weak findings (`FrameTone.isWeak`), by frame index
  /// modulo its size (a power of two), and the frame each slot holds.
  private var weak: [FrameTone]
  private var weakFrame = [Int](repeating: -1, count: 16)
  private static let weakMask = 15
  /// Frames without a finding a weak stretch survives.
  private static let weakGap = 2
  /// The last frame of the run closed last.
  private var lastRunEnd = -1
  /// Frames in the latest stretch of weak findings, and frames since the last.
  private var weakStreak = 0
  private var framesSinceWeak = 0
  /// Whether `runReaching` has reported the open run.
  private var isOngoingReported = false
  /// Frames without a finding an open run waits through before it ends,
  /// and those it has waited so far.
  private let bridgedGap: Int
  private var gapFrames = 0
  private var shares: [Double] = []
  private var twists: [Double] = []
  private var excesses: [Double] = []
  /// Whether a measured run (its harmonic evidence still 0) needs that
  /// evidence to be decided (`ToneFrameClassifier.needsHarmonicEvidence`):
  /// a run the rules take or refuse whatever it shows is not looked at.
  private let needsHarmonics: ((ToneRun) -> Bool)?

  /// - Parameters:
  ///   - hop: seconds between frames.
  ///   - firstCentre: seconds from the stream start to the first frame's centre.
  ///   - bridgedGap: frames without a finding a run outlasts when its tone
  ///     comes back after them (the tone is then held, needing only the
  ///     holding share); 0 ends it as soon as the vote does.
  ///   - needsHarmonics: whether a run needs its harmonic evidence
  ///     measured; `nil` measures every run's.
  init(
    hop: Double, firstCentre: Double, bridgedGap: Int = 0,
    needsHarmonics: ((ToneRun) -> Bool)? = nil
  ) {
    self.hop = hop
    self.firstCentre = firstCentre
    self.bridgedGap = bridgedGap
    self.needsHarmonics = needsHarmonics
    let none = FrameTone(symbol: -1, frequencies: (0, 0), levels: (0, 0), level: 0)
    self.none = none
    latest = (none, none)
    weak = [FrameTone](repeating: none, count: 16)
    runFrames.reserveCapacity(4_096)
    runFound.reserveCapacity(4_096)
    shares.reserveCapacity(4_096)
    twists.reserveCapacity(4_096)
    excesses.reserveCapacity(DualToneRunRule.HarmonicPair.framesLookedAt)
  }

  /// Seconds of the centre of frame `index`.
  func centre(of index: Int) -> Double { firstCentre + Double(index) * hop }

  /// Whether a run is open (its tone may still be sounding).
  var isRunOpen: Bool { runSymbol != nil }

  /// The symbol of the open run, if any.
  var openSymbol: Int? { runSymbol }

  /// Whether a run may be about to start, and start earlier than the
  /// latest frame: the latest frame found a tone that awaits the next
  /// frame's vote, or the latest frames hold weak findings (no longer than
  /// a run can reach back over).
  var isToneRising: Bool {
    (runSymbol == nil && recent.2 >= 0) || (weakStreak > 0 && weakStreak < weak.count)
  }

  /// The run `add` or `finish` last said they ended.
  private(set) var closedRun: ToneRun?

  /// Seconds of the centre of the latest decided frame.
  var latestCentre: Double { centre(of: max(0, frameIndex - 1)) }

  /// Takes the next frame's decision: the tone its measurement holds and
  /// whether it is weak, or `nil` for none; true when it ended a run
  /// (`closedRun`). Most frames end none, and a run is not handed back
  /// through every call: Swift would copy its room each time.
  mutating func add(_ found: (measured: UnsafePointer<FrameMeasurement>, isWeak: Bool)?) -> Bool {
    frameIndex += 1
    // Read in place and copied once: a finding holds a few hundred bytes.
    guard let found, found.measured.pointee.hasTone else {
      // Nothing found, nothing held, nothing rising: nothing to decide.
      if runSymbol == nil && recent == (-1, -1, -1) && weakStreak == 0 {
        framesSinceWeak += 1
        return false
      }
      return add(symbol: -1, isWeak: false)
    }
    let symbol = found.measured.pointee.tone.symbol
    if found.isWeak {
      // A weak finding votes for nothing; it may only lengthen a run back.
      let slot = frameIndex & Self.weakMask
      weak[slot] = found.measured.pointee.tone
      weak[slot].isWeak = true
      weakFrame[slot] = frameIndex
    } else if frameIndex & 1 == 0 {
      latest.0 = found.measured.pointee.tone
      latest.0.isWeak = false
    } else {
      latest.1 = found.measured.pointee.tone
      latest.1.isWeak = false
    }
    return add(symbol: symbol, isWeak: found.isWeak)
  }

  /// `add` for a finding of `symbol` (−1 for none) already kept.
  private mutating func add(symbol: Int, isWeak: Bool) -> Bool {
    // A weak stretch survives two frames without a finding (a tone near
    // the top of a noisy FM channel's band drops under the holding share
    // that long).
    if isWeak {
      weakStreak += 1
      framesSinceWeak = 0
    } else {
      framesSinceWeak += 1
      weakStreak =
        symbol < 0 && framesSinceWeak <= Self.weakGap && weakStreak > 0 ? weakStreak + 1 : 0
    }
    recent = (recent.1, recent.2, isWeak ? -1 : symbol)
    guard frameIndex >= 1 else { return false }
    // Decide frame `frameIndex - 1` (the middle one) by majority.
    let decided =
      recent.1 == recent.0 || recent.1 == recent.2
      ? recent.1 : (recent.0 == recent.2 ? recent.0 : -1)
    // The middle frame's finding, named by its slot in `latest` (not
    // copied: a finding holds a few hundred bytes).
    let middle: Int? = recent.1 == decided && decided >= 0 ? (frameIndex - 1) & 1 : nil
    return take(decided >= 0 ? decided : nil, data: middle, at: frameIndex - 1)
  }

  /// Ends the open run (end of stream); true when a run closed (`closedRun`).
  mutating func finish() -> Bool {
    if add(nil as (UnsafePointer<FrameMeasurement>, Bool)?) { return true }
    gapFrames = bridgedGap
    return take(nil, data: nil, at: frameIndex)
  }

  /// Adds the finding in slot `latest` of `latest` (none when `nil`) to the open run.
  private mutating func appendToRun(latest slot: Int?) {
    switch slot {
    case 0?: runFrames.append(latest.0)
    case 1?: runFrames.append(latest.1)
    default: runFrames.append(none)
    }
    runFound.append(slot != nil)
  }

  /// `data`: the slot in `latest` of frame `index`'s finding, if it is the run's.
  private mutating func take(_ symbol: Int?, data: Int?, at index: Int) -> Bool {
    if let runSymbol {
      if symbol == runSymbol {
        for _ in 0..<gapFrames {
          runFrames.append(none)
          runFound.append(false)
        }
        gapFrames = 0
        appendToRun(latest: data)
        return false
      }
      if symbol == nil && gapFrames < bridgedGap {
        gapFrames += 1
        return false
      }
    }
    gapFrames = 0
    let ended = closeRun()
    if let symbol {
      runSymbol = symbol
      runFirstFrame = index
      // The weak frames of the same tone just before it belong to it (a
      // tone that rose out of the noise slowly), across gaps of up to
      // `weakGap` frames without a finding.
      var first = index
      var candidate = index - 1
      while candidate > lastRunEnd, index - candidate < weak.count,
        first - candidate <= Self.weakGap + 1
      {
        let slot = candidate & Self.weakMask
        if weakFrame[slot] == candidate {
          guard weak[slot].symbol == symbol else { break }
          first = candidate
        }
        candidate -= 1
      }
      for earlier in first..<index {
        let slot = earlier & Self.weakMask
        let isKept = weakFrame[slot] == earlier
        runFrames.append(isKept ? weak[slot] : none)
        runFound.append(isKept)
      }
      runFirstFrame = first
      appendToRun(latest: data)
    }
    return ended
  }

  /// The 25th and 75th percentile of `sorted` values (0 for none).
  private static func quartiles(_ sorted: [Double]) -> (lower: Double, upper: Double) {
    guard !sorted.isEmpty else { return (0, 0) }
    return (sorted[sorted.count / 4], sorted[min(sorted.count - 1, sorted.count * 3 / 4)])
  }

  /// The median of `values` (sorted in place; 0 for none): a click that
  /// dents a few frames of a tone does not make it less of a tone.
  static func median(_ values: inout [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    values.sort()
    let middle = values.count / 2
    return values.count % 2 == 1 ? values[middle] : 0.5 * (values[middle - 1] + values[middle])
  }

  /// The open run as measured so far, once: when it has just lasted
  /// `seconds` (a signal acted on before it ends).
  mutating func runReaching(_ seconds: Double) -> ToneRun? {
    guard runSymbol != nil, !isOngoingReported, Double(runFrames.count) * hop >= seconds else {
      return nil
    }
    isOngoingReported = true
    return measureRun()
  }

  /// Closes the open run, if any, into `closedRun`: true when it did.
  private mutating func closeRun() -> Bool {
    guard runSymbol != nil else { return false }
    lastRunEnd = runFirstFrame + runFrames.count - 1
    defer {
      runSymbol = nil
      isOngoingReported = false
      runFrames.removeAll(keepingCapacity: true)
      runFound.removeAll(keepingCapacity: true)
    }
    guard let run = measureRun() else { return false }
    closedRun = run
    return true
  }

  private mutating func measureRun() -> ToneRun? {
    guard runSymbol != nil else { return nil }
    // The frames are read in place: each is a few hundred bytes (its band
    // powers), and a copy per frame and pass cost more than the sums.
    let (frames, found) = (runFrames, runFound)
    return frames.withUnsafeBufferPointer { tones in
      found.withUnsafeBufferPointer { measureRun(RunFrames(tones: tones, found: $0)) }
    }
  }

  /// A run's findings in place: frame `index`'s, if it had one.
  private struct RunFrames {
    let tones: UnsafeBufferPointer<FrameTone>
    let found: UnsafeBufferPointer<Bool>
    var indices: Range<Int> { tones.indices }
    subscript(index: Int) -> UnsafePointer<FrameTone>? {
      found[index] ? tones.baseAddress! + index : nil
    }
  }

  private mutating func measureRun(_ runFrames: RunFrames) -> ToneRun? {
    guard let symbol = runSymbol else { return nil }
    // The reference is the level three quarters of the frames stay under:
    // the whole tone's level for a clean tone, not a codec's overshoot at
    // its onset (which would make the steady part look like an edge).
    shares.removeAll(keepingCapacity: true)
    for index in runFrames.indices {
      if let level = runFrames[index]?.pointee.level { shares.append(level) }
    }
    guard !shares.isEmpty else { return nil }
    shares.sort()
    let levelQuartiles = Self.quartiles(shares)
    let reference = levelQuartiles.upper
    let levelSpread = reference - levelQuartiles.lower
    var first = -1
    var last = -1
    var sums = (0.0, 0.0)
    shares.removeAll(keepingCapacity: true)
    twists.removeAll(keepingCapacity: true)
    var count = 0.0
    for offset in runFrames.indices {
      guard let level = runFrames[offset]?.pointee.level, abs(level - reference) <= 6 else {
        continue
      }
      if first < 0 { first = offset }
      last = offset
      sums.0 += runFrames[offset]!.pointee.frequencies.0
      sums.1 += runFrames[offset]!.pointee.frequencies.1
      shares.append(runFrames[offset]!.pointee.share)
      twists.append(runFrames[offset]!.pointee.levels.1 - runFrames[offset]!.pointee.levels.0)
      count += 1
    }
    // Levels from the frames within 3 dB of the reference (whole tone in
    // the window), averaged as power.
    var powers = (0.0, 0.0)
    var loudFrames = 0.0
    for index in runFrames.indices {
      guard let level = runFrames[index]?.pointee.level, abs(level - reference) <= 3 else {
        continue
      }
      powers.0 += Decibels.amplitude(2 * runFrames[index]!.pointee.levels.0)
      powers.1 += Decibels.amplitude(2 * runFrames[index]!.pointee.levels.1)
      loudFrames += 1
    }
    guard first >= 0 else { return nil }
    // Pulse-pair estimate: the mean phase advance per hop between
    // consecutive frames, resolved around the bins' coarser estimate.
    var advance = ((0.0, 0.0), (0.0, 0.0))
    var lengths = (0.0, 0.0)
    for offset in first..<last {
      guard let this = runFrames[offset]?.pointee.phasors,
        let next = runFrames[offset + 1]?.pointee.phasors
      else { continue }
      let low = (
        next.0.re * this.0.re + next.0.im * this.0.im,
        next.0.im * this.0.re - next.0.re * this.0.im
      )
      let high = (
        next.1.re * this.1.re + next.1.im * this.1.im,
        next.1.im * this.1.re - next.1.re * this.1.im
      )
      advance.0.0 += low.0
      advance.0.1 += low.1
      advance.1.0 += high.0
      advance.1.1 += high.1
      lengths.0 += (low.0 * low.0 + low.1 * low.1).squareRoot()
      lengths.1 += (high.0 * high.0 + high.1 * high.1).squareRoot()
    }
    func steadiness(_ sum: (Double, Double), _ length: Double) -> Double {
      length > 0 ? (sum.0 * sum.0 + sum.1 * sum.1).squareRoot() / length : 0
    }
    func refine(_ coarse: Double, _ sum: (Double, Double)) -> Double {
      guard sum.0 != 0 || sum.1 != 0 else { return coarse }
      let span = 1 / hop
      let base = atan2(sum.1, sum.0) / (2 * .pi) * span
      return base + ((coarse - base) / span).rounded() * span
    }
    let frequencies = (refine(sums.0 / count, advance.0), refine(sums.1 / count, advance.1))
    twists.sort()
    let twistQuartiles = Self.quartiles(twists)
    let medianShare = Self.median(&shares)
    let upperShare = Self.quartiles(shares).upper
    var run = ToneRun(
      symbol: symbol, start: centre(of: runFirstFrame + first) - hop / 2,
      duration: Double(last - first + 1) * hop,
      frequencies: frequencies,
      levels: (
        Decibels.fromPower(powers.0 / loudFrames) ?? -.infinity,
        Decibels.fromPower(powers.1 / loudFrames) ?? -.infinity
      ), share: medianShare, upperShare: upperShare,
      twist: Self.median(&twists), levelSpread: levelSpread,
      twistSpread: twistQuartiles.upper - twistQuartiles.lower,
      coherence: lengths.1 > 0
        ? min(steadiness(advance.0, lengths.0), steadiness(advance.1, lengths.1))
        : steadiness(advance.0, lengths.0),
      frames: (runFirstFrame + first)...(runFirstFrame + last))
    if needsHarmonics?(run) ?? true {
      run.harmonics = harmonicEvidence(
        frequencies, runFrames, frames: first...last, reference: reference)
    }
    return run
  }

  /// `DualToneRunRule.HarmonicPair`'s evidence for a pair at
  /// `frequencies` in the run's frames `frames` within 6 dB of
  /// `reference` (the first `HarmonicPair.framesLookedAt` of them): for
  /// each pitch both are multiples of, the median over the frames of the
  /// excess on its other multiples; the greatest.
  private mutating func harmonicEvidence(
    _ frequencies: (Double, Double), _ runFrames: RunFrames,
    frames: ClosedRange<Int>, reference: Double
  ) -> Double {
    typealias Rule = DualToneRunRule.HarmonicPair
    var best = 0.0
    var lowHarmonic = 1
    while let pitch = Rule.pitch(low: frequencies.0, high: frequencies.1, lowHarmonic: lowHarmonic)
    {
      lowHarmonic += 1
      guard pitch > 0 else { continue }
      excesses.removeAll(keepingCapacity: true)
      for offset in frames where excesses.count < Rule.framesLookedAt {
        guard let binWidth = runFrames[offset]?.pointee.binWidth, binWidth > 0,
          abs(runFrames[offset]!.pointee.level - reference) <= 6
        else { continue }
        excesses.append(
          Rule.excess(
            in: runFrames[offset]!, pitch: pitch, low: frequencies.0,
            high: frequencies.1))
      }
      if !excesses.isEmpty { best = max(best, Self.median(&excesses)) }
    }
    return best
  }
}
