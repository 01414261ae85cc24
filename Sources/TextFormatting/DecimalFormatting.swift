/// Fixed-point decimal text for numbers in reports, without Foundation.
/// Safe on any thread.
public enum DecimalFormatting {
  /// `value` with exactly `places` digits after the point, rounded half away
  /// from zero ("-0.00" is written "0.00").
  public static func fixed(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return String(value) }
    let units = UInt64(scaled)
    let isNegative = value < 0 && units != 0
    // Digits right to left into a buffer the string is made in.
    return String(unsafeUninitializedCapacity: 24 + places) { buffer in
      var rest = units
      var digits = 0
      var written = 0
      func put(_ byte: UInt8) {
        buffer[written] = byte
        written += 1
      }
      repeat {
        put(UInt8(ascii: "0") + UInt8(rest % 10))
        rest /= 10
        digits += 1
        if digits == places { put(UInt8(ascii: ".")) }
      } while rest > 0 || digits <= places
      if isNegative { put(UInt8(ascii: "-")) }
      for index in 0..<written / 2 { buffer.swapAt(index, written - 1 - index) }
      return written
    }
  }

  /// `value` as `fixed` writes it, with a "+" before values of 0 or more
  /// (gains: "+3.3", "-1.7").
  public static func signed(_ value: Double, places: Int) -> String {
    (value >= 0 ? "+" : "") + fixed(value, places: places)
  }

  /// `value` in JSON: fixed-point, or `null` when absent or not finite.
  public static func json(_ value: Double?, places: Int) -> String {
    guard let value, value.isFinite else { return "null" }
    return fixed(value, places: places)
  }
}
