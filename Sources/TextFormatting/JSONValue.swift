/// A JSON value read from text that may be hostile (an index another
/// program could have written): strict RFC 8259 syntax, nesting and size
/// bounded, never a crash. Safe on any thread.
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// Deepest nesting of arrays and objects read; deeper text is refused.
  public static let maximumDepth = 64

  /// The value `text` holds, or `nil` when it is not exactly one JSON value
  /// (whitespace around it allowed).
  public init?(parsing text: String) {
    var parser = Parser(bytes: Array(text.utf8))
    guard let value = parser.value(depth: 0) else { return nil }
    parser.skipWhitespace()
    guard parser.position == parser.bytes.count else { return nil }
    self = value
  }

  /// A member of an object (`nil` for a missing key or a non-object).
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { members[key] } else { nil }
  }

  /// The string this is, if it is one.
  public var string: String? {
    if case .string(let text) = self { text } else { nil }
  }

  /// The number this is, if it is one.
  public var number: Double? {
    if case .number(let value) = self { value } else { nil }
  }

  private struct Parser {
    let bytes: [UInt8]
    var position = 0

    mutating func skipWhitespace() {
      while position < bytes.count,
        bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D
          || bytes[position] == 0x09
      {
        position += 1
      }
    }

    mutating func value(depth: Int) -> JSONValue? {
      skipWhitespace()
      guard position < bytes.count, depth <= JSONValue.maximumDepth else { return nil }
      switch bytes[position] {
      case UInt8(ascii: "{"): return object(depth: depth + 1)
      case UInt8(ascii: "["): return array(depth: depth + 1)
      case UInt8(ascii: "\""): return string().map(JSONValue.string)
      case UInt8(ascii: "t"): return literal("true", .bool(true))
      case UInt8(ascii: "f"): return literal("false", .bool(false))
      case UInt8(ascii: "n"): return literal("null", .null)
      default: return number()
      }
    }

    mutating func literal(_ word: String, _ result: JSONValue) -> JSONValue? {
      let expected = Array(word.utf8)
      guard bytes.count - position >= expected.count,
        bytes[position..<position + expected.count].elementsEqual(expected)
      else { return nil }
      position += expected.count
      return result
    }

    mutating func object(depth: Int) -> JSONValue? {
      position += 1
      var members = [String: JSONValue]()
      skipWhitespace()
      if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
        position += 1
        return .object(members)
      }
      while true {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\""),
          let key = string()
        else { return nil }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
        position += 1
        guard let member = value(depth: depth) else { return nil }
        members[key] = member
        skipWhitespace()
        guard position < bytes.count else { return nil }
        let separator = bytes[position]
        position += 1
        if separator == UInt8(ascii: "}") { return .object(members) }
        guard separator == UInt8(ascii: ",") else { return nil }
      }
    }

    mutating func array(depth: Int) -> JSONValue? {
      position += 1
      var elements = [JSONValue]()
      skipWhitespace()
      if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
        position += 1
        return .array(elements)
      }
      while true {
        guard let element = value(depth: depth) else { return nil }
        elements.append(element)
        skipWhitespace()
        guard position < bytes.count else { return nil }
        let separator = bytes[position]
        position += 1
        if separator == UInt8(ascii: "]") { return .array(elements) }
        guard separator == UInt8(ascii: ",") else { return nil }
      }
    }

    /// A string literal at `position` (its opening quote), unescaped.
    mutating func string() -> String? {
      position += 1
      var scalars = String.UnicodeScalarView()
      var run = position
      func flush(_ end: Int) -> Bool {
        guard run < end else { return true }
        guard let text = String(validating: bytes[run..<end], as: UTF8.self) else { return false }
        scalars.append(contentsOf: text.unicodeScalars)
        return true
      }
      while position < bytes.count {
        let byte = bytes[position]
        if byte == UInt8(ascii: "\"") {
          guard flush(position) else { return nil }
          position += 1
          return String(scalars)
        }
        guard byte >= 0x20 else { return nil }
        guard byte == UInt8(ascii: "\\") else {
          position += 1
          continue
        }
        guard flush(position), position + 1 < bytes.count else { return nil }
        let escape = bytes[position + 1]
        position += 2
        switch escape {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{08}")
        case UInt8(ascii: "f"): scalars.append("\u{0C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
          guard var code = hex4() else { return nil }
          if (0xD800..<0xDC00).contains(code) {
            // A high surrogate needs its low half right after it.
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
              bytes[position + 1] == UInt8(ascii: "u")
            else { return nil }
            position += 2
            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let scalar = Unicode.Scalar(code) else { return nil }
          scalars.append(scalar)
        default: return nil
        }
        run = position
      }
      return nil
    }

    mutating func hex4() -> UInt32? {
      guard bytes.count - position >= 4 else { return nil }
      var code: UInt32 = 0
      for byte in bytes[position..<position + 4] {
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
        default: return nil
        }
        code = code << 4 | UInt32(digit)
      }
      position += 4
      return code
    }

    /// A number in JSON's grammar (no leading `+`, no leading zeros, no
    /// bare `.`), read as a `Double`.
    mutating func number() -> JSONValue? {
      let start = position
      func digits() -> Int {
        let first = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        return position - first
      }
      if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
      let integerStart = position
      guard digits() > 0 else { return nil }
      if bytes[integerStart] == UInt8(ascii: "0") && position - integerStart > 1 { return nil }
      if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
        position += 1
        guard digits() > 0 else { return nil }
      }
      if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
        position += 1
        if position < bytes.count,
          bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
        {
          position += 1
        }
        guard digits() > 0 else { return nil }
      }
      guard let text = String(validating: bytes[start..<position], as: UTF8.self),
        let value = Double(text)
      else { return nil }
      return .number(value)
    }
  }
}
