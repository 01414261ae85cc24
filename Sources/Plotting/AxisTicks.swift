/// Tick marks for an axis: round steps (1, 2 or 5 times a power of ten,
/// or minutes and hours for time) so about `target` of them fit.
public enum AxisTicks {
  /// The step between ticks over `span` units.
  public static func step(span: Double, target: Int) -> Double {
    guard span > 0, target > 0 else { return 1 }
    let raw = span / Double(target)
    var magnitude = 1.0
    while magnitude * 10 <= raw { magnitude *= 10 }
    while magnitude > raw { magnitude /= 10 }
    for multiple in [1.0, 2, 5, 10] where magnitude * multiple >= raw {
      return magnitude * multiple
    }
    return magnitude * 10
  }

  /// Tick positions from 0 through `span` every `step(span:target:)`.
  public static func ticks(span: Double, target: Int) -> [Double] {
    let step = step(span: span, target: target)
    var values = [Double]()
    var index = 0.0
    while index * step <= span * (1 + 1e-9) {
      values.append(index * step)
      index += 1
    }
    return values
  }

  /// A tick's label without trailing zeros: 0.5, 2, 120.
  public static func label(_ value: Double) -> String {
    if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
    var text = String(value)
    if text.count > 8 { text = String(text.prefix(8)) }
    return text
  }
}
