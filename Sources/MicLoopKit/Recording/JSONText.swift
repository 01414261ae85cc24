/// JSON text for the recorder's index, sidecars and events, without
/// Foundation: one object built field by field. Any thread.
struct JSONObjectText {
  private var text = "{"
  private var isEmpty = true

  init() { text.reserveCapacity(256) }

  private mutating func key(_ name: String) {
    if !isEmpty { text += "," }
    isEmpty = false
    text += JSONText.quoted(name)
    text += ":"
  }

  /// A string value.
  mutating func add(_ name: String, _ value: String) {
    key(name)
    text += JSONText.quoted(value)
  }

  /// A string value, or `null`.
  mutating func add(_ name: String, optional value: String?) {
    key(name)
    text += value.map(JSONText.quoted) ?? "null"
  }

  mutating func add(_ name: String, _ value: Int64) {
    key(name)
    text += String(value)
  }

  mutating func add(_ name: String, _ value: Int) { add(name, Int64(value)) }

  mutating func add(_ name: String, _ value: Bool) {
    key(name)
    text += value ? "true" : "false"
  }

  /// A number with `places` decimals; `null` when absent or not finite.
  mutating func add(_ name: String, _ value: Double?, places: Int) {
    key(name)
    text += JSONText.fixed(value, places: places)
  }

  /// Text that already is JSON (an array, an object).
  mutating func add(_ name: String, json: String) {
    key(name)
    text += json
  }

  var finished: String { text + "}" }
}

enum JSONText {
  /// `text` as a JSON string, with quotes, backslashes and control
  /// characters escaped.
  static func quoted(_ text: String) -> String {
    var result = "\""
    result.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }

  /// `value` with exactly `places` decimals, rounded half away from zero;
  /// `null` when absent or not finite.
  static func fixed(_ value: Double?, places: Int) -> String {
    guard let value, value.isFinite else { return "null" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return String(value) }
    let units = UInt64(scaled)
    let sign = value < 0 && units != 0 ? "-" : ""
    guard places > 0 else { return sign + String(units) }
    let whole = units / UInt64(scale)
    let fraction = String(units % UInt64(scale))
    return sign + String(whole) + "." + String(repeating: "0", count: places - fraction.count)
      + fraction
  }

  /// A JSON array of already-rendered values.
  static func array(_ values: [String]) -> String { "[" + values.joined(separator: ",") + "]" }
}
