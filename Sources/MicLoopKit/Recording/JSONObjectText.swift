import TextFormatting

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
    text += DecimalFormatting.json(value, places: places)
  }

  /// Text that already is JSON (an array, an object).
  mutating func add(_ name: String, json: String) {
    key(name)
    text += json
  }

  var finished: String { text + "}" }
}
