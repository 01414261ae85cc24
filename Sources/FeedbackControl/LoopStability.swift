import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// How much gain a feedback loop takes before it howls, read from its
/// open-loop impulse response (speaker input to microphone output, with
/// every delay of the loop in it): the loop `mic = talker + F · out`,
/// `out = K · mic` rings without end once `K · F(f) = 1` at some
/// frequency, that is where F's phase is a whole number of turns and
/// `K ≥ 1 / |F(f)|`. The maximum stable gain is therefore
/// `−20 log10 max |F|` over the frequencies where the phase crosses zero,
/// and the frequency of that maximum is the one that howls first.
///
/// The crossings are those `LoopSpectrum` finds. Control thread.
public struct LoopStability: Sendable, Equatable {
  /// The largest broadband gain (dB) at which the loop is still stable.
  public var maximumStableGain: Double
  /// The frequency (Hz) that howls first when the gain passes it.
  public var frequency: Double
  /// Crossings whose margin is within 3 dB of the smallest: how many
  /// frequencies wait in line behind the first.
  public var crossingsWithin3dB: Int

  public init(maximumStableGain: Double, frequency: Double, crossingsWithin3dB: Int) {
    self.maximumStableGain = maximumStableGain
    self.frequency = frequency
    self.crossingsWithin3dB = crossingsWithin3dB
  }

  /// The lowest frequency considered (below it, a loop's transducers pass nothing).
  public static let lowestFrequency = 20.0

  /// The stability of the loop whose open-loop response is `impulseResponse`
  /// delayed by `delay` frames, read between `lowest` and `highest` Hz
  /// (where the response was measured; by default the whole band from
  /// `lowestFrequency`); `nil` when the response is silent there.
  public static func analyze(
    impulseResponse: [Float], sampleRate: Double, delay: Int = 0,
    lowest: Double = lowestFrequency, highest: Double? = nil
  ) -> LoopStability? {
    guard
      let spectrum = LoopSpectrum(
        impulseResponse: impulseResponse, sampleRate: sampleRate, delay: delay, lowest: lowest,
        highest: highest)
    else { return nil }
    let crossings = spectrum.crossings()
    guard let best = crossings.max(by: { $0.gain < $1.gain }), best.gain > 0 else { return nil }
    let within = crossings.filter { $0.gain >= best.gain * Decibels.amplitude(-3) }.count
    return LoopStability(
      maximumStableGain: -20 * log10(best.gain), frequency: best.frequency,
      crossingsWithin3dB: within)
  }
}
