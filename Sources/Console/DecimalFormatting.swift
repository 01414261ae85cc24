import SignalDSP

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
    let units = Int64(scaled)
    let divisor = Int64(scale)
    let whole = units / divisor
    var text = (value < 0 && units != 0) ? "-" : ""
    text += String(whole)
    if places > 0 {
      let fraction = String(units % divisor)
      text += "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
    return text
  }

  /// `value` in JSON: fixed-point, or `null` when absent or not finite.
  public static func json(_ value: Double?, places: Int) -> String {
    guard let value, value.isFinite else { return "null" }
    return fixed(value, places: places)
  }
}
