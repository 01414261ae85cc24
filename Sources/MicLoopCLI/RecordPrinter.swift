import Console
import DuplexIO
import Recording
import TextFormatting

/// Prints what a recording session reports: JSON Lines (`--json`, the
/// index's own lines), or a line of text per file, blip, gap, xrun and
/// deletion with, on a terminal, a status line redrawn below them. Control
/// thread.
final class RecordPrinter {
  enum Mode { case terminal, lines, json }
  let mode: Mode
  let usesLocalTime: Bool
  private var sampleRate = 48_000.0
  private var clock: StreamClock?
  private var statusShown = false
  private var lastStatus = -Double.infinity
  /// Seconds between redraws of the status line.
  static let statusInterval = 0.2
  private(set) var files = 0
  private(set) var blips = 0
  private(set) var gaps = 0
  private(set) var xruns = 0

  init(json: Bool, usesLocalTime: Bool) {
    mode = json ? .json : (StandardOutput.isTerminal ? .terminal : .lines)
    self.usesLocalTime = usesLocalTime
  }

  /// The recorder's rate and clock, for times in the lines.
  func attach(sampleRate: Double, clock: StreamClock) {
    self.sampleRate = sampleRate
    self.clock = clock
  }

  /// One event of the session.
  /// One event of the session; `line` is its JSON line when the caller
  /// already encoded it.
  func show(_ event: RecorderEvent, line: String? = nil) {
    if case .recording = event { files += 1 }
    if case .blip = event { blips += 1 }
    if case .gap = event { gaps += 1 }
    if case .xrun = event { xruns += 1 }
    // A problem is always one line on standard error too.
    if case .problem(let problem) = event, mode == .json {
      StandardOutput.writeError("micloop: record: \(problem.commandLineMessage)")
    }
    if mode == .json {
      guard let clock else { return }
      StandardOutput.write(line ?? event.json(sampleRate: sampleRate, clock: clock), flush: true)
      return
    }
    guard let line = text(event) else { return }
    clearStatus()
    StandardOutput.write(line, flush: true)
  }

  /// A line of text for `event`, or nothing for events only JSON shows.
  private func text(_ event: RecorderEvent) -> String? {
    func clockTime(_ frame: Int64) -> String {
      guard let clock else { return "" }
      return wallTime(clock.time(ofFrame: frame))
    }
    func seconds(_ frames: Int64) -> String {
      DecimalFormatting.fixed(Double(frames) / sampleRate, places: 2) + " s"
    }
    switch event {
    case .sessionStarted(let session):
      return
        "Recording \(session.source) at \(Int(session.sampleRate)) Hz, \(session.channelCount) channel\(session.channelCount == 1 ? "" : "s"), \(session.encoding); trigger \(session.startOn.isEmpty ? session.trigger : session.startOn.joined(separator: ", ") + " then " + session.trigger)\(session.subTone.map { " under CTCSS \(DecimalFormatting.fixed($0, places: 1)) Hz" } ?? ""); index \(session.indexName)"
    case .recording(let file):
      let tags =
        file.tags.isEmpty ? "" : "  [" + file.tags.map(\.summary).joined(separator: ", ") + "]"
      let part = file.part > 1 ? "  part \(file.part)" : ""
      return
        "\(wallTime(file.start))  ● \(file.name)  \(seconds(file.frames))  \(file.trigger)\(part)\(tags)"
    case .blip(let start, let frames, let trigger):
      return "\(clockTime(start))  · blip \(seconds(frames)) (\(trigger)), no file"
    case .gap(let start, let frames, let reason, let detail):
      return
        "\(clockTime(start))  ✗ gap \(seconds(frames)): \(reason.rawValue)\(detail.map { " (\($0))" } ?? "")"
    case .xrun(let frame, let lost):
      return
        "\(clockTime(frame))  ! capture xrun\(lost.map { ", \($0) frames lost" } ?? "")"
    case .deleted(let name, _, let reason):
      return "deleted \(name) (\(reason))"
    case .problem(let problem):
      StandardOutput.writeError("micloop: record: \(problem.commandLineMessage)")
      return nil
    case .sessionEnded(let summary):
      let total = Double(summary.frames) / sampleRate
      return
        "Recorded \(summary.files) file\(summary.files == 1 ? "" : "s") (\(DecimalFormatting.fixed(Double(summary.recordedFrames) / sampleRate, places: 2)) s) in \(DecimalFormatting.fixed(total, places: 2)) s; \(summary.blips) blip\(summary.blips == 1 ? "" : "s"), \(summary.gaps) gap\(summary.gaps == 1 ? "" : "s") (\(DecimalFormatting.fixed(Double(summary.gapFrames) / sampleRate, places: 2)) s), \(summary.xruns) xrun\(summary.xruns == 1 ? "" : "s")\(summary.deleted > 0 ? ", \(summary.deleted) deleted" : "")"
    case .opened, .idle, .tone:
      return nil
    }
  }

  /// `12:00:03.417` in UTC (or local time).
  private func wallTime(_ seconds: Double) -> String {
    let time = WallClockTime(epochSeconds: seconds, local: usesLocalTime)
    return time.iso8601.split(separator: "T").last.map(String.init) ?? time.iso8601
  }

  /// Redraws the status line (terminal only), at most five times a second.
  func status(recorder: Recorder, now: Double) {
    guard mode == .terminal, now - lastStatus >= Self.statusInterval else { return }
    lastStatus = now
    let state: String
    if let name = recorder.openFileName {
      state = "● REC \(name) \(DecimalFormatting.fixed(recorder.openFileSeconds, places: 1)) s"
    } else {
      state = "○ waiting"
    }
    let elapsed = DecimalFormatting.fixed(Double(recorder.timelineFrames) / sampleRate, places: 1)
    let megabytes = DecimalFormatting.fixed(Double(recorder.diskUsage) / 1_048_576, places: 1)
    let line =
      "\(state)  |  \(elapsed) s, \(files) file\(files == 1 ? "" : "s"), \(blips) blip\(blips == 1 ? "" : "s"), \(gaps) gap\(gaps == 1 ? "" : "s"), \(xruns) xrun\(xruns == 1 ? "" : "s"), \(megabytes) MiB"
    let columns = StandardOutput.terminalColumns() ?? 80
    StandardOutput.writeRaw("\r\u{1B}[2K" + String(line.prefix(max(10, columns - 1))))
    statusShown = true
  }

  /// Takes the status line off the screen so a line can be printed.
  func clearStatus() {
    guard statusShown else { return }
    StandardOutput.writeRaw("\r\u{1B}[2K")
    statusShown = false
  }

  /// The device went away; the job waits for it (`--reconnect`).
  func deviceLost(time: Double, reason: String) {
    guard mode != .json else {
      StandardOutput.write(LiveEventLines.deviceLost(time: time, reason: reason), flush: true)
      return
    }
    clearStatus()
    StandardOutput.write("device lost: \(reason); waiting for it to come back", flush: true)
  }

  /// The connections of the lost client's ports made again, and those not.
  func connectionsRestored(time: Double, _ connections: RestoredConnections) {
    guard mode != .json else {
      StandardOutput.write(
        LiveEventLines.connectionsRestored(time: time, connections), flush: true)
      return
    }
    clearStatus()
    for line in ConnectionsText.lines(connections) { StandardOutput.write(line, flush: true) }
  }

  /// The device is back after `gap` seconds.
  func deviceBack(time: Double, gap: Double) {
    guard mode != .json else {
      // The recorder puts the gap on its timeline; no silence is written.
      StandardOutput.write(
        LiveEventLines.deviceBack(time: time, gap: gap, filled: false), flush: true)
      return
    }
    clearStatus()
    StandardOutput.write(
      "device back after \(DecimalFormatting.fixed(gap, places: 2)) s", flush: true)
  }
}
