#if canImport(Glibc)
  import Glibc
#endif

/// A sum of up to `maximumTones` phase-continuous sines with a raised-cosine
/// gate, like a bench tone generator: `start` fades in from exactly zero,
/// `stop` fades out to exactly zero, and frequency or level changes while
/// running never click (phase is kept; level moves along a short ramp).
///
/// Each tone's phase is a Double in cycles, wrapped to [0, 1) every sample,
/// so a tone keeps its frequency to far better than 0.01 Hz over hours.
/// Real-time safe: fixed storage, no allocation after `init`. Use from one
/// thread at a time (the audio thread once rendering).
public struct ToneGenerator: Sendable {
  /// How many tones may sound at once (DTMF needs two).
  public static let maximumTones = 4

  /// Whether the gate is open, opening or closing (false once fully closed).
  public var isSounding: Bool { gateState != .closed }

  public let sampleRate: Double
  /// Samples a fade in or out takes.
  public let fadeSamples: Int

  private enum GateState { case closed, opening, open, closing }

  private var phases: (Double, Double, Double, Double) = (0, 0, 0, 0)
  private var increments: (Double, Double, Double, Double) = (0, 0, 0, 0)
  private var amplitudes: (Float, Float, Float, Float) = (0, 0, 0, 0)
  private var targetAmplitudes: (Float, Float, Float, Float) = (0, 0, 0, 0)
  private var toneCount = 0
  private var levelRamp = 0
  private let levelRampSamples: Int
  private var gateState = GateState.closed
  private var gatePosition = 0

  /// - Parameters:
  ///   - fadeTime: seconds of each raised-cosine fade (5 ms by default).
  ///   - levelRampTime: seconds a level change takes.
  public init(sampleRate: Double, fadeTime: Double = 0.005, levelRampTime: Double = 0.005) {
    self.sampleRate = sampleRate
    fadeSamples = max(1, Int((fadeTime * sampleRate).rounded()))
    levelRampSamples = max(1, Int((levelRampTime * sampleRate).rounded()))
  }

  /// Sets the tones: frequencies in Hz and one amplitude (linear, peak) each.
  /// Tones beyond `maximumTones` are ignored. Changing frequency keeps phase.
  public mutating func setTones(
    frequencies: UnsafeBufferPointer<Double>, amplitudes: UnsafeBufferPointer<Float>
  ) {
    let count = min(frequencies.count, amplitudes.count, Self.maximumTones)
    for index in 0..<Self.maximumTones {
      let frequency = index < count ? frequencies[index] : 0
      let amplitude: Float = index < count ? amplitudes[index] : 0
      Self.set(&increments, index, frequency / sampleRate)
      Self.set(&targetAmplitudes, index, amplitude)
      if index >= toneCount && index < count && Self.get(self.amplitudes, index) == 0 {
        Self.set(&phases, index, 0)
      }
    }
    toneCount = count
    levelRamp = gateState == .closed ? 0 : levelRampSamples
    if gateState == .closed { self.amplitudes = targetAmplitudes }
  }

  /// Convenience for callers off the audio thread.
  public mutating func setTones(_ tones: [(frequency: Double, amplitude: Float)]) {
    let frequencies = tones.map(\.frequency)
    let amplitudes = tones.map(\.amplitude)
    frequencies.withUnsafeBufferPointer { f in
      amplitudes.withUnsafeBufferPointer { a in setTones(frequencies: f, amplitudes: a) }
    }
  }

  /// Opens the gate: the next samples fade in from exactly zero.
  public mutating func start() {
    switch gateState {
    case .closed:
      gateState = .opening
      gatePosition = 0
    case .closing:
      // Reverse from where the fade-out is, without a jump.
      gateState = .opening
      gatePosition = fadeSamples - gatePosition
    case .opening, .open: break
    }
  }

  /// Closes the gate: the output fades to exactly zero and stays there.
  public mutating func stop() {
    switch gateState {
    case .open:
      gateState = .closing
      gatePosition = 0
    case .opening:
      gateState = .closing
      gatePosition = fadeSamples - gatePosition
    case .closing, .closed: break
    }
  }

  /// Writes `count` samples (replacing what is in `output`).
  public mutating func render(into output: UnsafeMutablePointer<Float>, count: Int) {
    for n in 0..<count {
      output[n] = nextSample()
    }
  }

  /// The gate's gain for the current sample: 0 … 1 along a raised cosine.
  private mutating func nextGate() -> Float {
    switch gateState {
    case .closed: return 0
    case .open: return 1
    case .opening:
      let gain = Self.raisedCosine(gatePosition, fadeSamples)
      gatePosition += 1
      if gatePosition > fadeSamples { gateState = .open }
      return gain
    case .closing:
      let gain = 1 - Self.raisedCosine(gatePosition, fadeSamples)
      gatePosition += 1
      if gatePosition > fadeSamples { gateState = .closed }
      return gain
    }
  }

  private mutating func nextSample() -> Float {
    let gate = nextGate()
    if levelRamp > 0 {
      let fraction = Float(1) / Float(levelRamp)
      amplitudes.0 += (targetAmplitudes.0 - amplitudes.0) * fraction
      amplitudes.1 += (targetAmplitudes.1 - amplitudes.1) * fraction
      amplitudes.2 += (targetAmplitudes.2 - amplitudes.2) * fraction
      amplitudes.3 += (targetAmplitudes.3 - amplitudes.3) * fraction
      levelRamp -= 1
      if levelRamp == 0 { amplitudes = targetAmplitudes }
    }
    // Every slot sounds: a removed tone ramps to zero instead of vanishing.
    var sum = Double(amplitudes.0) * Self.sine(phases.0)
    if amplitudes.1 != 0 { sum += Double(amplitudes.1) * Self.sine(phases.1) }
    if amplitudes.2 != 0 { sum += Double(amplitudes.2) * Self.sine(phases.2) }
    if amplitudes.3 != 0 { sum += Double(amplitudes.3) * Self.sine(phases.3) }
    phases.0 = Self.wrap(phases.0 + increments.0)
    phases.1 = Self.wrap(phases.1 + increments.1)
    phases.2 = Self.wrap(phases.2 + increments.2)
    phases.3 = Self.wrap(phases.3 + increments.3)
    return Float(sum) * gate
  }

  /// 0 at position 0, 1 at position `length`, raised-cosine in between.
  @inline(__always) private static func raisedCosine(_ position: Int, _ length: Int) -> Float {
    if position >= length { return 1 }
    return Float(0.5 - 0.5 * cos(Double.pi * Double(position) / Double(length)))
  }

  @inline(__always) private static func sine(_ cycles: Double) -> Double {
    sin(2 * Double.pi * cycles)
  }

  @inline(__always) private static func wrap(_ cycles: Double) -> Double {
    cycles >= 1 ? cycles - cycles.rounded(.down) : cycles
  }

  private static func set(
    _ tuple: inout (Double, Double, Double, Double), _ index: Int, _ value: Double
  ) {
    switch index {
    case 0: tuple.0 = value
    case 1: tuple.1 = value
    case 2: tuple.2 = value
    default: tuple.3 = value
    }
  }

  private static func get(_ tuple: (Float, Float, Float, Float), _ index: Int) -> Float {
    switch index {
    case 0: return tuple.0
    case 1: return tuple.1
    case 2: return tuple.2
    default: return tuple.3
    }
  }

  private static func set(_ tuple: inout (Float, Float, Float, Float), _ index: Int, _ value: Float)
  {
    switch index {
    case 0: tuple.0 = value
    case 1: tuple.1 = value
    case 2: tuple.2 = value
    default: tuple.3 = value
    }
  }
}
