import Testing

@testable import DuplexIO

@Suite struct DeviceRouteTests {
  @Test(arguments: [
    ("jack", DeviceRoute.jack(.automatic)),
    ("jack:", .jack(.automatic)),
    ("jack:none", .jack(.none)),
    ("jack:system:capture_[12]", .jack(.named("system:capture_[12]"))),
    ("pw", .pipeWire(.automatic)),
    ("pw:none", .pipeWire(.none)),
    ("pw:alsa_output.pci-0000_00_1f.3", .pipeWire(.named("alsa_output.pci-0000_00_1f.3"))),
    ("default", .alsa("default")),
    ("hw:1,0", .alsa("hw:1,0")),
    ("plug:jack", .alsa("plug:jack")),
    ("pulse:spk.monitor", .alsa("pulse:spk.monitor")),
    ("jackin", .alsa("jackin")),
    ("pipewire", .alsa("pipewire")),
  ])
  func aNameChoosesItsBackend(name: String, route: DeviceRoute) {
    #expect(DeviceRoute(name) == route)
  }

  @Test func captureAndPlaybackMustShareAServer() throws {
    var configuration = DuplexConfiguration(.duplex)
    configuration.captureDevice = "jack"
    configuration.playbackDevice = "default"
    #expect(throws: DuplexError.self) { try DeviceBackend.choose(configuration) }
    configuration.playbackDevice = "jack:none"
    #expect(try DeviceBackend.choose(configuration) == .jack(.automatic))
    // A bus that is off does not count.
    configuration.direction = .capture
    configuration.playbackDevice = "pw"
    #expect(try DeviceBackend.choose(configuration) == .jack(.automatic))
  }

  @Test func portsPairOneToOneWrapAndAMonoOutputFansOut() {
    #expect(portPairs(clientPorts: 2, serverPorts: 2, fansOut: false).map(\.1) == [0, 1])
    #expect(portPairs(clientPorts: 4, serverPorts: 2, fansOut: false).map(\.1) == [0, 1, 0, 1])
    #expect(portPairs(clientPorts: 1, serverPorts: 2, fansOut: false).map(\.1) == [0])
    #expect(portPairs(clientPorts: 1, serverPorts: 2, fansOut: true).map(\.1) == [0, 1])
    #expect(portPairs(clientPorts: 2, serverPorts: 0, fansOut: true).isEmpty)
  }

  @Test func theDefaultDeviceIsReadFromTheMetadataJSON() {
    #expect(PipeWireConnection.jsonName(#"{ "name": "alsa_output.usb" }"#) == "alsa_output.usb")
    #expect(PipeWireConnection.jsonName(#"{"name":"spk"}"#) == "spk")
    #expect(PipeWireConnection.jsonName(#"{ "other": 1 }"#) == nil)
  }

  /// Where a server is not running, opening its device is one error that
  /// names the server, not a hang or a crash.
  @Test func aJackServerThatIsNotRunningIsReportedAsUnreachable() throws {
    var configuration = DuplexConfiguration(.playback)
    configuration.playbackDevice = "jack"
    let backend = JackBackend(serverName: "micloop-no-such-server")
    do {
      _ = try backend.open(configuration)
      Issue.record("opened a JACK server that does not run")
    } catch {
      #expect(error.kind == .serverUnreachable || error.kind == .libraryUnavailable)
      #expect(
        error.description.contains("micloop-no-such-server") || error.kind == .libraryUnavailable)
    }
  }
}
