/// The one way micloop writes a JSON object (every JSON line, the
/// recorder's index and sidecars), without Foundation: built member by
/// member, in the order added. Numbers are written with a fixed count of
/// decimals (`DecimalFormatting.json`), absent or non-finite ones as
/// `null`. Safe on any thread.
public struct JSONObject {
  /// The object's UTF-8 text so far, without its closing brace: written in
  /// place, with no string made per member or number.
  private var bytes: [UInt8]
  private var isEmpty = true

  /// An empty object, with room for a line of `capacity` bytes.
  public init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
    bytes.append(UInt8(ascii: "{"))
  }

  /// An object whose first member is `"event": event`.
  public init(event: String, capacity: Int = 256) {
    self.init(capacity: capacity)
    add("event", event)
  }

  private mutating func key(_ name: String) {
    if !isEmpty { bytes.append(UInt8(ascii: ",")) }
    isEmpty = false
    JSONText.appendQuoted(name, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
  }

  private mutating func append(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// A string value.
  public mutating func add(_ name: String, _ value: String) {
    key(name)
    JSONText.appendQuoted(value, to: &bytes)
  }

  /// A string value, or `null`.
  public mutating func add(_ name: String, optional value: String?) {
    key(name)
    if let value { JSONText.appendQuoted(value, to: &bytes) } else { append("null") }
  }

  public mutating func add(_ name: String, _ value: Int64) {
    key(name)
    DecimalFormatting.appendInteger(value, to: &bytes)
  }

  public mutating func add(_ name: String, _ value: Int) { add(name, Int64(value)) }

  /// An integer, or `null`.
  public mutating func add(_ name: String, optionalInteger value: Int?) {
    if let value { add(name, value) } else { add(name, json: "null") }
  }

  public mutating func add(_ name: String, _ value: Bool) {
    key(name)
    append(value ? "true" : "false")
  }

  /// A number with `places` decimals; `null` when absent or not finite.
  public mutating func add(_ name: String, _ value: Double?, places: Int) {
    key(name)
    DecimalFormatting.appendJSON(value, places: places, to: &bytes)
  }

  /// Seconds, to the millisecond (every `time` and `duration`).
  public mutating func add(_ name: String, seconds: Double) { add(name, seconds, places: 3) }

  /// An array of numbers with `places` decimals each (`null` for those
  /// not finite).
  public mutating func add(_ name: String, numbers: some Sequence<Double>, places: Int) {
    addArray(name, numbers) { DecimalFormatting.appendJSON($1, places: places, to: &$0) }
  }

  /// An array of strings.
  public mutating func add(_ name: String, strings: some Sequence<String>) {
    addArray(name, strings) { JSONText.appendQuoted($1, to: &$0) }
  }

  /// An array of objects.
  public mutating func add(_ name: String, objects: some Sequence<JSONObject>) {
    addArray(name, objects) { bytes, object in
      bytes.append(contentsOf: object.bytes)
      bytes.append(UInt8(ascii: "}"))
    }
  }

  /// An array of `items`, each written by `write`.
  private mutating func addArray<Item>(
    _ name: String, _ items: some Sequence<Item>, _ write: (inout [UInt8], Item) -> Void
  ) {
    key(name)
    bytes.append(UInt8(ascii: "["))
    var isFirst = true
    for item in items {
      if !isFirst { bytes.append(UInt8(ascii: ",")) }
      isFirst = false
      write(&bytes, item)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  /// Text that already is JSON (an array or an object written by another
  /// `JSONObject`).
  public mutating func add(_ name: String, json: String) {
    key(name)
    bytes.append(contentsOf: json.utf8)
  }

  /// The object's text.
  public var finished: String {
    String(unsafeUninitializedCapacity: bytes.count + 1) { buffer in
      _ = buffer.initialize(from: bytes)
      buffer[bytes.count] = UInt8(ascii: "}")
      return bytes.count + 1
    }
  }
}
