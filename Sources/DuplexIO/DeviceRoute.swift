/// What a device name chooses: an ALSA device, ports of a JACK server, or
/// a node of the PipeWire graph. Any thread.
///
/// | name | backend | connects to |
/// |---|---|---|
/// | `jack` | JACK | the physical ports |
/// | `jack:none` | JACK | nothing (connect it yourself: `jack_connect`, a patchbay) |
/// | `jack:PATTERN` | JACK | the ports whose names match the regular expression, as `jack_get_ports` matches |
/// | `pw` | PipeWire | the default source (capture) and sink (playback) |
/// | `pw:none` | PipeWire | nothing (`pw-link`, a patchbay) |
/// | `pw:NODE` | PipeWire | the node named NODE (`node.name`): a source's outputs, or a sink's monitor for capture; a sink's inputs for playback |
/// | anything else | ALSA | the PCM of that name (`default`, `hw:1,0`, `pulse` …) |
///
/// The ALSA `jack` plugin's PCM stays reachable as `plug:jack`.
public enum DeviceRoute: Sendable, Equatable {
  case alsa(String)
  case jack(PortTarget)
  case pipeWire(PortTarget)

  /// What a native backend's ports connect to.
  public enum PortTarget: Sendable, Equatable {
    /// The server's choice: JACK's physical ports, PipeWire's default source and sink.
    case automatic
    /// Nothing: ports are left for the user to connect.
    case none
    /// Ports matching a JACK port-name pattern, or the PipeWire node of that name.
    case named(String)
  }

  public init(_ name: String) {
    if let target = Self.target(name, prefix: "jack") {
      self = .jack(target)
    } else if let target = Self.target(name, prefix: "pw") {
      self = .pipeWire(target)
    } else {
      self = .alsa(name)
    }
  }

  private static func target(_ name: String, prefix: String) -> PortTarget? {
    if name == prefix { return .automatic }
    guard name.hasPrefix(prefix + ":") else { return nil }
    let rest = String(name.dropFirst(prefix.count + 1))
    switch rest {
    case "": return .automatic
    case "none": return PortTarget.none
    default: return .named(rest)
    }
  }

  /// The server family, for checking that capture and playback share one.
  var family: String {
    switch self {
    case .alsa: return "ALSA"
    case .jack: return "jack"
    case .pipeWire: return "pw"
    }
  }
}

extension DuplexConfiguration {
  /// The routes of the enabled buses: (capture, playback), `nil` when off.
  var routes: (capture: DeviceRoute?, playback: DeviceRoute?) {
    (
      isInputEnabled ? DeviceRoute(captureDevice) : nil,
      isOutputEnabled ? DeviceRoute(playbackDevice) : nil
    )
  }

  /// The name to report for the unit's devices: one name, or "capture → playback".
  var deviceDescription: String {
    switch (isInputEnabled, isOutputEnabled) {
    case (true, true):
      return captureDevice == playbackDevice
        ? captureDevice : "\(captureDevice) → \(playbackDevice)"
    case (true, false): return captureDevice
    default: return playbackDevice
    }
  }
}

/// Pairs a client's ports with the server's ports they connect to: port
/// `i` with the server's port `i` (wrapping when the client has more), and
/// a mono output with every one of them (a mono signal is heard on both
/// speakers). Returns (client index, server index) pairs.
func portPairs(clientPorts: Int, serverPorts: Int, fansOut: Bool) -> [(Int, Int)] {
  guard clientPorts > 0, serverPorts > 0 else { return [] }
  if fansOut && clientPorts == 1 { return (0..<serverPorts).map { (0, $0) } }
  return (0..<clientPorts).map { ($0, $0 % serverPorts) }
}
