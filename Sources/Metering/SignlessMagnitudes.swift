extension SIMD where Scalar == Float {
  /// |x| in every lane, by clearing the sign bits: one instruction a
  /// vector, where `pointwiseMax(v, -v)` or choosing `-v` below zero
  /// compiles lane by lane. (A Float vector's mask storage holds `Int32`
  /// lanes, whose `max` is every bit but the sign.) Any thread.
  @inline(__always)
  var magnitudes: Self {
    let bits = unsafeBitCast(self, to: MaskStorage.self) & MaskStorage(repeating: .max)
    return unsafeBitCast(bits, to: Self.self)
  }
}
