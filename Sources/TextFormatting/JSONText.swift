/// Pieces of JSON text written without Foundation: string literals and
/// arrays of already-rendered values (numbers come from
/// `DecimalFormatting.json`). Safe on any thread.
public enum JSONText {
  /// `text` as a JSON string literal, with quotes, backslashes and control
  /// characters escaped.
  public static func quoted(_ text: String) -> String {
    // Names and symbols need no escapes: copied as they are.
    if !text.utf8.contains(where: {
      $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\")
    }) {
      return "\"" + text + "\""
    }
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

  /// A JSON array of already-rendered values.
  public static func array(_ values: [String]) -> String {
    "[" + values.joined(separator: ",") + "]"
  }
}
