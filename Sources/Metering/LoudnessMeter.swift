/// What a loudness meter found over a whole programme.
public struct LoudnessSummary: Sendable, Equatable {
  /// Integrated loudness (BS.1770-4, gated), in LUFS; `nil` under 0.4 s or silence.
  public var integratedLUFS: Double?
  /// Loudness range (EBU Tech 3342), in LU; `nil` under 3 s or silence.
  public var loudnessRangeLU: Double?
  /// Largest true peak of any channel, in dBTP.
  public var truePeakDBTP: Double?
  /// Largest momentary loudness, in LUFS.
  public var momentaryMaxLUFS: Double?
  /// Largest short-term loudness, in LUFS.
  public var shortTermMaxLUFS: Double?

  public init(
    integratedLUFS: Double?, loudnessRangeLU: Double?, truePeakDBTP: Double?,
    momentaryMaxLUFS: Double?, shortTermMaxLUFS: Double?
  ) {
    self.integratedLUFS = integratedLUFS
    self.loudnessRangeLU = loudnessRangeLU
    self.truePeakDBTP = truePeakDBTP
    self.momentaryMaxLUFS = momentaryMaxLUFS
    self.shortTermMaxLUFS = shortTermMaxLUFS
  }
}

/// Loudness to ITU-R BS.1770-4 and EBU R128 (Tech 3341, 3342): every
/// channel K-weighted and squared, summed with its channel weight over
/// 100 ms steps; momentary loudness over the last 400 ms, short-term over
/// the last 3 s, both updated every 100 ms; integrated loudness from the
/// 400 ms blocks with the absolute (−70 LUFS) and relative (−10 LU) gates;
/// loudness range from 3 s blocks taken every second (as libebur128 does)
/// with a −20 LU relative gate. True peak is `TruePeakMeter`'s, per channel.
///
/// Channel weights follow the channel count: 1–3 channels weigh 1 (L, R,
/// C); 4 are L, R, Ls, Rs; 5 are L, R, C, Ls, Rs; 6 are 5.1 in WAV order
/// (L, R, C, LFE, Ls, Rs) with the LFE left out; surrounds weigh 1.41
/// (+1.5 dB); channels past the sixth are left out.
///
/// Loudness is measured from `lowestSampleRate` up; audio at a lower rate
/// is taken and measures nothing (every loudness `nil`): commands refuse
/// loudness for it in one line first.
///
/// Buffers are allocated in `init`; `process` is real-time safe (a live
/// meter runs it on the audio thread); `summary` allocates nothing either
/// but walks 10,000 bins: call it from the control thread.
public final class LoudnessMeter {
  /// The lowest rate loudness is measured at: telephone audio's. There the
  /// K-weighting (`KWeighting`) is within 0.5 dB of the standard's 48 kHz
  /// curve across the whole band; lower, the shelf at 1.68 kHz nears the
  /// band's top and the curve departs from it (1.4 dB at 4 kHz), and below
  /// 3,364 Hz the shelf lies above the band and the filter is unstable,
  /// its output infinite: no BS.1770 loudness exists to measure.
  public static let lowestSampleRate = 8_000.0

  /// Whether loudness is measured at `sampleRate`.
  public static func measures(sampleRate: Double) -> Bool { sampleRate >= lowestSampleRate }

  public let sampleRate: Double
  public let channelCount: Int
  /// The weight of each channel in the sum.
  public let weights: [Double]
  /// Frames per 100 ms step.
  public let stepFrames: Int
  /// One filter per pair of channels.
  private var filters: [KWeighting]
  /// Each pair's sums of squares over the step in progress, run on across calls.
  private var pairSums: [SIMD2<Double>]
  private var framesInStep = 0
  /// Weighted mean-square energy of the last 30 steps, as a ring.
  private var steps: [Double]
  private var stepCount = 0
  private var blocks = LoudnessHistogram()
  private var shortTermBlocks = LoudnessHistogram()
  private var momentaryEnergy: Double?
  private var shortTermEnergy: Double?
  private var momentaryMax: Double?
  private var shortTermMax: Double?

  public init(sampleRate: Double, channelCount: Int) {
    precondition(sampleRate > 0 && channelCount > 0)
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    weights = Self.weights(channelCount: channelCount)
    stepFrames = max(1, Int((sampleRate / 10).rounded()))
    // No filter (so nothing measured) at a rate it cannot be designed for.
    filters =
      Self.measures(sampleRate: sampleRate)
      ? Array(repeating: KWeighting(sampleRate: sampleRate), count: (channelCount + 1) / 2) : []
    pairSums = Array(repeating: .zero, count: (channelCount + 1) / 2)
    steps = Array(repeating: 0, count: 30)
  }

  /// The BS.1770 weight of each channel for a channel count.
  public static func weights(channelCount: Int) -> [Double] {
    let layout: [Double]
    switch channelCount {
    case 4: layout = [1, 1, 1.41, 1.41]
    case 5: layout = [1, 1, 1, 1.41, 1.41]
    default: layout = [1, 1, 1, 0, 1.41, 1.41]
    }
    return (0..<channelCount).map { $0 < layout.count ? layout[$0] : 0 }
  }

  /// Momentary loudness (last 400 ms) in LUFS; `nil` before 400 ms.
  public var momentaryLUFS: Double? { momentaryEnergy.flatMap(Self.loudness) }
  /// Short-term loudness (last 3 s) in LUFS; `nil` before 3 s.
  public var shortTermLUFS: Double? { shortTermEnergy.flatMap(Self.loudness) }

  /// Measures `frameCount` interleaved frames.
  public func process(_ samples: UnsafePointer<Float>, frameCount: Int) {
    if filters.isEmpty { return }
    var offset = 0
    while offset < frameCount {
      let count = min(frameCount - offset, stepFrames - framesInStep)
      for pair in 0..<filters.count {
        let first = 2 * pair
        let hasSecond = first + 1 < channelCount
        pairSums[pair] = filters[pair].sumsOfSquares(
          samples + offset * channelCount, first: first, pair: hasSecond, count: count,
          stride: channelCount, adding: pairSums[pair])
      }
      framesInStep += count
      offset += count
      if framesInStep == stepFrames { endStep() }
    }
  }

  /// Everything measured so far, with `truePeakDBTP` as given.
  public func summary(truePeakDBTP: Double?) -> LoudnessSummary {
    LoudnessSummary(
      integratedLUFS: blocks.gatedLoudness(relativeGate: -10),
      loudnessRangeLU: shortTermBlocks.range(), truePeakDBTP: truePeakDBTP,
      momentaryMaxLUFS: momentaryMax.flatMap(Self.loudness),
      shortTermMaxLUFS: shortTermMax.flatMap(Self.loudness))
  }

  private func endStep() {
    var energy = 0.0
    for channel in 0..<channelCount {
      energy += weights[channel] * pairSums[channel / 2][channel % 2]
    }
    for pair in 0..<filters.count {
      pairSums[pair] = .zero
      filters[pair].settle()
    }
    steps[stepCount % 30] = energy / Double(stepFrames)
    stepCount += 1
    framesInStep = 0
    if stepCount >= 4 {
      let momentary = mean(ofLast: 4)
      momentaryEnergy = momentary
      momentaryMax = max(momentaryMax ?? 0, momentary)
      blocks.add(momentary)
    }
    if stepCount >= 30 {
      let shortTerm = mean(ofLast: 30)
      shortTermEnergy = shortTerm
      shortTermMax = max(shortTermMax ?? 0, shortTerm)
      if stepCount % 10 == 0 { shortTermBlocks.add(shortTerm) }
    }
  }

  private func mean(ofLast count: Int) -> Double {
    var sum = 0.0
    for back in 1...count { sum += steps[(stepCount - back) % 30] }
    return sum / Double(count)
  }

  /// LUFS of an energy; `nil` for digital silence.
  private static func loudness(_ energy: Double) -> Double? {
    energy > 0 ? LoudnessHistogram.loudness(energy) : nil
  }
}
