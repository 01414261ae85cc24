import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Whether a run's two tones were sounding before it began, as a held
/// note's partials are and a key's are not (`DualToneRunRule.HeldNote`):
/// each tone's level in windows just before the run against its level in
/// the run's first window. Owned by the decoder's thread; allocates only in
/// `init`.
final class ToneOnsetProbe {
  typealias Rule = DualToneRunRule.HeldNote

  private let sampleRate: Double
  private let windowLength: Int
  private let gapLength: Int
  private let samples: UnsafeMutablePointer<Float>
  /// The Hann window over `windowLength` samples.
  private let window: [Double]

  init(sampleRate: Double) {
    self.sampleRate = sampleRate
    windowLength = max(8, Int((Rule.window * sampleRate).rounded()))
    gapLength = Int((Rule.gap * sampleRate).rounded())
    samples = .allocate(capacity: windowLength)
    samples.initialize(repeating: 0, count: windowLength)
    window = HannWindow.values(length: windowLength)
  }

  deinit { samples.deallocate() }

  /// Samples a ring must hold before a run's first frame for
  /// `soundedBefore` to look before it.
  static func extraSamples(sampleRate: Double) -> Int {
    Int(((Rule.gap + Double(Rule.windowsBefore) * Rule.window) * sampleRate).rounded(.up))
  }

  /// Whether both tones of `run` lay within `Rule.rise` dB of their level
  /// at its start in every window before it; false when `ring` no longer
  /// holds the samples (a run is taken as a key unless shown otherwise).
  func soundedBefore(_ run: ToneRun, ring: FrameRing) -> Bool {
    let runStart = run.heldSamples(frameLength: ring.frameLength, hop: ring.hop).lowerBound
    let earliest = runStart - gapLength - Rule.windowsBefore * windowLength
    guard earliest >= 0, ring.copy(from: runStart, count: windowLength, into: samples) else {
      return false
    }
    let during = (power(at: run.frequencies.0), power(at: run.frequencies.1))
    for index in 1...Rule.windowsBefore {
      let start = runStart - gapLength - index * windowLength
      guard ring.copy(from: start, count: windowLength, into: samples) else { return false }
      let before = (power(at: run.frequencies.0), power(at: run.frequencies.1))
      if !Rule.bothSounding(
        low: decibels(during.0, over: before.0), high: decibels(during.1, over: before.1))
      {
        return false
      }
    }
    return true
  }

  private func decibels(_ power: Double, over reference: Double) -> Double {
    10 * log10(max(power, 1e-20) / max(reference, 1e-20))
  }

  /// The power of `samples` at `frequency` through the Hann window (Goertzel).
  private func power(at frequency: Double) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
    var previous = 0.0
    var beforePrevious = 0.0
    for index in 0..<windowLength {
      let current = Double(samples[index]) * window[index] + coefficient * previous - beforePrevious
      beforePrevious = previous
      previous = current
    }
    return previous * previous + beforePrevious * beforePrevious
      - coefficient * previous * beforePrevious
  }
}
