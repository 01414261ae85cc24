#if canImport(Glibc)
  import Glibc
#endif

/// One analysed frame's spectrum: each bin's power and complex value, and
/// the queries the tone classifiers make of it (peaks, band and noise
/// power, main lobes). A view over storage it does not own: the
/// `SpectrumAnalyzer` that made it (until its next frame), or a frame
/// analysed ahead on another thread and handed over.
///
/// Used by one thread at a time; no query allocates.
package struct Spectrum {
  /// Samples per frame (also the transform size).
  package let frameLength: Int
  /// Hz between bins.
  package let binWidth: Double
  /// Converts main-lobe power into a sine's squared amplitude.
  package let amplitudeScale: Double
  /// `frameLength / 2 + 1` powers.
  package let power: UnsafePointer<Double>
  /// `frameLength / 2 + 1` complex values, real and imaginary parts in
  /// turn; or, for a frame transformed with another (`pairing` 0 for the
  /// first, 1 for the second; −1 otherwise), the `frameLength` values of
  /// their joint transform (see `PairedSpectrumAnalyzer`).
  package let values: UnsafePointer<Float>
  package var pairing = -1
  /// Room for `2 × (frameLength / 2 + 1)` values: the noise estimate's
  /// work space. Owned by the analyser, like its thread.
  package let scratch: UnsafeMutablePointer<Double>

  package var lastBin: Int { frameLength / 2 }

  /// The complex value of `bin`.
  package func value(atBin bin: Int) -> (re: Double, im: Double) {
    guard pairing >= 0 else { return (Double(values[2 * bin]), Double(values[2 * bin + 1])) }
    let mirror = bin == 0 ? 0 : frameLength - bin
    let (re, im) = (values[2 * bin], values[2 * bin + 1])
    let (mirrorRe, mirrorIm) = (values[2 * mirror], values[2 * mirror + 1])
    return pairing == 0
      ? (Double(re * 0.5 + mirrorRe * 0.5), Double(im * 0.5 - mirrorIm * 0.5))
      : (Double(mirrorIm * 0.5 + im * 0.5), Double(mirrorRe * 0.5 - re * 0.5))
  }

  /// The power of `bin`, scaled so that a sine's main lobe (five bins)
  /// sums to its squared amplitude.
  package func binPower(_ bin: Int) -> Double { power[bin] * amplitudeScale }

  /// The bin nearest `frequency`, clamped to the spectrum.
  package func bin(of frequency: Double) -> Int {
    min(lastBin, max(0, Int((frequency / binWidth).rounded())))
  }

  /// Total power of the bins from `low` to `high`, summed four ways at
  /// once (a single running sum waits on every addition).
  package func bandPower(bins low: Int, _ high: Int) -> Double {
    let count = max(low, high) - low + 1
    let raw = UnsafeRawPointer(power + low)
    var sums = (SIMD2<Double>(), SIMD2<Double>())
    var index = 0
    while index + 4 <= count {
      sums.0 += raw.loadUnaligned(fromByteOffset: 8 * index, as: SIMD2<Double>.self)
      sums.1 += raw.loadUnaligned(fromByteOffset: 8 * index + 16, as: SIMD2<Double>.self)
      index += 4
    }
    let pair = sums.0 + sums.1
    var sum = pair[0] + pair[1]
    while index < count {
      sum += power[low + index]
      index += 1
    }
    return sum
  }

  /// The power of the broadband noise in the bins from `low` to `high`,
  /// estimated from their 30th percentile: a noise bin's power is
  /// exponentially distributed, and tones and harmonics only lift the top.
  package func noisePower(bins low: Int, _ high: Int) -> Double {
    let count = max(low, high) - low + 1
    let rank = count * 3 / 10
    let value = RankSelection.value(
      ofRank: rank, in: power + low, count: count, first: scratch,
      second: scratch + (lastBin + 1))
    return value / 0.357 * Double(count)
  }

  /// The strongest bin from `low` (at least 1) to `high` (the first of
  /// equals): the greatest power first, two bins at a time without a branch
  /// on their values, then where it is.
  package func strongestBin(_ low: Int, _ high: Int) -> Int {
    let low = max(1, low)
    let high = max(low, high)
    let raw = UnsafeRawPointer(power)
    var greatest = SIMD2<Double>()
    var bin = low
    while bin + 2 <= high + 1 {
      let pair = raw.loadUnaligned(fromByteOffset: 8 * bin, as: SIMD2<Double>.self)
      greatest.replace(with: pair, where: pair .> greatest)
      bin += 2
    }
    var strongest = greatest[0] > greatest[1] ? greatest[0] : greatest[1]
    if bin <= high && power[bin] > strongest { strongest = power[bin] }
    var best = low
    while power[best] < strongest && best < high { best += 1 }
    return best
  }

  /// The power in the main lobe (five bins) around the strongest bin from
  /// `low` to `high`: what `peak` would measure, without refining it.
  package func strongestLobe(bins low: Int, _ high: Int) -> Double {
    lobe(around: strongestBin(low, high))
  }

  /// The power in the main lobe (five bins) centred on `bin`.
  package func lobe(around bin: Int) -> Double {
    if bin >= 2 && bin <= lastBin - 2 {
      return power[bin - 2] + power[bin - 1] + power[bin] + power[bin + 1] + power[bin + 2]
    }
    var lobe = 0.0
    for index in max(0, bin - 2)...min(lastBin, bin + 2) { lobe += power[index] }
    return lobe
  }

  /// The strongest peak between bins `low` and `high`, its frequency
  /// refined by a parabola through the log powers of the peak bin and its
  /// two neighbours; `nil` when the band is silent.
  package func peak(bins low: Int, _ high: Int) -> SpectralPeak? {
    peak(at: strongestBin(low, high))
  }

  /// The peak at `best` (a band's strongest bin, not 0), refined as `peak(bins:)` does.
  package func peak(at best: Int) -> SpectralPeak? {
    guard power[best] > 0 else { return nil }
    // The spectrum of a real signal mirrors at 0 and at half the rate.
    let left = power[best - 1]
    let right = best < lastBin ? power[best + 1] : power[best - 1]
    var offset = 0.0
    if left > 0 && right > 0 {
      let a = log(left)
      let b = log(power[best])
      let c = log(right)
      let curvature = a - 2 * b + c
      if curvature < 0 { offset = max(-0.5, min(0.5, 0.5 * (a - c) / curvature)) }
    }
    let lobe = lobe(around: best)
    return SpectralPeak(
      frequency: (Double(best) + offset) * binWidth,
      amplitude: (lobe * amplitudeScale).squareRoot(), lobePower: lobe)
  }
}
