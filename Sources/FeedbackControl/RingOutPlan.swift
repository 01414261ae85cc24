import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Notches set ahead from a loop's measured impulse response: for every
/// gain from `ringOutMargin` under the loop's maximum stable gain up to
/// `ringOutRange` over it (in `ringOutGainStep`s), the notches (and, past
/// the bank's size, the duck) that keep every frequency where the loop can
/// ring at least `ringOutMargin` under its limit. This is what a sound
/// engineer's ring-out finds by ear, computed: the loop's response is
/// multiplied by the planned notches' own responses (their phase moves the
/// crossings too) and read again after each notch, so the plan holds for
/// the loop as it will be, not only at the first frequency.
///
/// The steps are cumulative: a higher gain's notches include a lower
/// one's, at least as deep. Built on the control thread; the howl guard
/// reads it on the audio thread (storage is fixed at `init`, reading
/// allocates nothing).
public final class RingOutPlan: @unchecked Sendable {
  /// One planned notch.
  public struct Notch: Sendable, Equatable {
    public var frequency: Double
    /// Cut at the centre, dB (positive).
    public var depth: Double
  }

  public let sampleRate: Double
  /// The loop's maximum stable gain without notches, dB, and the
  /// frequency that howls first past it (Hz).
  public let maximumStableGain: Double
  public let frequency: Double
  /// The gain of step 0, dB; step `k` holds from `firstGain + k · gainStep`.
  public let firstGain: Double
  public let gainStep: Double
  /// Per step: how many notches (the first so many of `notches`).
  private let notchCounts: UnsafeMutableBufferPointer<Int>
  /// Per step and notch slot (`capacity` per step).
  private let frequencies: UnsafeMutableBufferPointer<Double>
  private let depths: UnsafeMutableBufferPointer<Double>
  /// Per step: the broadband duck still needed, dB.
  private let ducks: UnsafeMutableBufferPointer<Double>
  /// Notches a step may hold.
  public let capacity: Int
  public let stepCount: Int

  /// The plan for the loop whose open-loop impulse response (with every
  /// delay of the loop in it, as `micloop latency --save-ir` saves it) is
  /// `impulseResponse`; `nil` when the response has no frequency where it
  /// can ring.
  /// `delay` frames of the loop that the response leaves out are added;
  /// only frequencies between `lowest` and `highest` Hz are read (where
  /// the response was measured; by default the whole band).
  public convenience init?(
    impulseResponse: [Float], sampleRate: Double, delay: Int = 0,
    lowest: Double = LoopStability.lowestFrequency, highest: Double? = nil,
    settings: HowlGuardSettings
  ) {
    guard
      let spectrum = LoopSpectrum(
        impulseResponse: impulseResponse, sampleRate: sampleRate, delay: delay,
        lowest: lowest, highest: highest)
    else { return nil }
    self.init(spectrum: spectrum, margin: settings.ringOutMargin, settings: settings)
  }

  /// The plan for the loop whose response is `spectrum`, keeping every
  /// crossing `margin` dB under its limit; `nil` when it has no crossing.
  public init?(spectrum: LoopSpectrum, margin: Double, settings: HowlGuardSettings) {
    var spectrum = spectrum
    guard let worst = spectrum.worstCrossing, worst.gain > 0 else { return nil }
    let sampleRate = spectrum.sampleRate
    self.sampleRate = sampleRate
    maximumStableGain = -20 * log10(worst.gain)
    frequency = worst.frequency
    capacity = settings.notchCount
    gainStep = settings.ringOutGainStep
    firstGain = maximumStableGain - margin
    stepCount = max(1, Int(((settings.ringOutRange + margin) / gainStep).rounded()) + 1)
    notchCounts = .allocate(capacity: stepCount)
    frequencies = .allocate(capacity: stepCount * max(1, capacity))
    depths = .allocate(capacity: stepCount * max(1, capacity))
    ducks = .allocate(capacity: stepCount)
    notchCounts.initialize(repeating: 0)
    frequencies.initialize(repeating: 0)
    depths.initialize(repeating: 0)
    ducks.initialize(repeating: 0)

    let quality = settings.notchQuality
    let reach = settings.sameNotchReach
    let centre = settings.ringOutReach
    var planned = [Notch]()
    for step in 0..<stepCount {
      let gain = firstGain + Double(step) * gainStep
      var duck = 0.0
      // Each round sets or deepens one notch; the bank's depth limit bounds the rounds.
      for _ in 0..<(capacity * Int(settings.maximumDepth / settings.depthStep + 1) + 1) {
        guard let crossing = spectrum.worstCrossing else { break }
        let excess = 20 * log10(crossing.gain) + gain + margin
        guard excess > 0 else { break }
        // A crossing in a notch's middle is deepened there; one on its flank
        // (the notch's phase moved it) gets a notch of its own while the bank has room.
        let nearest = planned.indices.min {
          abs(log2(crossing.frequency / planned[$0].frequency))
            < abs(log2(crossing.frequency / planned[$1].frequency))
        }
        let distance =
          nearest.map { abs(log2(crossing.frequency / planned[$0].frequency)) } ?? .infinity
        let near = distance <= (planned.count < capacity ? centre : reach) ? nearest : nil
        if let near, planned[near].depth < settings.maximumDepth {
          let old = planned[near]
          let deeper = min(
            settings.maximumDepth,
            max(
              old.depth + settings.depthStep, Self.rounded(old.depth + excess, settings.depthStep)))
          planned[near].depth = deeper
          let shape = NotchShape(frequency: old.frequency, quality: quality, sampleRate: sampleRate)
          let before = NotchShape.amount(forDepth: old.depth)
          let after = NotchShape.amount(forDepth: deeper)
          spectrum.multiply { c, s in
            let new = shape.notch(amount: after, cosine: c, sine: s)
            let was = shape.notch(amount: before, cosine: c, sine: s)
            let power = was.re * was.re + was.im * was.im
            return (
              (new.re * was.re + new.im * was.im) / power,
              (new.im * was.re - new.re * was.im) / power
            )
          }
        } else if near == nil && planned.count < capacity {
          let depth = min(
            settings.maximumDepth,
            max(settings.depthStep, Self.rounded(excess, settings.depthStep)))
          planned.append(Notch(frequency: crossing.frequency, depth: depth))
          let shape = NotchShape(
            frequency: crossing.frequency, quality: quality, sampleRate: sampleRate)
          let amount = NotchShape.amount(forDepth: depth)
          spectrum.multiply { c, s in shape.notch(amount: amount, cosine: c, sine: s) }
        } else {
          // The bank is full, or this notch is as deep as it goes: the rest is the duck's.
          duck = excess.rounded(.up)
          break
        }
      }
      // Out of rounds with the loop still too close to its limit: the duck takes the rest.
      if duck == 0, let crossing = spectrum.worstCrossing {
        duck = max(0, (20 * log10(crossing.gain) + gain + margin).rounded(.up))
      }
      notchCounts[step] = planned.count
      for (slot, notch) in planned.enumerated() {
        frequencies[step * capacity + slot] = notch.frequency
        depths[step * capacity + slot] = notch.depth
      }
      ducks[step] = duck
    }
  }

  deinit {
    notchCounts.deallocate()
    frequencies.deallocate()
    depths.deallocate()
    ducks.deallocate()
  }

  private static func rounded(_ depth: Double, _ step: Double) -> Double {
    (depth / step).rounded(.up) * step
  }

  /// The step that holds at `gain` dB, or `nil` below the first (any thread).
  public func step(at gain: Double) -> Int? {
    guard gain >= firstGain - 1e-9 else { return nil }
    return min(stepCount - 1, Int(((gain - firstGain) / gainStep + 1e-9).rounded(.down)))
  }

  /// Whether the plan keeps the loop under its limit at `gain` dB: any
  /// gain up to its last step (lower ones need nothing).
  public func covers(_ gain: Double) -> Bool { gain < firstGain + Double(stepCount) * gainStep }

  /// The gain from which `step` holds, dB.
  public func gain(ofStep step: Int) -> Double { firstGain + Double(step) * gainStep }
  /// How many notches `step` sets.
  public func notchCount(_ step: Int) -> Int { notchCounts[step] }
  /// Notch `index` (0 ..< `notchCount(step)`) of `step`.
  public func notch(_ index: Int, ofStep step: Int) -> Notch {
    Notch(frequency: frequencies[step * capacity + index], depth: depths[step * capacity + index])
  }
  /// The duck `step` needs past its notches, dB (0: none).
  public func duck(ofStep step: Int) -> Double { ducks[step] }
}
