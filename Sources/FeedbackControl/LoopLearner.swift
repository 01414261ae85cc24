import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Learns a feedback loop's open-loop impulse response from what the loop
/// plays and what it hears while it runs, with no test signal: the
/// least-squares filter from the played signal to the heard one over the
/// `length` lags from `delay` on. What a period plays is what it heard,
/// amplified, so lags shorter than the time a played frame takes to reach
/// the speaker (at least a period) only hold that: they are left out.
///
/// In a closed loop the played signal is the heard one amplified, so a
/// talker that predicts itself (a voice's formants, a held note) looks like
/// loop. Both signals are first whitened by the same short-term predictor,
/// fitted to the heard signal every `lpcFrame` seconds (a talker's
/// spectrum, not the loop's, is what such a short predictor can follow);
/// what the talker keeps predictable after that (a note held for seconds)
/// still biases the estimate, towards a loop that looks stronger than it
/// is — which is why a learned plan is only trusted where it is plausible
/// (`LearnedLoop`).
///
/// Only the band a plan can act in is learned: both signals are first
/// lowered to the smallest whole fraction of the stream's rate that keeps
/// `band` (24 kHz for 48 kHz streams, through one `FIRDecimator` each),
/// so the response has a fraction of the lags to solve for (the solve's
/// work goes with their square).
///
/// The correlations are summed over blocks with FFTs and fade with a memory
/// of `memory` seconds, so a moved microphone is learned again; the normal
/// equations are solved by Levinson's recursion a budgeted number of
/// orders at a time (`solve(orders:)`), so no call takes long.
///
/// Control thread (or any one thread at a time); never the audio thread.
public final class LoopLearner: @unchecked Sendable {
  /// Lags of the learned response, from `delay` on, at `responseRate`.
  public let length: Int
  /// The first lag learned, at `responseRate`.
  public let delay: Int
  /// The rate of the streams appended.
  public let sampleRate: Double
  /// Stream frames per lag of the response.
  public let decimation: Int
  /// The response's sample rate: `sampleRate / decimation`.
  public let responseRate: Double
  /// Seconds of played signal (above `floor`) the sums hold, faded like them.
  public private(set) var heardSeconds = 0.0

  /// Played samples under this level (−80 dBFS) count no seconds.
  public static let floor: Float = 1e-4
  /// Diagonal loading of the autocorrelation: keeps the solution finite
  /// where the played signal has no energy.
  public static let regularization = 1e-3
  /// Order of the whitening predictor, at `responseRate` (16 resonances
  /// in the 12 kHz a 48 kHz stream keeps: 12 left a held note's partials
  /// predictable enough to be taken for a loop).
  public static let predictorOrder = 32
  /// Seconds of each whitening predictor's frame (fitted on twice that).
  public static let predictorFrame = 0.02
  /// Frames summed per transform.
  public static let blockSize = 4096
  /// The lowest response rate, as a multiple of the band learned: a
  /// decimator's transition from the band to where aliases would fold
  /// into it is then a quarter of the band or wider.
  public static let leastRateOverBand = 2.5

  private let blockSize: Int
  private let frameLength: Int
  private let transform: RealFourierTransform
  private let decay: Double
  /// Raw samples not yet whitened, after `history` already whitened ones.
  private var rawPlayed: [Float] = []
  private var rawHeard: [Float] = []
  private var rawDone = 0
  /// Whitened samples: the last `length − 1` played before the pending block, then the block's.
  private var played: [Float]
  private var heard: [Float] = []
  private var autocorrelation: [Double]
  private var crossCorrelation: [Double]
  private var segmentSpectrum: [Float]
  private var predictor: [Double]
  /// The predictor of the order below, while one is being fitted.
  private var lowerPredictor: [Double]
  private var window: [Double]
  /// The heard signal through `window` over the frame being whitened and the one before.
  private var windowed: [Double]
  /// That windowed signal's autocorrelation, lags 0 to `predictorOrder`.
  private var frameCorrelation: [Double]
  private var solver: ToeplitzSolver?
  /// Each stream's decimator to `responseRate` (none when `decimation` is 1).
  private var decimators: (played: FIRDecimator, heard: FIRDecimator)?

  /// - Parameters:
  ///   - length: stream frames of lags to learn (the loop's delay plus the
  ///     room's response).
  ///   - delay: the first lag, stream frames (a period or more).
  ///   - band: the highest frequency learned, Hz (a plan's highest).
  ///   - memory: seconds after which old sums have faded to 1/e.
  public init(length: Int, delay: Int, sampleRate: Double, band: Double, memory: Double = 30) {
    let decimation = max(1, Int(sampleRate / (Self.leastRateOverBand * max(1, band))))
    self.decimation = decimation
    responseRate = sampleRate / Double(decimation)
    self.length = max(2, (length + decimation - 1) / decimation)
    self.delay = max(0, delay / decimation)
    self.sampleRate = sampleRate
    if decimation > 1 {
      let decimator = FIRDecimator(factor: decimation, sampleRate: sampleRate, passBand: band)
      decimators = (decimator, decimator)
    }
    let sampleRate = responseRate
    blockSize = Self.blockSize
    let frameLength = max(Self.predictorOrder + 1, Int(Self.predictorFrame * sampleRate))
    self.frameLength = frameLength
    var size = 2
    while size < blockSize + self.length - 1 { size <<= 1 }
    transform = RealFourierTransform(size: size)
    decay = exp(-Double(blockSize) / (max(1e-3, memory) * sampleRate))
    // The whitened played signal runs `delay` frames late: lag 0 of the sums is lag `delay`.
    played = [Float](repeating: 0, count: self.length - 1 + self.delay)
    autocorrelation = [Double](repeating: 0, count: self.length)
    crossCorrelation = [Double](repeating: 0, count: self.length)
    segmentSpectrum = [Float](repeating: 0, count: 2 * transform.binCount)
    predictor = [Double](repeating: 0, count: Self.predictorOrder + 1)
    lowerPredictor = predictor
    windowed = [Double](repeating: 0, count: 2 * frameLength)
    frameCorrelation = [Double](repeating: 0, count: Self.predictorOrder + 1)
    window = (0..<(2 * frameLength)).map {
      0.5 - 0.5 * cos(2 * Double.pi * (Double($0) + 0.5) / Double(2 * frameLength))
    }
  }

  /// Adds `count` frames: what the loop played (the signal sent to the
  /// speaker) and heard (the microphone) at the same stream frames.
  public func append(
    played newPlayed: UnsafePointer<Float>, heard newHeard: UnsafePointer<Float>, count: Int
  ) {
    if decimators != nil {
      Self.append(newPlayed, count: count, through: &decimators!.played, to: &rawPlayed)
      Self.append(newHeard, count: count, through: &decimators!.heard, to: &rawHeard)
    } else {
      rawPlayed.append(contentsOf: UnsafeBufferPointer(start: newPlayed, count: count))
      rawHeard.append(contentsOf: UnsafeBufferPointer(start: newHeard, count: count))
    }
    while rawHeard.count - rawDone >= frameLength { whitenFrame() }
    // Keep one frame of history for the next analysis window and predictor.
    let spare = rawDone - frameLength
    if spare > 4 * frameLength {
      rawPlayed.removeFirst(spare)
      rawHeard.removeFirst(spare)
      rawDone -= spare
    }
    while heard.count >= blockSize { sumBlock() }
  }

  /// Appends `count` samples at `input` lowered by `decimator` to `samples`,
  /// written straight into its end.
  private static func append(
    _ input: UnsafePointer<Float>, count: Int, through decimator: inout FIRDecimator,
    to samples: inout [Float]
  ) {
    let start = samples.count
    let most = decimator.maximumOutputCount(forInput: count)
    samples.append(contentsOf: repeatElement(0, count: most))
    let produced = samples.withUnsafeMutableBufferPointer {
      decimator.process(
        UnsafeBufferPointer(start: input, count: count), into: $0.baseAddress! + start)
    }
    samples.removeLast(most - produced)
  }

  /// Whitens the next frame of both signals by a predictor fitted to the
  /// heard signal over that frame and the one before.
  private func whitenFrame() {
    let start = rawDone
    let end = start + frameLength
    let first = max(0, start - frameLength)
    let span = end - first
    let offset = 2 * frameLength - span
    let order = Self.predictorOrder
    rawHeard.withUnsafeBufferPointer { raw in
      windowed.withUnsafeMutableBufferPointer { windowed in
        for index in 0..<span {
          windowed[index] = Double(raw[first + index]) * window[offset + index]
        }
      }
    }
    windowed.withUnsafeBufferPointer { windowed in
      frameCorrelation.withUnsafeMutableBufferPointer { correlation in
        Self.autocorrelate(
          windowed.baseAddress!, count: span, lags: order + 1, into: correlation.baseAddress!)
      }
    }
    fitPredictor(frameCorrelation)
    // Where this frame's whitened samples go in each (the played signal runs late).
    let (playedAt, heardAt) = (played.count, heard.count)
    played.append(contentsOf: repeatElement(0, count: frameLength))
    heard.append(contentsOf: repeatElement(0, count: frameLength))
    predictor.withUnsafeBufferPointer { predictor in
      rawPlayed.withUnsafeBufferPointer { raw in
        played.withUnsafeMutableBufferPointer { out in
          Self.whiten(
            raw.baseAddress!, from: start, to: end, by: predictor.baseAddress!,
            into: out.baseAddress! + playedAt)
        }
      }
      rawHeard.withUnsafeBufferPointer { raw in
        heard.withUnsafeMutableBufferPointer { out in
          Self.whiten(
            raw.baseAddress!, from: start, to: end, by: predictor.baseAddress!,
            into: out.baseAddress! + heardAt)
        }
      }
    }
    rawDone += frameLength
  }

  /// `correlation[lag] = Σ samples[index] · samples[index − lag]` over
  /// `index` from `lag` to `count − 1`, for each of `lags` lags: four lags
  /// at a time, each lane summing in the order a single sum would.
  private static func autocorrelate(
    _ samples: UnsafePointer<Double>, count: Int, lags: Int,
    into correlation: UnsafeMutablePointer<Double>
  ) {
    var lag = 0
    while lag + 4 <= lags {
      // Lane k is lag `lag + k`; its first `k` terms come one at a time.
      var sums = SIMD4<Double>()
      for index in lag..<min(lag + 3, count) {
        for k in 0...(index - lag) { sums[k] += samples[index] * samples[index - lag - k] }
      }
      var index = lag + 3
      while index < count {
        let here = SIMD4<Double>(repeating: samples[index])
        sums += here * ToeplitzSolver.reversedLanes(samples + (index - lag - 3))
        index += 1
      }
      ToeplitzSolver.store(sums, at: correlation + lag)
      lag += 4
    }
    while lag < lags {
      var sum = 0.0
      for index in lag..<max(lag, count) { sum += samples[index] * samples[index - lag] }
      correlation[lag] = sum
      lag += 1
    }
  }

  /// The prediction error of `raw[start..<end]` by `predictor` (taps 1 to
  /// `predictorOrder`; fewer before the stream's start) into `output`:
  /// four samples at a time, each lane taking the taps in the order a
  /// single sample would.
  private static func whiten(
    _ raw: UnsafePointer<Float>, from start: Int, to end: Int,
    by predictor: UnsafePointer<Double>, into output: UnsafeMutablePointer<Float>
  ) {
    let order = predictorOrder
    var index = start
    // Samples near the stream's start have fewer taps: one at a time.
    while index < end && index < order {
      var value = Double(raw[index])
      if index > 0 {
        for tap in 1...index { value -= predictor[tap] * Double(raw[index - tap]) }
      }
      output[index - start] = Float(value)
      index += 1
    }
    while index + 4 <= end {
      var values = SIMD4<Double>(lanes(of: raw + index))
      for tap in 1...order {
        values -= predictor[tap] * SIMD4<Double>(lanes(of: raw + (index - tap)))
      }
      let narrowed = SIMD4<Float>(values)
      UnsafeMutableRawPointer(output + (index - start)).storeBytes(
        of: narrowed, as: SIMD4<Float>.self)
      index += 4
    }
    while index < end {
      var value = Double(raw[index])
      for tap in 1...order { value -= predictor[tap] * Double(raw[index - tap]) }
      output[index - start] = Float(value)
      index += 1
    }
  }

  @inline(__always) private static func lanes(of pointer: UnsafePointer<Float>) -> SIMD4<Float> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Float>.self)
  }

  /// Levinson–Durbin on the autocorrelation `r` (with a little white
  /// noise added); a silent frame gets no predictor. Allocates nothing:
  /// each order's predictor is copied into `lowerPredictor` in place.
  private func fitPredictor(_ r: [Double]) {
    let order = Self.predictorOrder
    for index in predictor.indices {
      predictor[index] = 0
      lowerPredictor[index] = 0
    }
    guard r[0] > 1e-20 else { return }
    var error = r[0] * (1 + Self.regularization)
    for i in 1...order {
      var acc = r[i]
      for j in 1..<i { acc -= lowerPredictor[j] * r[i - j] }
      let k = acc / error
      predictor[i] = k
      for j in 1..<i { predictor[j] = lowerPredictor[j] - k * lowerPredictor[i - j] }
      error *= 1 - k * k
      guard error > 0 else { return }
      for j in 1...i { lowerPredictor[j] = predictor[j] }
    }
  }

  private func sumBlock() {
    let size = transform.size
    let history = length - 1
    transform.real.update(repeating: 0, count: size)
    for index in 0..<(history + blockSize) { transform.real[index] = played[index] }
    transform.forward()
    segmentSpectrum.withUnsafeMutableBufferPointer {
      $0.baseAddress!.update(from: transform.complex, count: 2 * transform.binCount)
    }
    correlate(heard, from: 0, into: &crossCorrelation)
    correlate(played, from: history, into: &autocorrelation)
    var active = 0
    for index in history..<(history + blockSize) where abs(played[index]) > Self.floor {
      active += 1
    }
    heardSeconds = heardSeconds * decay + Double(active) / responseRate
    played.removeFirst(blockSize)
    heard.removeFirst(blockSize)
  }

  /// Fades `sums` and adds Σ block[j] · played[n0 + j − k] for every lag k,
  /// the block being `blockSize` samples of `signal` from `start`.
  private func correlate(_ signal: [Float], from start: Int, into sums: inout [Double]) {
    let size = transform.size
    let history = length - 1
    transform.real.update(repeating: 0, count: size)
    for index in 0..<blockSize { transform.real[history + index] = signal[start + index] }
    transform.forward()
    let spectrum = transform.complex
    for bin in 0..<transform.binCount {
      let re = spectrum[2 * bin]
      let im = spectrum[2 * bin + 1]
      let sre = segmentSpectrum[2 * bin]
      let sim = segmentSpectrum[2 * bin + 1]
      spectrum[2 * bin] = re * sre + im * sim
      spectrum[2 * bin + 1] = im * sre - re * sim
    }
    transform.inverse()
    let scale = 1 / Double(size)
    for lag in 0..<length { sums[lag] = sums[lag] * decay + Double(transform.real[lag]) * scale }
  }

  /// Whether a solution is under way (`solve(orders:)` goes on with it).
  public var isSolving: Bool { solver != nil }

  /// Works on the response for up to `orders` orders of the recursion,
  /// starting from the sums as they are now if no solution is under way;
  /// returns the response (`length` samples from lag `delay`) when it is done, `nil`
  /// while it is not (or when nothing was played yet).
  public func solve(orders: Int) -> [Float]? {
    if solver == nil {
      guard autocorrelation[0] > 0 else { return nil }
      var column = autocorrelation
      column[0] *= 1 + Self.regularization
      solver = ToeplitzSolver(column: column, rightSide: crossCorrelation)
    }
    guard let done = solver?.advance(orders: orders) else { return nil }
    solver = nil
    return done?.map { Float($0) }
  }
}
