#if canImport(Glibc)
  import Glibc
#endif

/// The periodic Hann window, the one taper every spectrum here is taken
/// with: `0.5 − 0.5·cos(2πn/N)` for `n` in `0..<N` (periodic, so that
/// frames taken a quarter or half a frame apart add up flat). Pure.
package enum HannWindow {
  /// The window's value at sample `n` of `length`.
  @inline(__always)
  package static func value(_ n: Int, length: Int) -> Double {
    0.5 - 0.5 * cos(2 * Double.pi * Double(n) / Double(length))
  }

  /// The whole window of `length` samples.
  package static func values(length: Int) -> [Double] {
    (0..<length).map { value($0, length: length) }
  }
}
