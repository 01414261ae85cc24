import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// How much power a pair's span holds under the voice band beside one
/// steady line where a radio's sub-tone would lie: music's bass notes and
/// drums, which a key's line never carries (`DualToneRunRule.OverBass`).
/// The span is low-passed (a fourth-order Butterworth filter), the
/// strongest line of the sub-tones' range is found by a scan of single
/// DFT bins and set aside, and what is left is weighed against the two
/// tones' power. Owned by the decoder's thread; allocates only in `init`.
final class LowBandProbe {
  typealias Rule = DualToneRunRule.OverBass

  /// How far apart the lines looked for in the sub-tones' range lie, Hz.
  private static let scanStep = 2.0
  /// About the rate the low band is scanned at, in Hz.
  private static let scanRate = 1_000.0
  /// The share of the span left for the low-pass to settle.
  private static let settlingShare = 0.25

  private let sampleRate: Double
  private let capacity: Int
  private let samples: UnsafeMutablePointer<Float>
  /// The low-pass's two sections, at rest.
  private let sections: (Biquad, Biquad)

  /// A probe for runs in a stream at `sampleRate`.
  init(sampleRate: Double) {
    self.sampleRate = sampleRate
    capacity = max(8, Int((DualToneRunRule.VoiceSpan.longestSpan * sampleRate).rounded(.up)))
    samples = .allocate(capacity: capacity)
    samples.initialize(repeating: 0, count: capacity)
    sections = (
      Biquad.lowPass(
        frequency: Rule.lowBandTop, q: Butterworth.fourthOrderQ.0, sampleRate: sampleRate),
      Biquad.lowPass(
        frequency: Rule.lowBandTop, q: Butterworth.fourthOrderQ.1, sampleRate: sampleRate)
    )
  }

  deinit { samples.deallocate() }

  /// The power under `Rule.lowBandTop` in `run`'s span (its first
  /// `VoiceSpan.longestSpan` seconds, or its last if `ring` no longer
  /// holds the first), its strongest line in `Rule.subTones` set aside,
  /// over the power of the run's two tones, in dB; nil when the ring
  /// holds neither span.
  func bass(_ run: ToneRun, ring: FrameRing) -> Double? {
    guard let count = ring.copyHeld(by: run, atMost: capacity, into: samples) else { return nil }
    let settled = Int(Double(count) * Self.settlingShare)
    // One pass: the two tones' lines and the low-pass run side by side, each
    // in the order it would alone, so the chains overlap and nothing is read twice.
    var lines = (
      Line(run.frequencies.0, sampleRate: sampleRate),
      Line(run.frequencies.1, sampleRate: sampleRate)
    )
    var first = sections.0
    var second = sections.1
    var power = 0.0
    for index in 0..<count {
      let value = samples[index]
      lines.0.add(Double(value))
      lines.1.add(Double(value))
      let low = second.process(first.process(value))
      samples[index] = low
      if index >= settled { power += Double(low) * Double(low) }
    }
    let pair = lines.0.power(count: count) + lines.1.power(count: count)
    power /= Double(count - settled)
    let level = 10 * log10(max(power, 1e-30) / max(pair, 1e-30))
    // Setting a line aside only lowers the level: a pair over less needs no scan.
    guard level >= Rule.bass else { return level }
    // The low band read every `step`-th sample (about 1 kHz): what the
    // low-pass left above half that rate is 25 dB down or more.
    let step = max(1, Int(sampleRate / Self.scanRate))
    var strongest = 0.0
    var frequency = Rule.subTones.lowerBound
    while frequency <= Rule.subTones.upperBound {
      strongest = max(
        strongest, linePower(frequency, from: settled, count: count - settled, step: step))
      frequency += Self.scanStep
    }
    let rest = max(power - strongest, 0)
    return 10 * log10(max(rest, 1e-30) / max(pair, 1e-30))
  }

  /// A single DFT bin summed one sample at a time.
  private struct Line {
    private var sum = (0.0, 0.0)
    private var phasor = (1.0, 0.0)
    private let turn: (Double, Double)

    init(_ frequency: Double, sampleRate: Double, step: Int = 1) {
      let angle = 2 * Double.pi * frequency * Double(step) / sampleRate
      turn = (cos(angle), -sin(angle))
    }

    @inline(__always) mutating func add(_ value: Double) {
      sum = (sum.0 + value * phasor.0, sum.1 + value * phasor.1)
      phasor = (phasor.0 * turn.0 - phasor.1 * turn.1, phasor.0 * turn.1 + phasor.1 * turn.0)
    }

    /// Half the amplitude squared of the line in `count` samples added.
    func power(count: Int) -> Double { 2 * (sum.0 * sum.0 + sum.1 * sum.1) / Double(count * count) }
  }

  /// The power of a line at `frequency` in every `step`-th of
  /// `samples[start..<start + count]` (a single DFT bin: half its
  /// amplitude squared).
  private func linePower(_ frequency: Double, from start: Int, count: Int, step: Int = 1)
    -> Double
  {
    var line = Line(frequency, sampleRate: sampleRate, step: step)
    var read = 0
    for index in stride(from: start, to: start + count, by: step) {
      line.add(Double(samples[index]))
      read += 1
    }
    return line.power(count: read)
  }
}
