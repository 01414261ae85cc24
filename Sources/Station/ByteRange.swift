/// One range of an HTTP `Range: bytes=…` header, resolved against a file's
/// size (RFC 9110 §14.1.2): `a-b`, `a-` or `-n`. Several ranges are not
/// offered; the first is served. Safe on any thread.
struct ByteRange: Equatable {
  var first: Int64
  var last: Int64
  var count: Int64 { last - first + 1 }

  enum Resolution: Equatable {
    /// No usable Range header: send the whole file (200).
    case whole
    /// A satisfiable range (206).
    case part(ByteRange)
    /// A range outside the file (416).
    case unsatisfiable
  }

  static func resolve(_ header: String?, size: Int64) -> Resolution {
    guard let header, header.hasPrefix("bytes=") else { return .whole }
    let spec = header.dropFirst("bytes=".count).split(separator: ",").first ?? ""
    let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return .whole }
    let start = parts[0].trimmingSpaces
    let end = parts[1].trimmingSpaces
    if start.isEmpty {
      guard let suffix = Int64(end), suffix > 0 else { return .unsatisfiable }
      guard size > 0 else { return .unsatisfiable }
      return .part(ByteRange(first: max(0, size - suffix), last: size - 1))
    }
    guard let first = Int64(start), first >= 0 else { return .whole }
    guard first < size else { return .unsatisfiable }
    if end.isEmpty { return .part(ByteRange(first: first, last: size - 1)) }
    guard let last = Int64(end), last >= first else { return .whole }
    return .part(ByteRange(first: first, last: min(last, size - 1)))
  }
}
