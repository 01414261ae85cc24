import DuplexIO
import FeedbackControl
import SignalDSP
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Measures the round-trip latency of a playback→capture loop, as
/// `jack_iodelay` or `alsabat --roundtriplatency` do: it plays a short
/// chirp a few times, records the capture, and finds each chirp in the
/// recording by cross-correlation. Then it plays an exponential sweep and
/// deconvolves what came back into the loop's impulse response, from which
/// it reads the loop's maximum stable gain (how much gain a loopback over
/// it takes before it howls) and the frequency that howls first. The
/// callbacks run on the audio thread and only copy into buffers made in
/// `init` and `prepare`; `result` runs on the control thread after the
/// unit has stopped.
public final class LatencyProbe: DuplexClient, @unchecked Sendable {
  /// What was found.
  public struct Measurement: Sendable {
    /// Frames from a sample leaving the render callback to it arriving in the input callback.
    public var roundTripFrames: Int
    public var sampleRate: Int
    /// How well the chirp came back (normalised correlation, 0–1).
    public var confidence: Double
    /// Each burst's own measurement, in frames.
    public var burstFrames: [Int]
    /// The loop's impulse response from lag 0 (a sample leaving the render
    /// callback) on: the round trip is in it.
    public var impulseResponse: [Float]
    /// The gain a loopback over this loop takes before it howls, and where;
    /// `nil` when the sweep did not come back.
    public var stability: LoopStability?

    public var roundTripSeconds: Double { Double(roundTripFrames) / Double(sampleRate) }
  }

  public let sampleRate: Int
  /// Frames the probe runs for.
  public let totalFrames: Int
  /// Whether the capture buffer is full (the probe is done).
  public let isDone = Atomic<Bool>(false)
  private let chirp: [Float]
  private let burstStarts: [Int]
  private let sweep: ExponentialSweep
  /// Where the sweep starts, and how many frames of response follow it.
  private let sweepStart: Int
  private let responseFrames: Int
  private let captured: UnsafeMutableBufferPointer<Float>
  private var inputBuffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 0)

  /// - Parameters:
  ///   - bursts: how many chirps to play, one a second.
  ///   - level: chirp and sweep level in dBFS.
  ///   - sweepDuration: seconds of the sweep (50 Hz to 20 kHz or 0.45 of the rate).
  ///   - responseDuration: seconds of impulse response kept after it (the
  ///     round trip plus the room's reverberation must fit).
  public init(
    sampleRate: Int, bursts: Int = 3, level: Double = -12, sweepDuration: Double = 1.5,
    responseDuration: Double = 1.5
  ) {
    self.sampleRate = sampleRate
    // 50 ms linear chirp from 300 Hz to 3 kHz with raised-cosine edges.
    let length = sampleRate / 20
    let amplitude = Decibels.amplitude(level)
    chirp = (0..<length).map { n in
      let t = Double(n) / Double(sampleRate)
      let duration = Double(length) / Double(sampleRate)
      let phase = 2 * Double.pi * (300 * t + (3000 - 300) * t * t / (2 * duration))
      let edge = min(1, Double(min(n, length - 1 - n)) / Double(length / 10))
      let window = 0.5 - 0.5 * cos(Double.pi * edge)
      return Float(amplitude * window * sin(phase))
    }
    burstStarts = (0..<bursts).map { sampleRate / 2 + $0 * sampleRate }
    sweep = ExponentialSweep(
      sampleRate: Double(sampleRate), duration: sweepDuration, level: level)
    sweepStart = sampleRate / 2 + bursts * sampleRate
    responseFrames = Int((responseDuration * Double(sampleRate)).rounded())
    totalFrames = sweepStart + sweep.samples.count + responseFrames
    captured = .allocate(capacity: totalFrames)
    captured.initialize(repeating: 0)
  }

  public func prepare(for format: IOFormat) {
    let channels = format.input?.channelCount ?? 1
    inputBuffer.deallocate()
    inputBuffer = .allocate(capacity: format.maximumFrameCount * channels)
    inputBuffer.initialize(repeating: 0)
  }

  deinit {
    captured.deallocate()
    inputBuffer.deallocate()
  }

  public func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    input.render(into: inputBuffer)
    let start = Int(timeStamp.sampleTime)
    let channels = input.channelCount
    for frame in 0..<input.frameCount where start + frame < totalFrames {
      captured[start + frame] = inputBuffer[frame * channels]
    }
    if start + input.frameCount >= totalFrames { isDone.store(true, ordering: .releasing) }
  }

  public func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    let start = Int(timeStamp.sampleTime)
    let frameCount = output.frameCount
    let channels = output.channelCount
    let output = output.samples
    for burst in burstStarts where burst < start + frameCount && burst + chirp.count > start {
      for frame in 0..<frameCount {
        let index = start + frame - burst
        guard index >= 0 && index < chirp.count else { continue }
        for channel in 0..<channels { output[frame * channels + channel] = chirp[index] }
        isSilence = false
      }
    }
    let samples = sweep.samples
    if sweepStart < start + frameCount && sweepStart + samples.count > start {
      for frame in 0..<frameCount {
        let index = start + frame - sweepStart
        guard index >= 0 && index < samples.count else { continue }
        for channel in 0..<channels { output[frame * channels + channel] = samples[index] }
        isSilence = false
      }
    }
  }

  /// The band the sweep measures well: an octave in from its low end (its
  /// fade) and a tenth in from its top.
  public var measuredBand: ClosedRange<Double> {
    (2 * sweep.lowFrequency)...(0.9 * sweep.highFrequency)
  }

  /// The band a probe at `sampleRate` measures well (that of its sweep);
  /// `nil` at a rate too low to sweep anything.
  public static func measuredBand(sampleRate: Int) -> ClosedRange<Double>? {
    let sweep = ExponentialSweep.band(sampleRate: Double(sampleRate))
    guard 2 * sweep.low < 0.9 * sweep.high else { return nil }
    return (2 * sweep.low)...(0.9 * sweep.high)
  }

  /// Finds every burst in the capture; `nil` when nothing came back.
  public func result() -> Measurement? {
    let maximumLag = sampleRate * 3 / 4
    var found = [(lag: Int, score: Double)]()
    let chirpEnergy = chirp.reduce(0) { $0 + Double($1 * $1) }
    for burst in burstStarts {
      var best = (lag: 0, score: 0.0)
      chirp.withUnsafeBufferPointer { reference in
        for lag in 0..<maximumLag where burst + lag + reference.count <= totalFrames {
          var dot: Float = 0
          var energy: Float = 0
          let base = captured.baseAddress! + burst + lag
          for i in 0..<reference.count {
            dot += reference[i] * base[i]
            energy += base[i] * base[i]
          }
          guard energy > 0 else { continue }
          let score = Double(dot) / (chirpEnergy * Double(energy)).squareRoot()
          if score > best.score { best = (lag, score) }
        }
      }
      found.append(best)
    }
    let good = found.filter { $0.score > 0.5 }
    guard !good.isEmpty else { return nil }
    let lags = good.map(\.lag).sorted()
    let recording = Array(
      UnsafeBufferPointer(
        start: captured.baseAddress! + sweepStart, count: totalFrames - sweepStart))
    let response = sweep.impulseResponse(from: recording, length: responseFrames)
    return Measurement(
      roundTripFrames: lags[lags.count / 2], sampleRate: sampleRate,
      confidence: good.map(\.score).reduce(0, +) / Double(good.count),
      burstFrames: found.map(\.lag),
      impulseResponse: response,
      stability: LoopStability.analyze(
        impulseResponse: response, sampleRate: Double(sampleRate), lowest: measuredBand.lowerBound,
        highest: measuredBand.upperBound))
  }
}
