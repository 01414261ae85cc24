/// The one way micloop writes a JSON object (every JSON line, the
/// recorder's index and sidecars), without Foundation: built member by
/// member, in the order added. Numbers are written with a fixed count of
/// decimals (`DecimalFormatting.json`), absent or non-finite ones as
/// `null`. Safe on any thread.
public struct JSONObject {
  private var text = "{"
  private var isEmpty = true

  /// An empty object, with room for a line of `capacity` bytes.
  public init(capacity: Int = 256) { text.reserveCapacity(capacity) }

  /// An object whose first member is `"event": event`.
  public init(event: String, capacity: Int = 256) {
    self.init(capacity: capacity)
    add("event", event)
  }

  private mutating func key(_ name: String) {
    if !isEmpty { text += "," }
    isEmpty = false
    text += JSONText.quoted(name)
    text += ":"
  }

  /// A string value.
  public mutating func add(_ name: String, _ value: String) {
    key(name)
    text += JSONText.quoted(value)
  }

  /// A string value, or `null`.
  public mutating func add(_ name: String, optional value: String?) {
    key(name)
    text += value.map(JSONText.quoted) ?? "null"
  }

  public mutating func add(_ name: String, _ value: Int64) {
    key(name)
    text += String(value)
  }

  public mutating func add(_ name: String, _ value: Int) { add(name, Int64(value)) }

  public mutating func add(_ name: String, _ value: Bool) {
    key(name)
    text += value ? "true" : "false"
  }

  /// A number with `places` decimals; `null` when absent or not finite.
  public mutating func add(_ name: String, _ value: Double?, places: Int) {
    key(name)
    text += DecimalFormatting.json(value, places: places)
  }

  /// Seconds, to the millisecond (every `time` and `duration`).
  public mutating func add(_ name: String, seconds: Double) { add(name, seconds, places: 3) }

  /// An array of numbers with `places` decimals each (`null` for those
  /// not finite).
  public mutating func add(_ name: String, numbers: some Sequence<Double>, places: Int) {
    key(name)
    text += "["
    var isFirst = true
    for value in numbers {
      if !isFirst { text += "," }
      isFirst = false
      text += DecimalFormatting.json(value, places: places)
    }
    text += "]"
  }

  /// An array of strings.
  public mutating func add(_ name: String, strings: some Sequence<String>) {
    key(name)
    text += "["
    var isFirst = true
    for value in strings {
      if !isFirst { text += "," }
      isFirst = false
      text += JSONText.quoted(value)
    }
    text += "]"
  }

  /// Text that already is JSON (an array or an object written by another
  /// `JSONObject`).
  public mutating func add(_ name: String, json: String) {
    key(name)
    text += json
  }

  /// The object's text.
  public var finished: String { text + "}" }
}
