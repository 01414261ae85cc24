import Foundation
import Testing

/// The live tests on PipeWire: micloop's ALSA devices through the
/// `pipewire` plugin on a private server with two null sinks.
@Suite(.serialized) struct PipeWireLiveTests {
  func peak(_ result: MicLoopBinary.Result) throws -> Double {
    let last = result.output.split(separator: "\n").last ?? ""
    let summary = try #require(
      try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(result.output)")
    return try #require(summary["peak_dbfs"] as? Double, "\(result.output)")
  }

  @Test func aTonePlayedIntoASinkIsMeteredFromItsMonitor() throws {
    let server = try PipeWireServer()
    let tone = try server.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "30", "-D", "pipewire:NODE=mic",
    ])
    defer { tone.signal(SIGKILL) }
    #expect(tone.waitForOutput("Playing"))
    let meter = try server.startMicloop(
      ["meter", "-D", "pipewire:NODE=mic", "--duration", "3", "--json"], capturesMonitor: true)
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let level = try peak(result)
    #expect(abs(level - -10) < 0.05, "peak \(level) dBFS")
  }

  @Test func loopbackOnPipeWirePassesTheMicrophoneAtItsGain() throws {
    let server = try PipeWireServer()
    let tone = try server.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "30", "-D", "pipewire:NODE=mic",
    ])
    defer { tone.signal(SIGKILL) }
    let loop = try server.startMicloop(
      [
        "loopback", "--capture", "pipewire:NODE=mic", "--playback", "pipewire:NODE=spk",
        "--gain-db", "-6", "--period", "1024", "--periods", "4", "--duration", "30",
      ], capturesMonitor: true)
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("Hz, capture"))
    let meter = try server.startMicloop(
      ["meter", "-D", "pipewire:NODE=spk", "--duration", "3", "--json"], capturesMonitor: true)
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let level = try peak(result)
    #expect(abs(level - -16) < 0.05, "peak \(level) dBFS")
    loop.signal(SIGINT)
    let looped = loop.result()
    #expect(looped.status == 0, "\(looped.errorOutput)")
  }
}
