import SignalDSP

/// Screens audio for samples that are damaged data rather than sound
/// (`DamagedSamples`): NaN, ±infinity and values beyond +60 dBFS are
/// replaced by zero and counted; subnormal values (below `Float.leastNormalMagnitude`,
/// about −758 dBFS) are flushed to zero uncounted, since they are silence
/// that single-precision squares cannot hold (a peak of −800 dBFS beside
/// no RMS at all).
///
/// Stateless; safe on any thread, real-time safe (no allocation).
package enum SampleScreen {
  /// Replaces damaged samples by zero and flushes subnormal ones; returns
  /// how many were damaged.
  package static func screen(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
    let bound = SIMD8<Float>(repeating: DamagedSamples.largestSound)
    let smallest = SIMD8<Float>(repeating: Float.leastNormalMagnitude)
    let zero = SIMD8<Float>(repeating: 0)
    // x − x is 0 for finite x and NaN otherwise; the masks catch the rest.
    var nonFinite = zero
    var suspect = SIMDMask<SIMD8<Float>.MaskStorage>(repeating: false)
    var index = 0
    while index + 8 <= count {
      let v = UnsafeRawPointer(samples + index).loadUnaligned(as: SIMD8<Float>.self)
      let magnitude = v.magnitudes
      nonFinite += v - v
      suspect .|= (magnitude .> bound) .| ((magnitude .< smallest) .& (magnitude .> zero))
      index += 8
    }
    var clean = nonFinite.sum() == 0 && !any(suspect)
    for tail in index..<count
    where !DamagedSamples.isSound(samples[tail]) || isSubnormal(samples[tail]) {
      clean = false
    }
    guard !clean else { return 0 }
    var damaged = 0
    for i in 0..<count {
      if !DamagedSamples.isSound(samples[i]) {
        samples[i] = 0
        damaged += 1
      } else if isSubnormal(samples[i]) {
        samples[i] = 0
      }
    }
    return damaged
  }

  @inline(__always)
  static func isSubnormal(_ sample: Float) -> Bool {
    sample != 0 && abs(sample) < Float.leastNormalMagnitude
  }
}
