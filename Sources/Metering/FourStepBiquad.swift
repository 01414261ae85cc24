internal import CVectorKernels
import SignalDSP

/// A biquad (`Biquad`'s coefficients and state) that filters blocks four
/// outputs at a time: what the speech-band filter runs on.
///
/// A direct-form biquad waits a multiply and an add per sample for the
/// output before. Here the feed-forward part is done first for the whole
/// block (eight samples a step), and the recursion then takes four outputs
/// a step from the two before them — four outputs for the wait of one.
/// The same filter, rounded differently: the outputs differ from `Biquad`'s
/// by a few units in the last place.
///
/// The groups of four are counted from the first sample, not from the
/// start of each block: a group a block leaves open is finished by the
/// next one from the same state, so the outputs are the same bits however
/// the signal is cut into blocks.
///
/// Built at configuration time; `process` is real-time safe (no allocation).
/// One caller at a time.
struct FourStepBiquad: Sendable {
  private let b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
  /// Weights of the feed-forward values f[n + j] in the four outputs y[n … n + 3].
  private let forward: (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
  /// Weights of y[n − 1] and of y[n − 2] in y[n … n + 3].
  private let fromLast: SIMD4<Float>, fromSecondLast: SIMD4<Float>
  private var x1: Float = 0, x2: Float = 0
  /// The two outputs before the open group (before the next group when none is open).
  private var y1: Float = 0, y2: Float = 0
  /// Feed-forward values of the open group so far, the rest zero.
  private var openGroup = SIMD4<Float>()
  /// Outputs of the open group already given (0: no group open).
  private var filled = 0
  /// Whether `processPair` may run two recursions in one 256-bit vector.
  private let pairsInWideVectors = vk_has_wide_vectors() != 0

  /// The section `biquad` (its coefficients, from rest).
  init(_ biquad: Biquad) {
    b0 = biquad.b0
    b1 = biquad.b1
    b2 = biquad.b2
    a1 = biquad.a1
    a2 = biquad.a2
    // The recursion y[n] = f[n] − a1·y[n−1] − a2·y[n−2], unrolled in double precision.
    let (a1, a2) = (Double(biquad.a1), Double(biquad.a2))
    func run(_ before: Double, _ beforeThat: Double, _ inputs: [Double]) -> SIMD4<Float> {
      var (last, secondLast) = (before, beforeThat)
      var out = SIMD4<Float>()
      for k in 0..<4 {
        let y = inputs[k] - a1 * last - a2 * secondLast
        out[k] = Float(y)
        (secondLast, last) = (last, y)
      }
      return out
    }
    let impulse = { (j: Int) in run(0, 0, (0..<4).map { $0 == j ? 1 : 0 }) }
    forward = (impulse(0), impulse(1), impulse(2), impulse(3))
    fromLast = run(1, 0, [0, 0, 0, 0])
    fromSecondLast = run(0, 1, [0, 0, 0, 0])
  }

  /// Filters `count` samples in place.
  mutating func process(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    guard count > 0 else { return }
    let lastInputs = inputsToKeep(samples, count: count)
    feedForward(samples, count: count)
    recurse(samples, count: count)
    (x2, x1) = lastInputs
  }

  /// The two inputs before the next block, (x2, x1), once `count` samples
  /// (at least one) are filtered in place: read before they are overwritten.
  private func inputsToKeep(_ samples: UnsafeMutablePointer<Float>, count: Int) -> (Float, Float) {
    (count >= 2 ? samples[count - 2] : x1, samples[count - 1])
  }

  /// `first.process` on `firstSamples` and `second.process` on
  /// `secondSamples`, `count` each: the same bits, with the two filters'
  /// groups of four taken side by side in one 256-bit vector where the
  /// processor has them (`vk_four_step_recurse_pair_wide`), so two
  /// channels cost about what one does.
  static func processPair(
    _ first: inout FourStepBiquad, _ firstSamples: UnsafeMutablePointer<Float>,
    _ second: inout FourStepBiquad, _ secondSamples: UnsafeMutablePointer<Float>, count: Int
  ) {
    guard first.pairsInWideVectors, first.filled == second.filled, count > 0 else {
      first.process(firstSamples, count: count)
      second.process(secondSamples, count: count)
      return
    }
    let firstInputs = first.inputsToKeep(firstSamples, count: count)
    let secondInputs = second.inputsToKeep(secondSamples, count: count)
    first.feedForward(firstSamples, count: count)
    second.feedForward(secondSamples, count: count)
    // The open group's rest one filter at a time, the whole groups side by
    // side, a group the block leaves open one at a time again.
    let head = first.filled > 0 ? min(count, 4 - first.filled) : 0
    if head > 0 {
      first.recurse(firstSamples, count: head)
      second.recurse(secondSamples, count: head)
    }
    let groups = (count - head) / 4
    if groups > 0 {
      recursePair(&first, firstSamples + head, &second, secondSamples + head, groups: groups)
    }
    let tail = head + 4 * groups
    if tail < count {
      first.recurse(firstSamples + tail, count: count - tail)
      second.recurse(secondSamples + tail, count: count - tail)
    }
    (first.x2, first.x1) = firstInputs
    (second.x2, second.x1) = secondInputs
  }

  /// `groups` whole groups of both filters' recursions, no group open.
  private static func recursePair(
    _ first: inout FourStepBiquad, _ firstSamples: UnsafeMutablePointer<Float>,
    _ second: inout FourStepBiquad, _ secondSamples: UnsafeMutablePointer<Float>, groups: Int
  ) {
    var weights = (
      first.forward.0, first.forward.1, first.forward.2, first.forward.3, first.fromLast,
      first.fromSecondLast, second.forward.0, second.forward.1, second.forward.2,
      second.forward.3, second.fromLast, second.fromSecondLast
    )
    var state = (first.y1, first.y2, second.y1, second.y2)
    withUnsafeBytes(of: &weights) { weights in
      withUnsafeMutableBytes(of: &state) { state in
        vk_four_step_recurse_pair_wide(
          weights.baseAddress!.assumingMemoryBound(to: Float.self), firstSamples, secondSamples,
          groups, state.baseAddress!.assumingMemoryBound(to: Float.self))
      }
    }
    (first.y1, first.y2, second.y1, second.y2) = state
  }

  /// f[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] in place, from the end back,
  /// so every input is read before it is overwritten.
  private func feedForward(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    let raw = UnsafeMutableRawPointer(samples)
    let stride = MemoryLayout<Float>.stride
    var n = count
    while n - 8 >= 2 {
      n -= 8
      let x = raw.loadUnaligned(fromByteOffset: n * stride, as: SIMD8<Float>.self)
      let xm1 = raw.loadUnaligned(fromByteOffset: (n - 1) * stride, as: SIMD8<Float>.self)
      let xm2 = raw.loadUnaligned(fromByteOffset: (n - 2) * stride, as: SIMD8<Float>.self)
      raw.storeBytes(
        of: b0 * x + b1 * xm1 + b2 * xm2, toByteOffset: n * stride, as: SIMD8<Float>.self)
    }
    while n > 0 {
      n -= 1
      let xm1 = n >= 1 ? samples[n - 1] : x1
      let xm2 = n >= 2 ? samples[n - 2] : (n == 1 ? x1 : x2)
      samples[n] = b0 * samples[n] + b1 * xm1 + b2 * xm2
    }
  }

  /// y[n] = f[n] − a1·y[n−1] − a2·y[n−2] in place, four outputs a step;
  /// a group cut short by the block's end is worked out with zeros for its
  /// missing values, which weigh nothing in its earlier outputs (`forward`
  /// is exactly 0 above the diagonal), and finished by the next call.
  private mutating func recurse(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    let raw = UnsafeMutableRawPointer(samples)
    let stride = MemoryLayout<Float>.stride
    var (last, secondLast) = (y1, y2)
    var n = 0
    if filled > 0 {
      n = min(count, 4 - filled)
      for k in 0..<n { openGroup[filled + k] = samples[k] }
      let y = step(openGroup, last, secondLast)
      for k in 0..<n { samples[k] = y[filled + k] }
      filled += n
      guard filled == 4 else { return }
      (last, secondLast) = (y[3], y[2])
      filled = 0
    }
    while n + 4 <= count {
      let f = raw.loadUnaligned(fromByteOffset: n * stride, as: SIMD4<Float>.self)
      let y = step(f, last, secondLast)
      raw.storeBytes(of: y, toByteOffset: n * stride, as: SIMD4<Float>.self)
      (last, secondLast) = (y[3], y[2])
      n += 4
    }
    if n < count {
      openGroup = SIMD4()
      filled = count - n
      for k in 0..<filled { openGroup[k] = samples[n + k] }
      let y = step(openGroup, last, secondLast)
      for k in 0..<filled { samples[n + k] = y[k] }
    }
    (y1, y2) = (last, secondLast)
  }

  /// Outputs y[n … n + 3] from feed-forward values f[n … n + 3] and the two outputs before.
  @inline(__always)
  private func step(_ f: SIMD4<Float>, _ last: Float, _ secondLast: Float) -> SIMD4<Float> {
    let given = (f[0] * forward.0 + f[1] * forward.1) + (f[2] * forward.2 + f[3] * forward.3)
    return given + (last * fromLast + secondLast * fromSecondLast)
  }
}
