#if canImport(Glibc)
  import Glibc
#endif

/// A stretch of frames holding the same symbol, measured: start and length
/// from the frames whose level is within 6 dB of the run's loudest (with a
/// Hann window those are the frames centred inside the tone), frequencies
/// and levels averaged over the same frames.
struct ToneRun {
  var symbol: Int
  var start: Double
  var duration: Double
  var frequencies: (Double, Double)
  var levels: (Double, Double)
  /// The tones' mean share of the band's power.
  var share: Double
  var end: Double { start + duration }
}

/// Turns per-frame decisions of one plan into runs. A majority vote over
/// three frames bridges a single missing or stray frame (a noise burst, a
/// transition) at the cost of one frame of delay. Owned by the decoder.
struct ToneTracker {
  private let hop: Double
  private let firstCentre: Double
  private var recent: (FrameTone?, FrameTone?, FrameTone?) = (nil, nil, nil)
  private var frameIndex = -1
  private var runSymbol: Int?
  private var runFirstFrame = 0
  private var runFrames: [FrameTone?] = []

  /// - Parameters:
  ///   - hop: seconds between frames.
  ///   - firstCentre: seconds from the stream start to the first frame's centre.
  init(hop: Double, firstCentre: Double) {
    self.hop = hop
    self.firstCentre = firstCentre
    runFrames.reserveCapacity(4_096)
  }

  /// Seconds of the centre of frame `index`.
  func centre(of index: Int) -> Double { firstCentre + Double(index) * hop }

  /// Whether a run is open (its tone may still be sounding).
  var isRunOpen: Bool { runSymbol != nil }

  /// Seconds of the centre of the latest decided frame.
  var latestCentre: Double { centre(of: max(0, frameIndex - 1)) }

  /// Takes the next frame's decision; returns the run it ended, if any.
  mutating func add(_ tone: FrameTone?) -> ToneRun? {
    recent = (recent.1, recent.2, tone)
    frameIndex += 1
    guard frameIndex >= 1 else { return nil }
    // Decide frame `frameIndex - 1` (the middle one) by majority.
    let symbols = (recent.0?.symbol, recent.1?.symbol, recent.2?.symbol)
    let decided: Int? =
      symbols.1 == symbols.0 || symbols.1 == symbols.2
      ? symbols.1 : (symbols.0 == symbols.2 ? symbols.0 : nil)
    let middle = recent.1?.symbol == decided ? recent.1 : nil
    return take(decided, data: middle, at: frameIndex - 1)
  }

  /// Ends the open run (end of stream).
  mutating func finish() -> ToneRun? {
    let pending = add(nil)
    if let pending { return pending }
    return take(nil, data: nil, at: frameIndex)
  }

  private mutating func take(_ symbol: Int?, data: FrameTone?, at index: Int) -> ToneRun? {
    if let runSymbol, symbol == runSymbol {
      runFrames.append(data)
      return nil
    }
    let ended = closeRun()
    if let symbol {
      runSymbol = symbol
      runFirstFrame = index
      runFrames.append(data)
    }
    return ended
  }

  private mutating func closeRun() -> ToneRun? {
    guard let symbol = runSymbol else { return nil }
    defer {
      runSymbol = nil
      runFrames.removeAll(keepingCapacity: true)
    }
    var loudest = -Double.infinity
    for frame in runFrames { if let frame, frame.level > loudest { loudest = frame.level } }
    var first = -1
    var last = -1
    var sums = (0.0, 0.0)
    var shares = 0.0
    var count = 0.0
    for (offset, frame) in runFrames.enumerated() {
      guard let frame, frame.level >= loudest - 6 else { continue }
      if first < 0 { first = offset }
      last = offset
      sums.0 += frame.frequencies.0
      sums.1 += frame.frequencies.1
      shares += frame.share
      count += 1
    }
    // Levels from the frames within 3 dB of the loudest (whole tone in the
    // window), averaged as power.
    var powers = (0.0, 0.0)
    var loudFrames = 0.0
    for frame in runFrames {
      guard let frame, frame.level >= loudest - 3 else { continue }
      powers.0 += Decibels.amplitude(2 * frame.levels.0)
      powers.1 += Decibels.amplitude(2 * frame.levels.1)
      loudFrames += 1
    }
    guard first >= 0 else { return nil }
    // Pulse-pair estimate: the mean phase advance per hop between
    // consecutive frames, resolved around the bins' coarser estimate.
    var advance = ((0.0, 0.0), (0.0, 0.0))
    for offset in first..<last {
      guard let this = runFrames[offset], let next = runFrames[offset + 1] else { continue }
      advance.0.0 += next.phasors.0.re * this.phasors.0.re + next.phasors.0.im * this.phasors.0.im
      advance.0.1 += next.phasors.0.im * this.phasors.0.re - next.phasors.0.re * this.phasors.0.im
      advance.1.0 += next.phasors.1.re * this.phasors.1.re + next.phasors.1.im * this.phasors.1.im
      advance.1.1 += next.phasors.1.im * this.phasors.1.re - next.phasors.1.re * this.phasors.1.im
    }
    func refine(_ coarse: Double, _ sum: (Double, Double)) -> Double {
      guard sum.0 != 0 || sum.1 != 0 else { return coarse }
      let span = 1 / hop
      let base = atan2(sum.1, sum.0) / (2 * .pi) * span
      return base + ((coarse - base) / span).rounded() * span
    }
    return ToneRun(
      symbol: symbol, start: centre(of: runFirstFrame + first) - hop / 2,
      duration: Double(last - first + 1) * hop,
      frequencies: (refine(sums.0 / count, advance.0), refine(sums.1 / count, advance.1)),
      levels: (
        Decibels.fromPower(powers.0 / loudFrames) ?? -.infinity,
        Decibels.fromPower(powers.1 / loudFrames) ?? -.infinity
      ), share: shares / count)
  }
}
