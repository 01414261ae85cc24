/// Fixed-point decimal text for numbers in reports, without Foundation.
/// Safe on any thread.
public enum DecimalFormatting {
  /// `value` with exactly `places` digits after the point, rounded half away
  /// from zero ("-0.00" is written "0.00").
  public static func fixed(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
    guard let (units, isNegative) = scaled(value, places: places) else { return String(value) }
    return String(unsafeUninitializedCapacity: 24 + places) { buffer in
      writeDigits(units, places: places, isNegative: isNegative, into: buffer.baseAddress!)
    }
  }

  /// `value` × 10^`places`, rounded half away from zero, as whole units and
  /// a sign ("-0.00" has none); `nil` past what 64 bits hold exactly.
  private static func scaled(_ value: Double, places: Int) -> (UInt64, Bool)? {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return nil }
    let units = UInt64(scaled)
    return (units, value < 0 && units != 0)
  }

  /// Writes `units` with `places` decimals (and a leading "-") at `start`;
  /// returns the bytes written (at most 24 + `places`).
  private static func writeDigits(
    _ units: UInt64, places: Int, isNegative: Bool, into start: UnsafeMutablePointer<UInt8>
  ) -> Int {
    // Digits right to left, then reversed in place.
    var rest = units
    var digits = 0
    var written = 0
    repeat {
      start[written] = UInt8(ascii: "0") + UInt8(rest % 10)
      written += 1
      rest /= 10
      digits += 1
      if digits == places {
        start[written] = UInt8(ascii: ".")
        written += 1
      }
    } while rest > 0 || digits <= places
    if isNegative {
      start[written] = UInt8(ascii: "-")
      written += 1
    }
    var low = 0
    var high = written - 1
    while low < high {
      (start[low], start[high]) = (start[high], start[low])
      low += 1
      high -= 1
    }
    return written
  }

  /// Appends `value` as `json` writes it to `bytes`.
  public static func appendJSON(_ value: Double?, places: Int, to bytes: inout [UInt8]) {
    guard let value, value.isFinite else {
      bytes.append(contentsOf: "null".utf8)
      return
    }
    guard let (units, isNegative) = scaled(value, places: places) else {
      bytes.append(contentsOf: String(value).utf8)
      return
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24 + max(0, places)) { buffer in
      let count = writeDigits(
        units, places: places, isNegative: isNegative, into: buffer.baseAddress!)
      bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: count))
    }
  }

  /// Appends `value` in decimal to `bytes`.
  public static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
      var magnitude = value.magnitude
      var written = 0
      repeat {
        buffer[19 - written] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
        written += 1
      } while magnitude > 0
      if value < 0 { bytes.append(UInt8(ascii: "-")) }
      bytes.append(
        contentsOf: UnsafeBufferPointer(start: buffer.baseAddress! + 20 - written, count: written))
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
