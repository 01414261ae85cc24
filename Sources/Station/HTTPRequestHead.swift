/// A request's line and headers, parsed from the bytes a client sent
/// before the blank line. Only what the station needs: method, path,
/// query, and headers by lower-cased name. Safe on any thread.
struct HTTPRequestHead: Sendable, Equatable {
  var method: String
  /// The path as sent (still percent-encoded), without the query.
  var path: String
  /// The query as sent, without the `?`.
  var query: String
  var headers: [String: String]

  /// The blank line that ends a request's head.
  static let terminator: [UInt8] = Array("\r\n\r\n".utf8)

  /// Parses `bytes` (the head up to and including the blank line); nil
  /// when it is not an HTTP/1.x request.
  init?(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
    var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true).makeIterator()
    guard let requestLine = lines.next() else { return nil }
    let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
    guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else {
      return nil
    }
    method = String(parts[0])
    let target = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    path = String(target[0])
    query = target.count > 1 ? String(target[1]) : ""
    headers = [:]
    while let line = lines.next() {
      guard let colon = line.firstIndex(of: ":") else { return nil }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].trimmingSpaces
      headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }
  }

  /// The value of query parameter `name` (percent-decoded), if present.
  func queryValue(_ name: String) -> String? {
    for pair in query.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      if parts[0] == name {
        return parts.count > 1 ? PercentDecoding.decode(String(parts[1])) : ""
      }
    }
    return nil
  }

  /// The value of cookie `name`, if the request carries it.
  func cookie(_ name: String) -> String? {
    guard let header = headers["cookie"] else { return nil }
    for pair in header.split(separator: ";") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      if parts[0].trimmingSpaces == name, parts.count > 1 { return parts[1].trimmingSpaces }
    }
    return nil
  }
}

extension Substring {
  var trimmingSpaces: String {
    String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
  }
}

/// Strict percent-decoding: nil for a malformed escape or bytes that are
/// not UTF-8. Safe on any thread.
enum PercentDecoding {
  static func decode(_ text: String) -> String? {
    var bytes = [UInt8]()
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "%") {
        guard let high = iterator.next().flatMap(hexValue),
          let low = iterator.next().flatMap(hexValue)
        else { return nil }
        bytes.append(high << 4 | low)
      } else if byte == UInt8(ascii: "+") {
        bytes.append(UInt8(ascii: " "))
      } else {
        bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
