import Foundation
import TestSupport

/// A private PipeWire server (its own D-Bus session bus, `pipewire` and
/// `wireplumber`, a fresh `XDG_RUNTIME_DIR`) with two null sinks, "mic"
/// and "spk", and a private ALSA configuration that loads the `pipewire`
/// plugin unpacked by `make setup` (the Debian package conflicts with
/// pulseaudio). Play to `pipewire:NODE=mic`; capture its monitor from the
/// same device with `stream.capture.sink` set (`captureEnvironment`). Each
/// test starts its own and stops it; a server that cannot start fails the test.
final class PipeWireServer {
  let environment: [String: String]
  private var processes = [SpawnedProcess]()

  /// Where `make setup` unpacks the ALSA plugin of `pipewire-alsa`.
  static let pluginRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent(".build/pipewire-alsa").path

  init() throws {
    let directory = try MicLoopBinary.temporaryDirectory()
    let plugins =
      SystemLibrary.multiarchFolders(under: Self.pluginRoot, "alsa-lib").first
      ?? Self.pluginRoot + "/usr/lib/alsa-lib"
    let definitions = Self.pluginRoot + "/usr/share/alsa/alsa.conf.d/50-pipewire.conf"
    guard FileManager.default.fileExists(atPath: plugins + "/libasound_module_pcm_pipewire.so"),
      let pcm = try? String(contentsOfFile: definitions, encoding: .utf8)
    else {
      throw VirtualDevices.StartFailure(
        description:
          "the pipewire ALSA plugin is not unpacked in \(Self.pluginRoot); run make setup")
    }
    let configuration = directory.appendingPathComponent("asound.conf").path
    try """
    pcm_type.pipewire { lib "\(plugins)/libasound_module_pcm_pipewire.so" }
    ctl_type.pipewire { lib "\(plugins)/libasound_module_ctl_pipewire.so" }
    \(pcm)
    """.write(toFile: configuration, atomically: true, encoding: .utf8)
    let runtime = directory.appendingPathComponent("runtime")
    try FileManager.default.createDirectory(
      at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = runtime.path
    environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtime.path)/bus"
    environment["ALSA_CONFIG_PATH"] = "/usr/share/alsa/alsa.conf:\(configuration)"
    environment.removeValue(forKey: "PULSE_SERVER")
    self.environment = environment
    processes.append(
      try SpawnedProcess(
        [
          "dbus-daemon", "--session", "--nofork", "--nopidfile",
          "--address=unix:path=\(runtime.path)/bus",
        ], environment: environment))
    try waitFor(["test", "-S", "\(runtime.path)/bus"], what: "its D-Bus session bus")
    processes.append(try SpawnedProcess(["pipewire"], environment: environment))
    try waitFor(["pw-cli", "info", "0"], what: "pipewire")
    processes.append(try SpawnedProcess(["wireplumber"], environment: environment))
    for sink in ["mic", "spk"] {
      try waitFor(
        [
          "pw-cli", "create-node", "adapter",
          "{ factory.name=support.null-audio-sink node.name=\(sink) media.class=Audio/Sink audio.position=[MONO] audio.rate=48000 object.linger=true }",
        ], what: "the \(sink) sink")
    }
    // WirePlumber links streams once it runs: wait until it lists the sinks.
    try waitFor(["sh", "-c", "wpctl status | grep -q spk"], what: "wireplumber")
  }

  deinit { stop() }

  func stop() {
    for process in processes.reversed() {
      process.signal(SIGKILL)
      process.wait()
    }
    processes = []
  }

  /// The environment for a process that captures a sink's monitor.
  var captureEnvironment: [String: String] {
    var copy = environment
    copy["PIPEWIRE_PROPS"] = "{ stream.capture.sink=true }"
    return copy
  }

  /// Starts micloop against this server without waiting; `capturesMonitor`
  /// makes its capture stream read a sink's monitor.
  func startMicloop(_ arguments: [String], capturesMonitor: Bool = false) throws -> SpawnedProcess {
    try SpawnedProcess(
      [MicLoopBinary.path] + arguments,
      environment: capturesMonitor ? captureEnvironment : environment)
  }

  /// Adds a sink (or a source) on ALSA's `null` device that reports
  /// `internalLatency` frames of latency of its own (`latency.internal.rate`):
  /// like a sound card, its ports say one quantum plus that much.
  func addALSANullNode(_ name: String, isSink: Bool, internalLatency: Int) throws {
    let factory = isSink ? "api.alsa.pcm.sink" : "api.alsa.pcm.source"
    let mediaClass = isSink ? "Audio/Sink" : "Audio/Source"
    try waitFor(
      [
        "pw-cli", "create-node", "adapter",
        "{ factory.name=\(factory) api.alsa.path=\"null\" node.name=\(name) media.class=\(mediaClass) audio.channels=1 audio.position=[MONO] audio.rate=48000 latency.internal.rate=\(internalLatency) object.linger=true }",
      ], what: "the ALSA node \(name)")
  }

  /// Links the output port `output` to the input port `input` (names as
  /// `pw-link -o`/`-i` list them), waiting up to 5 s for both to exist.
  func link(_ output: String, _ input: String) throws {
    try waitFor(["pw-link", output, input], what: "a link \(output) → \(input)")
  }

  /// The latency a port reports in the given direction ("Input": playback,
  /// "Output": capture) in frames at `quantum`, as `pw-dump` shows its
  /// Latency parameter: quanta × quantum + frames (+ ns at 48 kHz).
  func portLatency(_ port: String, direction: String, quantum: Int) throws -> Int? {
    let dump = try SpawnedProcess(["pw-dump"], environment: environment).result().output
    let objects = try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [[String: Any]]
    for object in objects ?? [] {
      guard let info = object["info"] as? [String: Any],
        let properties = info["props"] as? [String: Any],
        properties["object.path"] as? String == port,
        let latencies = (info["params"] as? [String: Any])?["Latency"] as? [[String: Any]]
      else { continue }
      for latency in latencies where latency["direction"] as? String == direction {
        let quanta = (latency["maxQuantum"] as? Double) ?? 0
        let frames = (latency["maxRate"] as? Int) ?? 0
        let nanoseconds = (latency["maxNs"] as? Int) ?? 0
        return Int(quanta * Double(quantum)) + frames + nanoseconds * 48_000 / 1_000_000_000
      }
    }
    return nil
  }

  private func waitFor(_ command: [String], what: String) throws {
    for _ in 0..<50 {
      if try VirtualDevices.wait(for: command, environment: environment) == 0 { return }
      usleep(100_000)
    }
    stop()
    throw VirtualDevices.StartFailure(description: "the private PipeWire server: no \(what)")
  }
}
