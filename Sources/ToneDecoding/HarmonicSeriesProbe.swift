import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// What a run's whole span shows of a voice under a pair of tones
/// (`DualToneRunRule.VoiceSpan`).
struct VoiceEvidence {
  /// For the pitch both tones are harmonics of that shows it best: the
  /// power on its other multiples in the voice band less the power
  /// halfway between them, over the pair's power.
  var series = 0.0
  /// The power just beside the tones' main lobes above the band's noise
  /// floor, over the lobes' power: a gliding or wavering voice spreads
  /// there, a key and white noise do not.
  var beside = 0.0
}

/// Looks at a pair of tones that passed for a DTMF key over the run's
/// whole span of samples at once. A 20 ms frame's 50 Hz bins cannot tell
/// a 100 Hz voice's harmonics from the gaps between them, nor a harmonic
/// that glides from one that holds; the run's 35-120 ms can. Owned by the
/// decoder's thread; allocates only in `init`.
final class HarmonicSeriesProbe {
  typealias Rule = DualToneRunRule.VoiceSpan

  private let sampleRate: Double
  private let capacity: Int
  private let transform: RealFourierTransform
  private let powers: UnsafeMutablePointer<Double>
  private let scratch: (UnsafeMutablePointer<Double>, UnsafeMutablePointer<Double>)

  /// A probe for runs in a stream at `sampleRate`.
  init(sampleRate: Double) {
    self.sampleRate = sampleRate
    capacity = max(2, Int((Rule.longestSpan * sampleRate).rounded(.up)))
    var size = 2
    while size < Rule.zeroPadding * capacity { size *= 2 }
    transform = RealFourierTransform(size: size)
    let bins = transform.binCount
    powers = .allocate(capacity: bins)
    powers.initialize(repeating: 0, count: bins)
    scratch = (.allocate(capacity: bins), .allocate(capacity: bins))
    scratch.0.initialize(repeating: 0, count: bins)
    scratch.1.initialize(repeating: 0, count: bins)
  }

  deinit {
    powers.deallocate()
    scratch.0.deallocate()
    scratch.1.deallocate()
  }

  /// Hops a ring must hold beyond a frame for `evidence` to reach a run's
  /// first `Rule.longestSpan` seconds when the run is decided.
  static func extraHops(hop: Int, sampleRate: Double) -> Int {
    Int((Rule.longestSpan * sampleRate / Double(hop)).rounded(.up)) + Rule.decisionLagHops
  }

  /// What `run`'s span shows of a voice, in a Hann window over its
  /// samples: its first `longestSpan` seconds, or its last if `ring` no
  /// longer holds the first. Nothing when the ring holds neither.
  func evidence(_ run: ToneRun, ring: FrameRing) -> VoiceEvidence {
    guard let count = ring.copyHeld(by: run, atMost: capacity, into: transform.real) else {
      return VoiceEvidence()
    }
    analyze(count)
    let binWidth = sampleRate / Double(transform.size)
    // A Hann window's main lobe reaches two of its own bins each side.
    let resolution = sampleRate / Double(count)
    let lobe = Rule.lobeBins * resolution
    let (low, high) = run.frequencies
    func power(_ frequency: Double) -> Double {
      let bin = Int((frequency / binWidth).rounded())
      return bin >= 0 && bin < transform.binCount ? powers[bin] : 0
    }
    var evidence = VoiceEvidence()
    let band =
      max(
        1, Int(SignallingBand.voiceLow / binWidth))...min(
        transform.binCount - 1, Int(SignallingBand.voiceHigh / binWidth))
    let floor = noiseFloor(band)
    var lobes = 0.0
    var beside = 0.0
    for bin in band {
      let frequency = Double(bin) * binWidth
      let distance = min(abs(frequency - low), abs(frequency - high))
      if distance <= lobe {
        lobes += powers[bin]
      } else if distance <= Rule.besideBins * resolution {
        beside += powers[bin] - floor
      }
    }
    if lobes > 0 { evidence.beside = beside / lobes }
    let pair = power(low) + power(high)
    guard pair > 0 else { return evidence }
    for lowHarmonic in 1...DualToneRunRule.HarmonicPair.highestLowHarmonic {
      guard
        let pitch = DualToneRunRule.HarmonicPair.pitch(
          low: low, high: high, lowHarmonic: lowHarmonic)
      else { break }
      guard pitch > 2 * lobe else { continue }
      var series = 0.0
      DualToneRunRule.HarmonicPair.forEachMultiple(of: pitch, clearOf: (low, high), by: lobe) {
        at, halfway in
        series += power(at) - power(halfway)
      }
      evidence.series = max(evidence.series, series / pair)
    }
    return evidence
  }

  /// Windows the first `count` samples (Hann), pads them with zeros and
  /// keeps their power spectrum in `powers`.
  private func analyze(_ count: Int) {
    let samples = transform.real
    // cos(step × (index + ½)) by rotation: no cosine per sample.
    let step = 2 * Double.pi / Double(count)
    let turn = (cos(step), sin(step))
    var angle = (cos(step / 2), sin(step / 2))
    for index in 0..<count {
      samples[index] *= Float(0.5 - 0.5 * angle.0)
      angle = (angle.0 * turn.0 - angle.1 * turn.1, angle.0 * turn.1 + angle.1 * turn.0)
    }
    (samples + count).update(repeating: 0, count: transform.size - count)
    transform.forward()
    let complex = transform.complex
    for bin in 0..<transform.binCount {
      let re = Double(complex[2 * bin])
      let im = Double(complex[2 * bin + 1])
      powers[bin] = re * re + im * im
    }
  }

  /// The mean power of a bin of noise in `band`: the median bin's over
  /// ln 2 (a noise bin's power is exponentially distributed), so that the
  /// tones and a voice's harmonics do not count.
  private func noiseFloor(_ band: ClosedRange<Int>) -> Double {
    let count = band.count
    let median = RankSelection.value(
      ofRank: count / 2, in: powers + band.lowerBound, count: count,
      first: scratch.0, second: scratch.1)
    return median / log(2.0)
  }
}
