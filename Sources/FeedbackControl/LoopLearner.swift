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
/// The correlations are summed over blocks with FFTs and fade with a memory
/// of `memory` seconds, so a moved microphone is learned again; the normal
/// equations are solved by Levinson's recursion a budgeted number of
/// orders at a time (`solve(orders:)`), so no call takes long.
///
/// Control thread (or any one thread at a time); never the audio thread.
public final class LoopLearner: @unchecked Sendable {
  /// Lags of the learned response, from `delay` on.
  public let length: Int
  /// The first lag learned, frames.
  public let delay: Int
  public let sampleRate: Double
  /// Seconds of played signal (above `floor`) the sums hold, faded like them.
  public private(set) var heardSeconds = 0.0

  /// Played samples under this level (−80 dBFS) count no seconds.
  public static let floor: Float = 1e-4
  /// Diagonal loading of the autocorrelation: keeps the solution finite
  /// where the played signal has no energy.
  public static let regularization = 1e-3
  /// Order of the whitening predictor.
  public static let predictorOrder = 24
  /// Seconds of each whitening predictor's frame (fitted on twice that).
  public static let predictorFrame = 0.02
  /// Frames summed per transform.
  public static let blockSize = 4096

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

  /// - Parameters:
  ///   - length: lags to learn (the loop's delay plus the room's response).
  ///   - delay: the first lag, frames (a period or more).
  ///   - memory: seconds after which old sums have faded to 1/e.
  public init(length: Int, delay: Int, sampleRate: Double, memory: Double = 30) {
    self.length = max(2, length)
    self.delay = max(0, delay)
    self.sampleRate = sampleRate
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
    rawPlayed.append(contentsOf: UnsafeBufferPointer(start: newPlayed, count: count))
    rawHeard.append(contentsOf: UnsafeBufferPointer(start: newHeard, count: count))
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
      for lag in 0...order {
        var sum = 0.0
        for index in lag..<max(lag, span) { sum += windowed[index] * windowed[index - lag] }
        frameCorrelation[lag] = sum
      }
    }
    fitPredictor(frameCorrelation)
    rawPlayed.withUnsafeBufferPointer { rawPlayed in
      rawHeard.withUnsafeBufferPointer { rawHeard in
        predictor.withUnsafeBufferPointer { predictor in
          for index in start..<end {
            var p = Double(rawPlayed[index])
            var h = Double(rawHeard[index])
            let taps = min(order, index)
            if taps > 0 {
              for tap in 1...taps {
                p -= predictor[tap] * Double(rawPlayed[index - tap])
                h -= predictor[tap] * Double(rawHeard[index - tap])
              }
            }
            played.append(Float(p))
            heard.append(Float(h))
          }
        }
      }
    }
    rawDone += frameLength
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
    heardSeconds = heardSeconds * decay + Double(active) / sampleRate
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

/// Levinson's recursion for T x = b, T symmetric Toeplitz with first
/// column `column`, a budgeted number of orders at a time. Each order is
/// two sums and two updates over the vectors so far, four lanes at a time.
struct ToeplitzSolver {
  /// `column` reversed: `column[order − i]` is `reversedColumn[last − order + i]`.
  private let reversedColumn: [Double]
  private let rightSide: [Double]
  private var forward: [Double]
  private var next: [Double]
  private var solution: [Double]
  private var order = 1
  private var failed = false

  init(column: [Double], rightSide: [Double]) {
    reversedColumn = column.reversed()
    self.rightSide = rightSide
    let count = column.count
    forward = [Double](repeating: 0, count: count)
    next = [Double](repeating: 0, count: count)
    solution = [Double](repeating: 0, count: count)
    if column[0] != 0 {
      forward[0] = 1 / column[0]
      solution[0] = rightSide[0] / column[0]
    } else {
      failed = true
    }
  }

  /// Runs up to `orders` more orders: `nil` while unfinished, then the
  /// solution (`.some(nil)` when T is singular).
  mutating func advance(orders: Int) -> [Double]?? {
    let count = reversedColumn.count
    var budget = orders
    while order < count && budget > 0 && !failed {
      let error = correlation(forward)
      let denominator = 1 - error * error
      if denominator <= 1e-12 {
        failed = true
        break
      }
      Self.nextForward(forward, error: error, scale: 1 / denominator, order: order, into: &next)
      swap(&forward, &next)
      let factor = rightSide[order] - correlation(solution)
      Self.addReversed(forward, times: factor, order: order, to: &solution)
      order += 1
      budget -= 1
    }
    if failed { return .some(nil) }
    return order >= count ? .some(solution) : nil
  }

  /// The sum of `column[order − i] · vector[i]` over `i < order`, in four
  /// lanes added at the end.
  private func correlation(_ vector: [Double]) -> Double {
    let order = order
    let start = reversedColumn.count - 1 - order
    return reversedColumn.withUnsafeBufferPointer { column in
      vector.withUnsafeBufferPointer { vector in
        let column = column.baseAddress! + start
        let vector = vector.baseAddress!
        var sums = SIMD4<Double>()
        var index = 0
        while index + 4 <= order {
          sums += Self.lanes(column + index) * Self.lanes(vector + index)
          index += 4
        }
        while index < order {
          sums[0] += column[index] * vector[index]
          index += 1
        }
        return (sums[0] + sums[1]) + (sums[2] + sums[3])
      }
    }
  }

  /// The forward vector of order `order + 1` from that of `order`, whose
  /// backward vector is it reversed (T is symmetric):
  /// `next[i] = (forward[i] − error · forward[order − i]) · scale`.
  private static func nextForward(
    _ forward: [Double], error: Double, scale: Double, order: Int, into next: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      next.withUnsafeMutableBufferPointer { next in
        let forward = forward.baseAddress!
        let next = next.baseAddress!
        next[0] = forward[0] * scale
        var index = 1
        while index + 4 <= order {
          let backward = reversedLanes(forward + (order - index - 3))
          store((lanes(forward + index) - error * backward) * scale, at: next + index)
          index += 4
        }
        while index < order {
          next[index] = (forward[index] - error * forward[order - index]) * scale
          index += 1
        }
        next[order] = -error * forward[0] * scale
      }
    }
  }

  /// `solution[i] += factor · forward[order − i]` for `i` in `0...order`.
  private static func addReversed(
    _ forward: [Double], times factor: Double, order: Int, to solution: inout [Double]
  ) {
    forward.withUnsafeBufferPointer { forward in
      solution.withUnsafeMutableBufferPointer { solution in
        let forward = forward.baseAddress!
        let solution = solution.baseAddress!
        var index = 0
        while index + 4 <= order + 1 {
          let backward = reversedLanes(forward + (order - index - 3))
          store(lanes(solution + index) + factor * backward, at: solution + index)
          index += 4
        }
        while index <= order {
          solution[index] += factor * forward[order - index]
          index += 1
        }
      }
    }
  }

  @inline(__always) private static func lanes(_ pointer: UnsafePointer<Double>) -> SIMD4<Double> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Double>.self)
  }

  @inline(__always) private static func lanes(_ pointer: UnsafeMutablePointer<Double>)
    -> SIMD4<Double>
  {
    lanes(UnsafePointer(pointer))
  }

  /// `pointer[3], pointer[2], pointer[1], pointer[0]`.
  @inline(__always) private static func reversedLanes(_ pointer: UnsafePointer<Double>)
    -> SIMD4<Double>
  {
    let values = lanes(pointer)
    return SIMD4(values[3], values[2], values[1], values[0])
  }

  @inline(__always) private static func store(
    _ values: SIMD4<Double>, at pointer: UnsafeMutablePointer<Double>
  ) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: values, as: SIMD4<Double>.self)
  }
}
