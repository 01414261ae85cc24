internal import CFFTW
internal import CVectorKernels
import SignalDSP
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Finds CTCSS sub-audible tones (`TonePlan.ctcss`: the 50 of
/// EIA/TIA-603, 67.0–254.1 Hz) under voice: which tone, when it started and
/// how long it lasted.
///
/// The input is low-passed (4th-order Butterworth at `lowPassCorner`,
/// 900 Hz) and decimated to about `decimatedRate` (2 kHz); frames of
/// `frameSeconds` (200 ms) every `hopSeconds` (20 ms) are windowed and
/// transformed with zero padding (0.5 Hz bins), and the strongest peaks in
/// `searchBand` (62–262 Hz) are measured by parabolic interpolation. A peak
/// within ±0.6 % of a standard tone, steady to ±0.35 Hz over three frames,
/// acquires that tone (about 240 ms after it starts, or later under a
/// voice; `SteadyToneProbe` finds where it began by its phase). Then its
/// phase is followed: a frame holds it when its window at the tone's
/// frequency stays on the tone's phase line (the peak may be hidden), and
/// it fades after 200 ms without, unless a window three times as long
/// still holds it (a voice over it). Once it has been found for 0.8 s its
/// start is reported (`toneStart`), and the whole tone when it ends: when
/// it fades before that, or a second after it faded unless it came back on
/// its phase line, or when another tone is acquired. Voice pitch
/// glides, so it neither holds a standard frequency steadily nor long. Music does hold notes (and many
/// notes are within 0.6 % of a standard tone: C♯2 is 69.3 Hz), but never
/// one alone: a tone acquired or held while another sharp peak in
/// `companionBand` (40–950 Hz) stays as steady (a chord's notes, a note's harmonics; mains
/// hum excepted) is not a sub-tone. Sharp means falling 12 dB within
/// 7.5 Hz on one side, as a held sinusoid's does and a gliding voice's
/// smeared harmonics do not.
///
/// Owned by one thread (the tone decoder's).
final class CTCSSDetector {
  /// A two-pole section in double precision: the 900 Hz corner is a small
  /// fraction of 48 kHz, where single-precision coefficients lose the pole.
  private struct Section {
    let b0: Double, b1: Double, b2: Double, a1: Double, a2: Double
    var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    init(lowPass frequency: Double, q: Double, sampleRate: Double) {
      let w = 2 * Double.pi * frequency / sampleRate
      let alpha = sin(w) / (2 * q)
      let c = cos(w)
      let a0 = 1 + alpha
      b0 = (1 - c) / 2 / a0
      b1 = (1 - c) / a0
      b2 = b0
      a1 = -2 * c / a0
      a2 = (1 - alpha) / a0
    }

    mutating func process(_ x: Double) -> Double {
      let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
      x2 = x1
      x1 = x
      y2 = y1
      y1 = y
      return y
    }
  }

  private struct Active {
    var tone: Int
    /// Where it began (found going back from where it was acquired), and
    /// where the frames that acquired it place it.
    var start: Double
    var foundFrom: Double
    var lastSeen: Double
    var misses = 0
    /// Whether the latest frame held it after it had faded (one such frame
    /// is not enough to take it back).
    var isReturning = false
    /// Whether it went unheld long enough to end (a locked tone may still
    /// come back; see `fadingMisses`).
    var isFading: Bool { misses >= CTCSSDetector.endingMisses }
    var peakLevel: Double
    /// Frames that found the tone, and of those, how many beside another steady peak.
    var frames = 0
    var crowdedFrames = 0
    /// Whether its start was reported (it is then reported when it ends).
    var isAnnounced = false
    /// Its phase, followed through frames where its peak is hidden.
    var lock: SteadyToneProbe.Lock?

    /// Whether it is a sub-tone: found for long enough (a note struck
    /// before it was found does not count), and alone often enough.
    func qualifies(minimumDuration: Double) -> Bool {
      lock != nil && lastSeen - foundFrom >= minimumDuration && crowdedFrames * 5 <= frames
    }
  }

  let plan: String
  /// The standard tones in Hz, ascending.
  let tones: [Double]
  let minimumLevel: Double
  /// Shortest tone reported, seconds.
  let minimumDuration = 0.8
  private let decimation: Int
  private let rate: Double
  private let frameLength: Int
  private let hop: Int
  private let fftLength: Int
  /// The 4th-order low-pass before decimation: two sections in a row.
  private var lowPass: (Section, Section)
  private var accumulator = 0.0
  private var accumulated = 0
  private var history: [Float]
  /// The last 3 s: where a tone just acquired began, and whether it
  /// still sounds where the voice hides its peak.
  private var probe: SteadyToneProbe
  private var writeIndex = 0
  private var decimatedCount = 0
  private let window: [Float]
  private let windowSum: Double
  private let input: UnsafeMutablePointer<Float>
  private let output: UnsafeMutablePointer<fftwf_complex>
  private let fftPlan: fftwf_plan
  private var power: [Double]
  /// Room for the bins of one frame's local maxima.
  private var peakScratch: [Int]
  private var candidate: (tone: Int, frequency: Double, count: Int, firstEnd: Double)?
  private var active: Active?
  /// The last tone dropped for want of a lock, and when: the same tone
  /// acquired again soon after (a voice over it held off the lock) keeps
  /// its start.
  private var dropped: (tone: Active, at: Double)?
  /// Peak frequencies of the last three frames, oldest first.
  private var recentPeaks: [[(frequency: Double, level: Double)]] = [[], [], []]
  /// Steady peaks followed from frame to frame (within 1 Hz, through gaps
  /// of up to `trackGap`): where each was first seen, and last.
  private var peakTracks: [(frequency: Double, onset: Double, lastSeen: Double)] = []
  /// Where each peak of the latest frame was first seen (its track's onset).
  private var peakOnsets: [Double] = []
  /// Frames without the tone that end it (200 ms: a voice hides a sub-tone
  /// that long as its pitch glides through it).
  private static let endingMisses = 10
  /// Frames a tone already reported as started waits, once it faded, for
  /// its return on the same phase line (a voice lingering on its frequency
  /// hides it that long) before it is reported as ended where it was last
  /// held. A tone not yet reported ends after `endingMisses`: waiting
  /// would let a voice's pitch pass for one.
  private static let fadingMisses = 50
  /// Seconds from a tone's first frame by which its phase must be locked.
  private static let lockDeadline = 0.7
  /// The corner of the low-pass before decimation, in Hz (a 4th-order
  /// Butterworth): the sub-tones and the peaks they are told from lie below.
  static let lowPassCorner = 900.0
  /// The rate the input is decimated to at least, in Hz (a whole fraction
  /// of the input's).
  static let decimatedRate = 2_000.0
  /// Seconds of audio in a frame, and between frames.
  static let frameSeconds = 0.2
  static let hopSeconds = 0.02
  /// Samples each frame is transformed at (zero padded: 0.5 Hz bins at 2 kHz).
  static let fftLength = 4096
  /// How long before a frame's end the moment lies that the frame stands
  /// for, in seconds: a frame holds a tone once the tone fills about half
  /// of it, so a tone found in a frame ending at `t` is timed from `t`
  /// minus this (and a start is compared with frame ends after adding it).
  static let halfFrame = frameSeconds / 2
  /// Seconds apart two peaks may have first shown and still have started
  /// together (a chord's notes struck at once).
  static let togetherOnsets = 0.1
  /// Seconds a steady peak may be missing and still be followed as the
  /// same peak.
  static let trackGap = 0.2
  /// Where standard tones are looked for, in Hz (the 50 lie from 67.0 to
  /// 254.1 Hz).
  static let searchBand = (low: 62.0, high: 262.0)
  /// Where other steady peaks are looked for, in Hz: a chord's notes and a
  /// note's harmonics beside a tone.
  static let companionBand = (low: 40.0, high: 950.0)

  init(plan: String, tones: [Double], sampleRate: Double, minimumLevel: Double) {
    self.plan = plan
    self.tones = tones
    self.minimumLevel = minimumLevel
    decimation = max(1, Int(sampleRate / Self.decimatedRate))
    rate = sampleRate / Double(decimation)
    let frameLength = Int((Self.frameSeconds * rate).rounded())
    let fftLength = Self.fftLength
    self.frameLength = frameLength
    hop = max(1, Int((Self.hopSeconds * rate).rounded()))
    lowPass = (
      Section(lowPass: Self.lowPassCorner, q: Butterworth.fourthOrderQ.0, sampleRate: sampleRate),
      Section(lowPass: Self.lowPassCorner, q: Butterworth.fourthOrderQ.1, sampleRate: sampleRate)
    )
    history = [Float](repeating: 0, count: frameLength)
    probe = SteadyToneProbe(rate: rate, windowLength: frameLength, step: hop, seconds: 3)
    window = HannWindow.values(length: frameLength).map(Float.init)
    windowSum = window.reduce(0) { $0 + Double($1) }
    self.fftLength = fftLength
    input = fftwf_alloc_real(fftLength)!
    input.initialize(repeating: 0, count: fftLength)
    output = fftwf_alloc_complex(fftLength / 2 + 1)!
    let (input, output) = (input, output)
    fftPlan = SpectrumAnalyzer.makePlan {
      fftwf_plan_dft_r2c_1d(Int32(fftLength), input, output, UInt32(FFTW_ESTIMATE))
    }
    power = [Double](repeating: 0, count: fftLength / 2 + 1)
    peakScratch = [Int](repeating: 0, count: fftLength / 2 + 1)
  }

  deinit {
    SpectrumAnalyzer.destroyPlan(fftPlan)
    fftwf_free(input)
    fftwf_free(output)
  }

  func process(_ samples: UnsafeBufferPointer<Float>, emit: (ToneDecoderEvent) -> Void) {
    // The filter and the sum in locals: the detector's own properties
    // would be checked for exclusive access at every sample.
    var (first, second) = lowPass
    var (sum, summed) = (accumulator, accumulated)
    for sample in samples {
      sum += second.process(first.process(Double(sample)))
      summed += 1
      guard summed == decimation else { continue }
      let decimated = Float(sum / Double(decimation))
      (sum, summed) = (0, 0)
      take(decimated, emit: emit)
    }
    lowPass = (first, second)
    (accumulator, accumulated) = (sum, summed)
  }

  /// Takes the next sample at the decimated rate, analysing a frame every `hop`.
  private func take(_ decimated: Float, emit: (ToneDecoderEvent) -> Void) {
    history[writeIndex] = decimated
    probe.append(decimated)
    writeIndex = (writeIndex + 1) % frameLength
    decimatedCount += 1
    if decimatedCount >= frameLength && (decimatedCount - frameLength) % hop == 0 {
      analyseFrame(endingAt: Double(decimatedCount) / rate, emit: emit)
    }
  }

  func finish(emit: (ToneDecoderEvent) -> Void) {
    // A tone still found in the last frame lasts to the end of the stream.
    if var active {
      if active.misses == 0 { active.lastSeen = Double(decimatedCount) / rate }
      report(active, emit: emit)
    }
    active = nil
    candidate = nil
  }

  /// The bins from `low` to `high` whose power exceeds the one below and
  /// is at least the one above, in order: marked two at a time without a
  /// branch on the powers (noise makes such a branch a coin toss,
  /// `vk_local_maxima`), then gathered.
  private func localMaxima(from low: Int, to high: Int) -> [(bin: Int, power: Double)] {
    power.withUnsafeBufferPointer { power in
      peakScratch.withUnsafeMutableBufferPointer { found in
        let count = vk_local_maxima(power.baseAddress!, low, high, found.baseAddress!)
        var peaks = [(bin: Int, power: Double)]()
        peaks.reserveCapacity(count)
        for index in 0..<count { peaks.append((found[index], power[found[index]])) }
        return peaks
      }
    }
  }

  /// The standard tones found in the frame just completed, strongest first,
  /// with their measured frequencies and levels in dBFS.
  private func matches(endingAt frameEnd: Double) -> [(tone: Int, frequency: Double, level: Double)]
  {
    // The ring from its oldest sample, in its two pieces.
    let newerStart = frameLength - writeIndex
    for n in 0..<newerStart { input[n] = history[writeIndex + n] * window[n] }
    for n in newerStart..<frameLength { input[n] = history[n - newerStart] * window[n] }
    fftwf_execute(fftPlan)
    let binWidth = rate / Double(fftLength)
    let low = Int(Self.searchBand.low / binWidth)
    let wideLow = Int(Self.companionBand.low / binWidth)
    let high = min(fftLength / 2 - 1, Int(Self.searchBand.high / binWidth) + 1)
    let wideHigh = min(
      fftLength / 2 - 1 - Int(7.5 / binWidth + 1), Int(Self.companionBand.high / binWidth))
    // A steady sinusoid's lobe falls 12 dB within 7.5 Hz on at least one side.
    let flank = Int((7.5 / binWidth).rounded())
    // The transform's complex values as the floats they are, re then im.
    let values = UnsafeRawPointer(output).assumingMemoryBound(to: Float.self)
    power.withUnsafeMutableBufferPointer { power in
      for bin in (wideLow - flank)...min(fftLength / 2, wideHigh + flank) {
        let re = Double(values[2 * bin])
        let im = Double(values[2 * bin + 1])
        power[bin] = re * re + im * im
      }
    }
    var peaks = localMaxima(from: wideLow, to: wideHigh)
    peaks.sort { $0.power > $1.power }
    func frequency(_ bin: Int) -> Double {
      let left = log(power[bin - 1] + 1e-30)
      let centre = log(power[bin] + 1e-30)
      let right = log(power[bin + 1] + 1e-30)
      let denominator = left - 2 * centre + right
      let offset = denominator < 0 ? 0.5 * (left - right) / denominator : 0
      return (Double(bin) + offset) * binWidth
    }
    // Every clear peak from 40 to 950 Hz (a tone's sidelobes stay below −31 dB).
    let clear = (peaks.first?.power ?? 0) * 0.003
    let latest = peaks.prefix(8).filter {
      $0.power >= clear && level($0.power) >= minimumLevel
        && min(power[$0.bin - flank], power[$0.bin + flank]) <= $0.power * 0.063
    }.map { (frequency: frequency($0.bin), level: level($0.power)) }
    peakTracks.removeAll { frameEnd - $0.lastSeen > Self.trackGap }
    peakOnsets = latest.map { peak in
      guard let index = peakTracks.firstIndex(where: { abs($0.frequency - peak.frequency) <= 1 })
      else {
        peakTracks.append((peak.frequency, frameEnd, frameEnd))
        return frameEnd
      }
      peakTracks[index].frequency = peak.frequency
      peakTracks[index].lastSeen = frameEnd
      return peakTracks[index].onset
    }
    recentPeaks.removeFirst()
    recentPeaks.append(latest)
    var found = [(tone: Int, frequency: Double, level: Double)]()
    for peak in peaks.lazy.filter({ $0.bin >= low && $0.bin <= high }).prefix(4) {
      let level = level(peak.power)
      guard level >= minimumLevel else { break }
      let frequency = frequency(peak.bin)
      guard let tone = nearest(frequency), abs(frequency - tones[tone]) <= 0.006 * tones[tone]
      else { continue }
      found.append((tone, frequency, level))
    }
    return found
  }

  /// The level in dBFS of a sinusoid whose peak bin has `power`.
  private func level(_ power: Double) -> Double {
    20 * log10(2 * power.squareRoot() / windowSum + 1e-30)
  }

  /// Whether a peak other than the tone at `frequency` and `level` (dBFS),
  /// which began at `start` (seconds), has held its frequency (±0.5 Hz)
  /// over the last three frames, within 12 dB of the tone's level, and
  /// either started with it (within `togetherOnsets`) or stands in a chord's interval
  /// to it within 6 dB: a chord's notes or a note's harmonics, or a note
  /// held into the next chord. A CTCSS tone is the only steady sound below 950 Hz that
  /// starts alone: voice pitch glides, noise peaks wander, and a pager's or
  /// a keypad's tones start after the carrier's sub-tone, at no simple
  /// ratio to it (or sound 15 dB louder).
  private func anotherSteadyPeak(than frequency: Double, level: Double, start: Double) -> Bool {
    let latest = recentPeaks.last!
    // Onsets compared as seen in the peaks (a struck note's peak shows a
    // frame or two late): the tone's own, if it is among them.
    let onset =
      latest.firstIndex { abs($0.frequency - frequency) <= 0.5 }.map { peakOnsets[$0] }
      ?? start + Self.halfFrame
    return latest.indices.contains { index in
      let peak = latest[index]
      return abs(peak.frequency - frequency) > 8 && !Self.isMains(peak.frequency)
        && abs(peak.level - level) <= 12
        && (peakOnsets[index] <= onset + Self.togetherOnsets
          || abs(peak.level - level) <= 6 && Self.isConsonant(peak.frequency, frequency))
        && recentPeaks.dropLast().allSatisfy { frame in
          frame.contains { abs($0.frequency - peak.frequency) <= 0.5 }
        }
    }
  }

  /// Whether two frequencies stand in a simple ratio (p/q with p and q up
  /// to 6, within 1 %): the intervals of a chord, where a note held from
  /// the chord before sounds on with the new chord's notes.
  private static func isConsonant(_ a: Double, _ b: Double) -> Bool {
    let ratio = max(a, b) / min(a, b)
    return (1...6).contains { q in
      let p = (ratio * Double(q)).rounded()
      return p >= 1 && p <= 6 && abs(ratio * Double(q) / p - 1) <= 0.01
    }
  }

  /// Whether `frequency` is mains hum (a multiple of 50 or 60 Hz, ±1 Hz),
  /// which a recording may carry under any tone.
  private static func isMains(_ frequency: Double) -> Bool {
    [50.0, 60.0].contains { mains in
      let multiple = (frequency / mains).rounded()
      return multiple >= 1 && abs(frequency - multiple * mains) <= 1
    }
  }

  /// The index of the standard tone nearest to `frequency`.
  func nearest(_ frequency: Double) -> Int? {
    tones.indices.min { abs(tones[$0] - frequency) < abs(tones[$1] - frequency) }
  }

  private func analyseFrame(endingAt frameEnd: Double, emit: (ToneDecoderEvent) -> Void) {
    let found = matches(endingAt: frameEnd)
    // A frame holds the tone once it fills about half of it (`halfFrame`).
    let edge = frameEnd - Self.halfFrame
    if let current = active, current.lock == nil, edge - current.foundFrom > Self.lockDeadline {
      // Never steady enough to lock on: a voice's pitch resting on a
      // standard frequency.
      dropped = (current, edge)
      active = nil
    }
    guard let current = active else {
      acquire(from: found, frameEnd: frameEnd, emit: emit)
      return
    }
    follow(current, match: found.first { $0.tone == current.tone }, frameEnd: frameEnd, emit: emit)
    // A tone not locked yet may be a voice's pitch resting on a standard
    // frequency, and one that faded may have ended with its transmission:
    // neither keeps another tone from being acquired meanwhile, nor the
    // faded one's own tone off its phase line (the next transmission
    // through the same repeater).
    if let held = active, held.lock == nil || held.isFading {
      let isFaded = held.isFading
      acquire(
        from: found.filter { $0.tone != held.tone || isFaded }, frameEnd: frameEnd, emit: emit)
    }
  }

  /// Takes the latest frame into the active tone: held, or missed (and
  /// then perhaps ended and reported).
  private func follow(
    _ tone: Active, match: (tone: Int, frequency: Double, level: Double)?, frameEnd: Double,
    emit: (ToneDecoderEvent) -> Void
  ) {
    var current = tone
    let edge = frameEnd - Self.halfFrame
    let isFading = current.isFading
    var trial = current
    let isHeld = holds(&trial, match: match)
    if isHeld && (!isFading || current.isReturning) {
      current = trial
      current.lastSeen = edge
      current.misses = 0
      current.isReturning = false
      current.frames += 1
      if let match { current.peakLevel = max(current.peakLevel, match.level) }
      let frequency = current.lock?.refinedFrequency ?? match?.frequency ?? tones[current.tone]
      let level = match?.level ?? current.lock.map { self.level($0.amplitude * $0.amplitude) }
      if let level, anotherSteadyPeak(than: frequency, level: level, start: current.start) {
        current.crowdedFrames += 1
      }
    } else {
      // Back on its line after fading: once more in the next frame and it
      // carries on.
      current.isReturning = isHeld && isFading
      current.misses += 1
      if current.misses >= Self.endingMisses {
        if let lock = current.lock, probe.sounds(lock) {
          // A voice over it: its phase still adds up over a longer window.
          current.lastSeen = max(current.lastSeen, frameEnd - probe.soundingLag)
        } else if !current.isAnnounced || current.misses >= Self.fadingMisses {
          report(current, emit: emit)
          active = nil
          candidate = nil
          return
        }
      }
    }
    if !current.isAnnounced && current.qualifies(minimumDuration: minimumDuration) {
      current.isAnnounced = true
      emit(.toneStart(decoded(current)))
    }
    active = current
  }

  /// Follows the candidate tone through the standard tones `found` in the
  /// latest frame; one found steady in three frames in a row (and not
  /// beside another steady peak, as a chord's note is) becomes the active
  /// tone, replacing one not locked yet or faded (which is then reported).
  private func acquire(
    from found: [(tone: Int, frequency: Double, level: Double)], frameEnd: Double,
    emit: (ToneDecoderEvent) -> Void
  ) {
    let edge = frameEnd - Self.halfFrame
    guard let previous = candidate,
      let match = found.first(where: {
        $0.tone == previous.tone && abs($0.frequency - previous.frequency) <= 0.35
      })
    else {
      candidate = found.first.map { ($0.tone, $0.frequency, 1, frameEnd) }
      return
    }
    candidate = (previous.tone, match.frequency, previous.count + 1, previous.firstEnd)
    guard previous.count + 1 >= 3 else { return }
    if anotherSteadyPeak(
      than: match.frequency, level: match.level, start: previous.firstEnd - Self.halfFrame)
    {
      // Music: start again from this frame.
      candidate = (previous.tone, match.frequency, 1, frameEnd)
      return
    }
    // The first frame that found it may have been late (voice over it).
    let lock = probe.lock(near: match.frequency)
    var start = min(
      previous.firstEnd - Self.halfFrame, lock.map { probe.start(of: $0) } ?? .infinity)
    var foundFrom = previous.firstEnd - Self.halfFrame
    if let (earlier, at) = dropped, earlier.tone == previous.tone, edge - at <= 0.5 {
      start = min(start, earlier.start)
      foundFrom = min(foundFrom, earlier.foundFrom)
    }
    if let replaced = active, replaced.isAnnounced {
      report(replaced, emit: emit)
      dropped = nil
    } else if let replaced = active {
      dropped = (replaced, edge)
    } else {
      dropped = nil
    }
    active = Active(
      tone: previous.tone, start: start, foundFrom: foundFrom, lastSeen: edge,
      peakLevel: match.level, lock: lock)
    candidate = nil
  }

  /// Whether the latest frame still holds the active tone. Once its phase
  /// is locked, only a window on its phase line does (louder sounds may
  /// hide its peak; a voice gliding through its frequency is not on the
  /// line); before, its peak does.
  private func holds(_ tone: inout Active, match: (tone: Int, frequency: Double, level: Double)?)
    -> Bool
  {
    guard var lock = tone.lock else {
      guard let match else { return false }
      tone.lock = probe.lock(near: match.frequency)
      // Locked once it has sounded for 0.4 s: now its start can be found.
      if let lock = tone.lock { tone.start = min(tone.start, probe.start(of: lock)) }
      return true
    }
    guard probe.follows(&lock) else { return false }
    tone.lock = lock
    return true
  }

  private func report(_ tone: Active, emit: (ToneDecoderEvent) -> Void) {
    // Music holds notes as steadily as an encoder, but never one alone.
    guard tone.isAnnounced || tone.qualifies(minimumDuration: minimumDuration) else { return }
    emit(.tone(decoded(tone)))
  }

  private func decoded(_ tone: Active) -> DecodedTone {
    DecodedTone(
      plan: plan, kind: .subAudible, time: max(0, tone.start), duration: tone.lastSeen - tone.start,
      symbol: "~",
      frequencies: [tones[tone.tone]], levels: [tone.peakLevel])
  }
}
