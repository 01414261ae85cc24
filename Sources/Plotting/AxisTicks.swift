/// Tick marks for an axis: round steps (1, 2 or 5 times a power of ten,
/// or minutes and hours for time) so about `target` of them fit.
public enum AxisTicks {
  /// The step between ticks over `span` units.
  public static func step(span: Double, target: Int) -> Double {
    guard span > 0, span.isFinite, target > 0 else { return 1 }
    let raw = span / Double(target)
    var magnitude = 1.0
    while magnitude * 10 <= raw { magnitude *= 10 }
    while magnitude > raw { magnitude /= 10 }
    for multiple in [1.0, 2, 5, 10] where magnitude * multiple >= raw {
      return magnitude * multiple
    }
    return magnitude * 10
  }

  /// Tick positions from 0 through `span` every `step(span:target:)`
  /// (none past `target` × 3: a span that is not finite gets one).
  public static func ticks(span: Double, target: Int) -> [Double] {
    let step = step(span: span, target: target)
    var values = [Double]()
    var index = 0.0
    let most = max(1, target) * 3
    while index * step <= span * (1 + 1e-9) && values.count < most {
      values.append(index * step)
      index += 1
    }
    return values
  }

  /// A tick's label without trailing zeros: 0.5, 2, 120.
  /// Steps of 1, 2 or 5 times a power of ten add up to binary fractions
  /// such as 0.30000000000000004: a label shows six decimals at most.
  public static func label(_ value: Double) -> String {
    guard value.isFinite else { return String(value) }
    if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
    let rounded = abs(value) < 1e9 ? (value * 1e6).rounded() / 1e6 : value
    if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int(rounded)) }
    var text = String(rounded)
    if text.count > 8 && !text.contains("e") { text = String(text.prefix(8)) }
    return text
  }
}
