internal import CVectorKernels

#if canImport(Glibc)
  import Glibc
#endif

/// Lowers a stream's sample rate by a whole factor through a linear-phase
/// low-pass: a Kaiser-windowed sinc designed for a pass band and a stop
/// band, computed only at the output samples (polyphase in effect).
///
/// Everything up to `passBand` Hz keeps its level (ripple under 0.01 dB);
/// everything that would fold back into it is at least 60 dB down. The
/// output lags the input by `delay` seconds. Owned by one thread; nothing
/// allocates after `init`.
public struct FIRDecimator {
  public let factor: Int
  public let outputRate: Double
  /// The filter's group delay, in seconds of the input.
  public let delay: Double
  private let taps: [Float]
  /// The inputs not yet done with (from the next output's window on),
  /// with room to join them to the start of the next input.
  private var history: [Float]
  private var held: Int
  /// Where in `history` the next output's window starts.
  private var phase = 0
  /// Whether the outputs are summed with the processor's 256-bit vectors
  /// (`vk_fir_dots4_wide`): the same sums, bit for bit, in half the
  /// instructions.
  private let usesWideVectors: Bool

  /// - Parameters:
  ///   - factor: input samples per output sample.
  ///   - passBand: the highest frequency kept unchanged, in Hz; below half
  ///     the output rate.
  ///   - allowsWideVectors: whether the processor's 256-bit vectors may be
  ///     used where it has them (the outputs are the same either way).
  public init(
    factor: Int, sampleRate: Double, passBand: Double, allowsWideVectors: Bool = true
  ) {
    precondition(factor >= 1)
    self.factor = factor
    usesWideVectors = allowsWideVectors && Self.hasWideVectors
    outputRate = sampleRate / Double(factor)
    // What lies above `outputRate - passBand` folds to above `passBand`.
    let stopBand = outputRate - passBand
    let transition = 2 * Double.pi * (stopBand - passBand) / sampleRate
    let attenuation = 60.0
    let beta = 0.1102 * (attenuation - 8.7)
    let count = max(7, Int(((attenuation - 8) / (2.285 * transition)).rounded(.up)) | 1)
    let cutoff = (passBand + stopBand) / 2 / sampleRate
    let middle = Double(count - 1) / 2
    var coefficients = (0..<count).map { n -> Double in
      let x = Double(n) - middle
      let sinc = x == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * x) / (Double.pi * x)
      let ratio = x / middle
      return sinc * Self.besselI0(beta * (1 - ratio * ratio).squareRoot()) / Self.besselI0(beta)
    }
    let sum = coefficients.reduce(0, +)
    coefficients = coefficients.map { $0 / sum }
    // Zeros to a whole number of eight: the dot product runs in vectors only.
    taps = coefficients.map(Float.init) + [Float](repeating: 0, count: (8 - count % 8) % 8)
    delay = middle / sampleRate
    history = [Float](repeating: 0, count: 2 * (taps.count + factor))
    held = taps.count - 1
  }

  /// The most outputs one call can give for `inputCount` samples.
  public func maximumOutputCount(forInput inputCount: Int) -> Int { inputCount / factor + 1 }

  /// Filters and decimates `input` into `output`; returns the outputs
  /// written. The windows that begin in what was held from before are
  /// taken from a short join of it and the input's start; the rest straight
  /// from `input`, which is never copied whole.
  public mutating func process(
    _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>
  ) -> Int {
    guard let samples = input.baseAddress, input.count > 0 else { return 0 }
    let length = taps.count
    var produced = 0
    // `start` counts from the first held sample: held ones, then the input.
    var start = phase
    history.withUnsafeMutableBufferPointer { history in
      let joined = history.baseAddress!
      // The windows that begin among the held samples.
      let joinedCount = held + min(input.count, length + factor)
      (joined + held).update(from: samples, count: joinedCount - held)
      taps.withUnsafeBufferPointer { taps in
        while start < held && start + length <= joinedCount {
          output[produced] = Self.dots(taps, joined + start, joined + start).0
          produced += 1
          start += factor
        }
        // The rest, straight from the input, four and then two at a time.
        let end = held + input.count
        if usesWideVectors {
          while start >= held && start + 3 * factor + length <= end {
            vk_fir_dots4_wide(
              taps.baseAddress!, length, samples + (start - held), factor, output + produced)
            produced += 4
            start += 4 * factor
          }
        }
        while start >= held && start + 3 * factor + length <= end {
          let window = samples + (start - held)
          let four = Self.dots4(taps, window, factor)
          output[produced] = four.0
          output[produced + 1] = four.1
          output[produced + 2] = four.2
          output[produced + 3] = four.3
          produced += 4
          start += 4 * factor
        }
        while start >= held && start + factor + length <= end {
          let window = samples + (start - held)
          let pair = Self.dots(taps, window, window + factor)
          output[produced] = pair.0
          output[produced + 1] = pair.1
          produced += 2
          start += 2 * factor
        }
        if start >= held && start + length <= end {
          output[produced] = Self.dots(taps, samples + (start - held), samples + (start - held)).0
          produced += 1
          start += factor
        }
      }
      (phase, held) = Self.keep(from: start, held: held, of: joined, input)
    }
    return produced
  }

  /// How many outputs `process` would give for `count` more samples.
  public func outputCount(forNext count: Int) -> Int {
    let end = held + count
    return phase + taps.count <= end ? (end - taps.count - phase) / factor + 1 : 0
  }

  /// Takes `input` as `process` would, without computing the outputs
  /// (another filter restored to where this one was computes them);
  /// returns how many there would have been.
  public mutating func skip(_ input: UnsafeBufferPointer<Float>) -> Int {
    guard input.count > 0 else { return 0 }
    let outputs = outputCount(forNext: input.count)
    let start = phase + outputs * factor
    (phase, held) = history.withUnsafeMutableBufferPointer { [held] history in
      Self.keep(from: start, held: held, of: history.baseAddress!, input)
    }
    return outputs
  }

  /// Keeps the inputs from the next output's window on (`start`, counted
  /// from the first of the `held` samples, `joined`'s first) at the start
  /// of `joined`; returns the new phase and count held.
  private static func keep(
    from start: Int, held: Int, of joined: UnsafeMutablePointer<Float>,
    _ input: UnsafeBufferPointer<Float>
  ) -> (phase: Int, held: Int) {
    let samples = input.baseAddress!
    let end = held + input.count
    let first = min(start, end)
    let keep = end - first
    if first < held {
      // Still within what was held (a short input): slide it down.
      joined.update(from: joined + first, count: held - first)
      (joined + held - first).update(from: samples, count: input.count)
    } else {
      joined.update(from: samples + (first - held), count: keep)
    }
    return (start - first, keep)
  }

  /// The most samples `save` writes.
  public var stateSize: Int { taps.count + factor }

  /// Writes where the filter stands (the inputs it still holds) to
  /// `samples`; with what it returns, `restore` puts a filter of the same
  /// design back there.
  public func save(into samples: UnsafeMutablePointer<Float>) -> (held: Int, phase: Int) {
    history.withUnsafeBufferPointer { samples.update(from: $0.baseAddress!, count: held) }
    return (held, phase)
  }

  /// Stands the filter where `save` left one of the same design.
  public mutating func restore(_ samples: UnsafePointer<Float>, held: Int, phase: Int) {
    history.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: samples, count: held) }
    self.held = held
    self.phase = phase
  }

  /// Whether this processor has the 256-bit vectors of `vk_fir_dots4_wide`.
  private static let hasWideVectors = vk_has_wide_vectors() != 0

  /// A sum's eight lanes added as a tree: three additions deep.
  @inline(__always)
  private static func total(_ sum: SIMD8<Float>) -> Float {
    let half = sum.lowHalf + sum.highHalf
    return (half[0] + half[2]) + (half[1] + half[3])
  }

  /// The filter's outputs for the windows of `taps.count` samples at
  /// `first` and the next three `step` samples apart: each summed as
  /// `dots` sums it, four sharing each load of the taps.
  @inline(__always)
  private static func dots4(
    _ taps: UnsafeBufferPointer<Float>, _ first: UnsafePointer<Float>, _ step: Int
  ) -> (Float, Float, Float, Float) {
    var sums = (
      SIMD8<Float>(repeating: 0), SIMD8<Float>(repeating: 0), SIMD8<Float>(repeating: 0),
      SIMD8<Float>(repeating: 0)
    )
    let tapBytes = UnsafeRawPointer(taps.baseAddress!)
    let bytes = UnsafeRawPointer(first)
    let stride = 4 &* step
    for offset in Swift.stride(from: 0, to: taps.count &* 4, by: 32) {
      let tap = tapBytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
      sums.0 += tap * bytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
      sums.1 += tap * bytes.loadUnaligned(fromByteOffset: offset &+ stride, as: SIMD8<Float>.self)
      sums.2 +=
        tap * bytes.loadUnaligned(fromByteOffset: offset &+ 2 &* stride, as: SIMD8<Float>.self)
      sums.3 +=
        tap * bytes.loadUnaligned(fromByteOffset: offset &+ 3 &* stride, as: SIMD8<Float>.self)
    }
    return (Self.total(sums.0), Self.total(sums.1), Self.total(sums.2), Self.total(sums.3))
  }

  /// The filter's outputs for the windows of `taps.count` samples at
  /// `first` and at `second`.
  @inline(__always)
  private static func dots(
    _ taps: UnsafeBufferPointer<Float>, _ first: UnsafePointer<Float>,
    _ second: UnsafePointer<Float>
  ) -> (Float, Float) {
    var sums = (SIMD8<Float>(repeating: 0), SIMD8<Float>(repeating: 0))
    let tapBytes = UnsafeRawPointer(taps.baseAddress!)
    let firstBytes = UnsafeRawPointer(first)
    let secondBytes = UnsafeRawPointer(second)
    for offset in stride(from: 0, to: taps.count &* 4, by: 32) {
      let tap = tapBytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
      sums.0 += tap * firstBytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
      sums.1 += tap * secondBytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
    }
    return (Self.total(sums.0), Self.total(sums.1))
  }

  /// The modified Bessel function of the first kind, order 0 (its series).
  private static func besselI0(_ x: Double) -> Double {
    var sum = 1.0
    var term = 1.0
    var k = 1.0
    while term > 1e-12 * sum {
      term *= (x / (2 * k)) * (x / (2 * k))
      sum += term
      k += 1
    }
    return sum
  }
}
