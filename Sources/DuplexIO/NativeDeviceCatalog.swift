internal import CJack

#if canImport(Glibc)
  import Glibc
#endif

extension DeviceCatalog {
  /// Every device name a unit can open: ALSA's PCMs, then the ports of a
  /// running JACK server and the audio nodes of a running PipeWire server
  /// (none of a server that is not running or whose library is missing).
  /// An ALSA PCM whose name now chooses a native backend (the `jack`
  /// plugin's PCM) is listed as reached through `plug:`. Control thread.
  public static func allDevices() -> [DeviceInfo] {
    let alsa = devices().map { device in
      guard case .alsa = DeviceRoute(device.name) else {
        var renamed = device
        renamed.name = "plug:\(device.name)"
        return renamed
      }
      return device
    }
    return alsa + jackPorts() + pipeWireNodes()
  }

  /// The audio ports of the JACK server (`JACK_DEFAULT_SERVER`), as
  /// `jack:PORT` names: outputs capture, inputs play. Empty when no server
  /// runs or libjack is missing.
  public static func jackPorts() -> [DeviceInfo] {
    guard let api = try? JackLibrary.load().api else { return [] }
    var status = JackStatus(0)
    guard let client = micloop_jack_open(api, "micloop-devices", nil, &status) else { return [] }
    defer { _ = api.pointee.jack_client_close(client) }
    guard let list = api.pointee.jack_get_ports(client, nil, micloop_jack_audio_type(), 0) else {
      return []
    }
    defer { api.pointee.jack_free(UnsafeMutableRawPointer(mutating: list)) }
    let server = JackLibrary.serverName
    var ports = [DeviceInfo]()
    var index = 0
    while let name = list[index] {
      index += 1
      guard let port = api.pointee.jack_port_by_name(client, name) else { continue }
      let flags = UInt32(api.pointee.jack_port_flags(port))
      let isOutput = flags & JackPortIsOutput.rawValue != 0
      let isPhysical = flags & JackPortIsPhysical.rawValue != 0
      ports.append(
        DeviceInfo(
          name: "jack:\(String(cString: name))",
          description:
            "JACK server '\(server)': \(isPhysical ? "physical " : "")\(isOutput ? "output" : "input") port",
          canCapture: isOutput, canPlay: !isOutput))
    }
    return ports
  }

  /// The audio nodes of the PipeWire server (sources, sinks and their
  /// monitors, duplex devices), as `pw:NODE` names. Empty when no server
  /// runs or libpipewire is missing.
  public static func pipeWireNodes() -> [DeviceInfo] {
    guard let connection = try? PipeWireConnection(realtime: false, device: "pw") else {
      return []
    }
    defer { connection.close() }
    var nodes = [(UInt32, DeviceInfo)]()
    for (id, global) in connection.snapshot() where global.type == PipeWireConnection.nodeType {
      guard let name = global["node.name"], let kind = global["media.class"],
        kind.hasPrefix("Audio/")
      else { continue }
      let isSink = kind.hasPrefix("Audio/Sink")
      let isSource = kind.hasPrefix("Audio/Source") || kind.hasPrefix("Audio/Duplex")
      let description = global["node.description"] ?? global["node.nick"] ?? name
      nodes.append(
        (
          id,
          DeviceInfo(
            name: "pw:\(name)",
            description:
              "PipeWire \(kind): \(description)\(isSink ? " (capture: its monitor)" : "")",
            canCapture: isSink || isSource, canPlay: isSink || kind.hasPrefix("Audio/Duplex"))
        ))
    }
    return nodes.sorted { $0.0 < $1.0 }.map(\.1)
  }
}
