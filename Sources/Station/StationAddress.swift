/// Where a station listens: an IPv4 address and a port (0 picks a free
/// one). Parsed from `HOST:PORT`, `:PORT` or `PORT`; a bare port listens on
/// the loopback address. Safe on any thread.
public struct StationAddress: Sendable, Equatable, CustomStringConvertible {
  /// The address a bare port listens on: this machine only.
  public static let loopbackHost = "127.0.0.1"

  public var host: String
  public var port: UInt16

  public init(host: String = loopbackHost, port: UInt16) {
    self.host = host
    self.port = port
  }

  /// Parses `HOST:PORT`, `:PORT` or `PORT`; `localhost` is 127.0.0.1.
  /// Returns nil for anything else (a host that is not an IPv4 address,
  /// a port outside 0...65535).
  public init?(parsing text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    let hostText: Substring
    let portText: Substring
    switch parts.count {
    case 1:
      hostText = ""
      portText = parts[0]
    case 2:
      hostText = parts[0]
      portText = parts[1]
    default: return nil
    }
    guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
      portText.count <= 5, let port = UInt16(portText)
    else { return nil }
    let host = hostText.isEmpty || hostText == "localhost" ? Self.loopbackHost : String(hostText)
    guard Self.isIPv4(host) else { return nil }
    self.init(host: host, port: port)
  }

  /// True for 127.0.0.0/8: only this machine can connect.
  public var isLoopback: Bool { host.hasPrefix("127.") }

  public var description: String { "\(host):\(port)" }

  static func isIPv4(_ text: String) -> Bool {
    let octets = text.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4
      && octets.allSatisfy {
        !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber }
          && Int($0).map { (0...255).contains($0) } == true
      }
  }
}
