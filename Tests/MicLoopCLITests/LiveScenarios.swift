import Foundation
import Testing

/// The live scenarios every sound server runs, written once over
/// `SoundServer`: each attempt starts a fresh server (`makeServer`), and
/// an attempt that fell short because audio was reported lost is made
/// once more (`LiveAttempts`).
enum LiveScenarios {
  /// A 1 kHz tone at −10 dBFS played into the virtual microphone: `meter`
  /// reads its peak within 0.05 dB.
  static func toneIsMeteredAtItsLevel(
    in directory: URL, makeServer: () throws -> some SoundServer
  ) throws {
    let tone = directory.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth", "30", "sine",
      "1000", "vol", "0.316228", "pad", "1.5", "0",
    ])
    let (result, label, log) = try LiveAttempts.run {
      let server = try makeServer()
      let meter = try server.startMicloop(
        ["meter"] + server.microphone + ["--duration", "60", "--json"], captures: true)
      defer { meter.signal(SIGKILL) }
      #expect(meter.waitForOutput("\"start\""), "\(server.label): the meter did not start")
      let player = try server.feed(tone, to: meter)
      defer { player.signal(SIGKILL) }
      // Two seconds of the tone once it arrives, then the summary.
      meter.waitForOutput(timeout: 30) { $0.contains("\"peak_dbfs\":-") }
      usleep(2_000_000)
      meter.signal(SIGINT)
      let result = meter.result()
      let peak = result.lastJSONObject?["peak_dbfs"] as? Double
      let passed = result.status == 0 && peak.map { abs($0 - -10) < 0.05 } == true
      return ending(result, passed: passed, player: player, server: server)
    }
    #expect(result.status == 0, "\(label): \(result.errorOutput)\n\(log)")
    let peak = try #require(
      result.lastJSONObject?["peak_dbfs"] as? Double, "\(label): \(result.output)")
    #expect(abs(peak - -10) < 0.05, "\(label): peak \(peak) dBFS")
  }

  /// A DTMF key sequence and calls of other plans (`calls`: plan and
  /// text) played into the virtual microphone are decoded live, every key
  /// and every call exact.
  static func callsAreDecodedLive(
    in directory: URL, calls messages: [(plan: String, text: String)] = [("ccir", "12335")],
    makeServer: () throws -> some SoundServer
  ) throws {
    let calls = directory.appendingPathComponent("calls.wav").path
    // 2.5 s of silence first: the player's port is connected (JACK) and a
    // capture that starts on a loaded machine may overrun in its first
    // half second, which must not fall on a tone.
    let length = try VirtualDevices.programme(
      [("dtmf", "123#")] + messages, lead: 2.5, tail: 1, at: calls)
    let plans = (["dtmf"] + messages.map(\.plan)).joined(separator: ",")
    let texts = messages.map(\.text)
    let (result, label, log) = try LiveAttempts.run {
      let server = try makeServer()
      let tones = try server.startMicloop(
        ["tones", "--plan", plans] + server.microphone + [
          "--json", "--duration", String(length + 2),
        ], captures: true)
      defer { tones.signal(SIGKILL) }
      #expect(tones.waitForOutput("\"start\""), "\(server.label): tones did not start")
      let player = try server.feed(calls, to: tones)
      defer { player.signal(SIGKILL) }
      let result = tones.result()
      let passed = TonesCommandTests.heard(result.output, dtmf: "123#", texts: texts)
      return ending(result, passed: passed, player: player, server: server)
    }
    #expect(result.status == 0, "\(label): \(result.errorOutput)\n\(log)")
    let events = TonesCommandTests.events(result.output)
    #expect(
      TonesCommandTests.symbols(events, plan: "dtmf") == "123#", "\(label): \(result.output)")
    #expect(TonesCommandTests.texts(events) == texts, "\(label): \(result.output)")
  }

  /// Ends an attempt: stops the player, and returns micloop's result with
  /// the server's name and log for the test, whether it passed, and what
  /// `LiveAttempts` reads for a reported loss.
  private static func ending(
    _ result: MicLoopBinary.Result, passed: Bool, player: SpawnedProcess, server: some SoundServer
  ) -> (result: (MicLoopBinary.Result, String, String), passed: Bool, output: String) {
    player.signal(SIGTERM)
    let log = server.log
    return ((result, server.label, log), passed, result.output + player.result().errorOutput + log)
  }
}
