import SignalDSP

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One channel's meter reading under standard ballistics (`MeterBallistics`):
/// a peak meter with hold and fall, a quasi-peak programme meter, or a VU
/// meter. Loudness (`.lufs`) is `LoudnessMeter`'s job; this one reads
/// nothing for it.
///
/// No allocation; real-time safe. One caller at a time.
public struct BallisticMeter: Sendable {
  public let ballistics: MeterBallistics
  /// Fraction of the distance to the rectified sample a quasi-peak meter
  /// charges per sample (1: instant).
  private let charge: Float
  /// Factor per sample of the fall.
  private let fall: Float
  private let holdSamples: Int
  /// Coefficient of each of the VU meter's two one-pole stages.
  private let vuCoefficient: Float
  /// The reading, linear (peak meters: amplitude; VU: rectified mean).
  private var value: Float = 0
  /// Samples since the reading last rose.
  private var sinceRise = 0
  private var vuStage: Float = 0
  /// Peak and length of the chunk `process` has open (digital meter).
  private var openPeak: Float = 0
  private var openLength = 0
  /// A chunk peak this close to the reading (0.05 dB) renews the hold.
  private static let renewal: Float = 0.9943

  public init(ballistics: MeterBallistics, sampleRate: Double) {
    precondition(sampleRate > 0)
    self.ballistics = ballistics
    let attack = ballistics.attackTime
    charge = attack > 0 ? Float(1 - exp(-1 / (attack * sampleRate))) : 1
    fall = Float(pow(10, -ballistics.fallRate / 20 / sampleRate))
    holdSamples = Int((ballistics.holdTime * sampleRate).rounded())
    // Two critically damped stages reach 99 % of a step at 6.64 time constants.
    let tau = MeterBallistics.vuRiseTime / 6.638
    vuCoefficient = Float(1 - exp(-1 / (tau * sampleRate)))
  }

  /// The reading in dBFS: the peak for peak meters, the RMS of a sine that
  /// reads the same for the VU meter (sox's convention); `nil` for silence
  /// and for `.lufs`.
  public var decibels: Double? {
    switch ballistics {
    case .lufs: return nil
    case .vu: return Decibels.fromAmplitude(Double(value) * Double.pi / 2 / 2.0.squareRoot())
    default:
      guard openLength > 0 else { return Decibels.fromAmplitude(Double(value)) }
      var ended = self
      ended.endOpenChunk()
      return Decibels.fromAmplitude(Double(ended.value))
    }
  }

  /// Feeds `count` samples, `stride` apart.
  public mutating func process(_ samples: UnsafePointer<Float>, count: Int, stride: Int = 1) {
    switch ballistics {
    case .lufs: return
    case .vu: processVU(samples, count: count, stride: stride)
    case .digital: processInstant(samples, count: count, stride: stride)
    default: processQuasiPeak(samples, count: count, stride: stride)
    }
  }

  /// `first.process` on `firstSamples` and `second.process` on
  /// `secondSamples` (both `count` samples `stride` apart). Two VU meters
  /// take their samples in turn: each waits on its own last reading, so two
  /// channels cost about what one does, with the same readings bit for bit.
  public static func process(
    _ first: inout BallisticMeter, _ firstSamples: UnsafePointer<Float>,
    _ second: inout BallisticMeter, _ secondSamples: UnsafePointer<Float>,
    count: Int, stride: Int
  ) {
    switch (first.ballistics, second.ballistics) {
    case (.vu, .vu):
      var (firstStage, secondStage) = (first.vuStage, second.vuStage)
      var (firstValue, secondValue) = (first.value, second.value)
      let (c, d) = (first.vuCoefficient, second.vuCoefficient)
      for index in 0..<count {
        firstStage += (abs(firstSamples[index * stride]) - firstStage) * c
        secondStage += (abs(secondSamples[index * stride]) - secondStage) * d
        firstValue += (firstStage - firstValue) * c
        secondValue += (secondStage - secondValue) * d
      }
      (first.vuStage, second.vuStage) = (firstStage, secondStage)
      (first.value, second.value) = (firstValue, secondValue)
    default:
      first.process(firstSamples, count: count, stride: stride)
      second.process(secondSamples, count: count, stride: stride)
    }
  }

  /// Whether the meter reads chunk peaks (`processPeak`) rather than samples.
  public var readsChunkPeaks: Bool { ballistics == .digital }

  /// Instant attack, hold, fall, fed the peak of the next `length` samples,
  /// as `LevelAccumulator` gives them for its chunks: the reading is exact
  /// to the fall over one chunk (0.06 dB for 256 samples at 48 kHz).
  public mutating func processPeak(_ peak: Float, length: Int) {
    advance(by: length)
    if peak >= value {
      value = peak
      sinceRise = 0
    } else if peak >= value * Self.renewal {
      sinceRise = 0  // a signal that stays at its peak keeps it held
    }
  }

  /// `processPeak` for `count` chunks of `chunkLength` samples each.
  public mutating func processPeaks(_ peaks: UnsafePointer<Float>, count: Int, chunkLength: Int) {
    for index in 0..<count { processPeak(peaks[index], length: chunkLength) }
  }

  /// Instant attack on samples: the peaks of chunks of
  /// `LevelAccumulator.peakChunk` samples counted from the first, a chunk
  /// left open by one call finished by the next (the reading counts it as
  /// if it ended there), so any cut into calls reads the same.
  private mutating func processInstant(_ samples: UnsafePointer<Float>, count: Int, stride: Int) {
    var start = 0
    while start < count {
      let end = min(count, start + LevelAccumulator.peakChunk - openLength)
      var peak = openPeak
      for index in start..<end { peak = max(peak, abs(samples[index * stride])) }
      openPeak = peak
      openLength += end - start
      if openLength == LevelAccumulator.peakChunk { endOpenChunk() }
      start = end
    }
  }

  /// Feeds the chunk `processInstant` has open to the ballistics.
  private mutating func endOpenChunk() {
    processPeak(openPeak, length: openLength)
    openPeak = 0
    openLength = 0
  }

  /// The reading after `samples` more samples without a rise: held, then falling.
  private mutating func advance(by samples: Int) {
    let falling = max(0, sinceRise + samples - max(holdSamples, sinceRise))
    sinceRise += samples
    if falling > 0 { value *= Self.power(fall, falling) }
  }

  /// `base` to a whole power, by squaring.
  private static func power(_ base: Float, _ exponent: Int) -> Float {
    var result: Float = 1
    var factor = base
    var remaining = exponent
    while remaining > 0 {
      if remaining & 1 == 1 { result *= factor }
      factor *= factor
      remaining >>= 1
    }
    return result
  }

  /// A quasi-peak meter: the rectified signal charges the reading with the
  /// attack time constant while above it; otherwise the reading falls.
  private mutating func processQuasiPeak(
    _ samples: UnsafePointer<Float>, count: Int, stride: Int
  ) {
    var reading = value
    for index in 0..<count {
      let rectified = abs(samples[index * stride])
      if rectified > reading {
        reading += (rectified - reading) * charge
      } else {
        reading *= fall
      }
    }
    value = reading
  }

  /// Two one-pole low-passes in a row on the rectified signal.
  private mutating func processVU(_ samples: UnsafePointer<Float>, count: Int, stride: Int) {
    var first = vuStage
    var second = value
    let c = vuCoefficient
    for index in 0..<count {
      first += (abs(samples[index * stride]) - first) * c
      second += (first - second) * c
    }
    vuStage = first
    value = second
  }
}
