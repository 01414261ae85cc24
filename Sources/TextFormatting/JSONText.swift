/// Pieces of JSON text written without Foundation: string literals and
/// arrays of already-rendered values (numbers come from
/// `DecimalFormatting.json`). Safe on any thread.
public enum JSONText {
  /// `text` as a JSON string literal, with quotes, backslashes and control
  /// characters escaped.
  public static func quoted(_ text: String) -> String {
    // Names and symbols need no escapes: copied as they are.
    if !needsEscapes(text) { return "\"" + text + "\"" }
    var result = "\""
    result.reserveCapacity(text.utf8.count + 8)
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

  /// Appends `text` as a JSON string literal (as `quoted` writes it) to
  /// `bytes`.
  public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
    if needsEscapes(text) {
      bytes.append(contentsOf: quoted(text).utf8)
    } else {
      bytes.append(UInt8(ascii: "\""))
      bytes.append(contentsOf: text.utf8)
      bytes.append(UInt8(ascii: "\""))
    }
  }

  /// Whether `text` holds a quote, a backslash or a control character.
  private static func needsEscapes(_ text: String) -> Bool {
    func isEscaped(_ byte: UInt8) -> Bool {
      byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
    // A native string's bytes are read as one buffer (a loop the compiler
    // unrolls), not one index step at a time.
    let answer = text.utf8.withContiguousStorageIfAvailable { bytes in
      for byte in bytes where isEscaped(byte) { return true }
      return false
    }
    return answer ?? text.utf8.contains(where: isEscaped)
  }

  /// A JSON array of already-rendered values.
  public static func array(_ values: [String]) -> String {
    "[" + values.joined(separator: ",") + "]"
  }
}
