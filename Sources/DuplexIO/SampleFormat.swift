/// How one sample is stored on a device. Inside micloop audio is always
/// interleaved Float32; conversion happens at the edge, here.
/// Conversions are real-time safe and may run on any thread.
public enum SampleFormat: String, Sendable, CaseIterable {
  /// 16-bit signed little-endian.
  case s16
  /// 24-bit signed little-endian in the low three bytes of four.
  case s24
  /// 24-bit signed little-endian packed in three bytes.
  case s24Packed = "s24_3"
  /// 32-bit signed little-endian.
  case s32
  /// 32-bit IEEE float little-endian.
  case float

  /// Bytes per sample.
  public var byteCount: Int {
    switch self {
    case .s16: return 2
    case .s24Packed: return 3
    case .s24, .s32, .float: return 4
    }
  }

  /// Formats in order of preference when the device offers several: the
  /// most precise first, so nothing is lost before micloop sees it.
  public static let preference: [SampleFormat] = [.float, .s32, .s24, .s24Packed, .s16]

  /// Converts `count` samples in this format at `source` to Float32 in [−1, 1].
  public func decode(
    _ source: UnsafeRawPointer, into destination: UnsafeMutablePointer<Float>, count: Int
  ) {
    switch self {
    case .s16:
      let samples = source.assumingMemoryBound(to: Int16.self)
      for i in 0..<count { destination[i] = Float(samples[i]) * (1 / 32_768) }
    case .s24:
      let samples = source.assumingMemoryBound(to: Int32.self)
      // Shift the 24 significant bits to the top to restore the sign.
      for i in 0..<count { destination[i] = Float((samples[i] << 8) >> 8) * (1 / 8_388_608) }
    case .s24Packed:
      let bytes = source.assumingMemoryBound(to: UInt8.self)
      for i in 0..<count {
        let value =
          Int32(bytes[3 * i]) | Int32(bytes[3 * i + 1]) << 8 | Int32(
            Int8(bitPattern: bytes[3 * i + 2])) << 16
        destination[i] = Float(value) * (1 / 8_388_608)
      }
    case .s32:
      let samples = source.assumingMemoryBound(to: Int32.self)
      for i in 0..<count { destination[i] = Float(samples[i]) * (1 / 2_147_483_648) }
    case .float:
      destination.update(from: source.assumingMemoryBound(to: Float.self), count: count)
    }
  }

  /// Converts `count` Float32 samples to this format, clipping to full scale
  /// (NaN becomes 0) so nothing ever wraps around.
  public func encode(
    _ source: UnsafePointer<Float>, into destination: UnsafeMutableRawPointer, count: Int
  ) {
    switch self {
    case .s16:
      let samples = destination.assumingMemoryBound(to: Int16.self)
      for i in 0..<count {
        samples[i] = Int16(Self.clamped(source[i], scale: 32_768, maximum: 32_767))
      }
    case .s24:
      let samples = destination.assumingMemoryBound(to: Int32.self)
      for i in 0..<count {
        samples[i] = Int32(Self.clamped(source[i], scale: 8_388_608, maximum: 8_388_607))
      }
    case .s24Packed:
      let bytes = destination.assumingMemoryBound(to: UInt8.self)
      for i in 0..<count {
        let value = Int32(Self.clamped(source[i], scale: 8_388_608, maximum: 8_388_607))
        bytes[3 * i] = UInt8(truncatingIfNeeded: value)
        bytes[3 * i + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[3 * i + 2] = UInt8(truncatingIfNeeded: value >> 16)
      }
    case .s32:
      let samples = destination.assumingMemoryBound(to: Int32.self)
      for i in 0..<count {
        samples[i] = Int32(Self.clamped(source[i], scale: 2_147_483_648, maximum: 2_147_483_647))
      }
    case .float:
      let samples = destination.assumingMemoryBound(to: Float.self)
      for i in 0..<count {
        let x = source[i]
        samples[i] = x.isNaN ? 0 : min(1, max(-1, x))
      }
    }
  }

  @inline(__always)
  static func clamped(_ x: Float, scale: Double, maximum: Double) -> Int64 {
    let scaled = (Double(x) * scale).rounded()
    guard scaled == scaled else { return 0 }
    return Int64(min(maximum, max(-scale, scaled)))
  }
}
