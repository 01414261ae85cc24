import Foundation
import TestSupport
import Testing

/// The live meter as a person sees it: `micloop meter` runs in a tmux pane
/// 80 columns wide while the virtual microphone plays silence, speech,
/// silence and a tone; the test reads the screen.
@Suite(
  .serialized, .tags(.live, .pulseaudio),
  .needsSoundServer) struct LiveMeterScreenTests
{
  /// One captured screen of the pane.
  struct Screen {
    var rows: [String]
    var barRows: [String] { rows.filter { $0.contains("[") && $0.contains("]") } }
    /// The status line's numbers: stream time and peak.
    var peak: Double? { number(after: " peak ") }
    var isTalking: Bool { rows.contains { $0.contains(" s  TALK ") } }
    var isSilent: Bool { rows.contains { $0.contains(" s  silence ") } }

    func number(after label: String) -> Double? {
      for row in rows {
        guard let range = row.range(of: label) else { continue }
        return Double(row[range.upperBound...].split(separator: " ").first ?? "")
      }
      return nil
    }
  }

  @Test func theScreenShowsBarsScaleHoldMarkAndTalk() throws {
    let devices = try VirtualDevices()
    let directory = try MicLoopBinary.temporaryDirectory()
    let speech = directory.appendingPathComponent("speech.wav").path
    try MicLoopBinary.shell([
      "espeak-ng", "-w", speech, "Testing the microphone, one two three. Can you hear me now?",
    ])
    // Lead silence, speech at its own level, 5 s of silence, then a 1 kHz
    // tone peaking at −20 dBFS, as one stream started before the meter.
    let programme = directory.appendingPathComponent("programme.wav").path
    let parts = try [
      ("lead", ["-n", "-r", "48000", "-c", "1"], ["trim", "0", "3"]),
      ("speech", [speech], ["rate", "48000", "gain", "-n", "-6"]),
      ("gap", ["-n", "-r", "48000", "-c", "1"], ["trim", "0", "5"]),
      ("tone", ["-n", "-r", "48000", "-c", "1"], ["synth", "4", "sine", "1000", "vol", "0.1"]),
      ("tail", ["-n", "-r", "48000", "-c", "1"], ["trim", "0", "3"]),
    ].map { name, input, effects throws in
      let path = directory.appendingPathComponent("\(name).wav").path
      try MicLoopBinary.shell(["sox", "-V1"] + input + ["-b", "16", path] + effects)
      return path
    }
    try MicLoopBinary.shell(["sox", "-V1"] + parts + [programme])
    let player = try devices.play(programme, into: "mic")
    defer { player.signal(SIGTERM) }

    let tmux = TmuxPane(environment: devices.environment)
    defer { tmux.kill() }
    try tmux.start(
      [
        MicLoopBinary.path, "meter", "-D", "pulse:mic.monitor", "--channels", "2", "--duration",
        "40",
      ],
      columns: 80, rows: 24)
    var screens = [Screen]()
    var sawTalkThenSilence = false
    let deadline = Date().addingTimeInterval(40)
    while Date() < deadline {
      usleep(100_000)
      guard let rows = tmux.capture() else { break }
      let screen = Screen(rows: rows)
      guard screen.peak != nil || screen.isSilent || screen.isTalking else { continue }
      screens.append(screen)
      if screens.contains(where: \.isTalking) && screen.isSilent { sawTalkThenSilence = true }
      if sawTalkThenSilence, let peak = screen.peak, abs(peak - -20) < 0.3 {
        // The tone has held its peak for a while: read that screen a second later.
        usleep(1_000_000)
        if let later = tmux.capture() { screens.append(Screen(rows: later)) }
        break
      }
    }
    let last = try #require(screens.last, "nothing on the screen")
    #expect(sawTalkThenSilence, "TALK then silence never showed: \(screens.map(\.rows))")
    #expect(screens.contains { $0.isSilent && !$0.isTalking })

    // Two channel bars, the talk row and a scale, all inside 80 columns.
    let bars = last.barRows
    #expect(bars.count == 3, "\(last.rows)")
    #expect(
      bars.filter { $0.hasPrefix("   1[") || $0.hasPrefix("   2[") }.count == 2, "\(last.rows)")
    #expect(last.rows.allSatisfy { $0.count < 80 })
    let scale = try #require(last.rows.first { $0.contains("-60") && $0.contains("dBFS") })
    // The scale puts each label in the first cell above its level: -20 dB
    // starts 40 cells into a 60-cell bar that starts in column 5.
    let scaleColumn = try #require(column(of: "-20", in: scale))
    #expect(scaleColumn == 5 + 40, "\(scale)")
    for bar in bars.prefix(2) {
      let hold = try #require(column(of: "|", in: bar), "no hold mark in \(bar)")
      // The −20 dBFS peak fills 40 cells; the mark is in the 40th.
      #expect(abs(hold - (5 + 39)) <= 1, "\(bar)")
    }
    let peak = try #require(last.peak)
    #expect(abs(peak - -20) < 0.3, "\(last.rows)")
  }

  private func column(of text: String, in row: String) -> Int? {
    row.range(of: text).map { row.distance(from: row.startIndex, to: $0.lowerBound) }
  }
}

/// A private tmux server with one pane, for reading what a program draws.
final class TmuxPane {
  private let socket = "micloop-test-\(UUID().uuidString.prefix(8))"
  private let environment: [String: String]

  init(environment: [String: String]) { self.environment = environment }

  func start(_ command: [String], columns: Int, rows: Int) throws {
    let status = try VirtualDevices.wait(
      for: [
        "tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "meter", "-x",
        String(columns), "-y", String(rows), "--",
      ] + command, environment: environment)
    guard status == 0 else {
      throw VirtualDevices.StartFailure(description: "tmux could not start (status \(status))")
    }
  }

  /// The pane's rows as text, trailing blanks removed; `nil` once the pane is gone.
  func capture() -> [String]? {
    guard
      let result = try? SpawnedProcess(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", "meter"], environment: environment
      ).result(), result.status == 0
    else { return nil }
    return result.output.split(separator: "\n", omittingEmptySubsequences: false).map {
      String($0.reversed().drop(while: { $0 == " " }).reversed())
    }
  }

  func kill() {
    _ = try? VirtualDevices.wait(
      for: ["tmux", "-L", socket, "kill-server"], environment: environment)
  }
}
