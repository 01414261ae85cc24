import Console
import DuplexIO
import FeedbackControl
import Metering
import MicLoopKit
import SignalDSP
import TextFormatting
import TonePlans

/// Prints what a live job reports: a meter line redrawn in place on a
/// terminal, plain lines otherwise, or JSON Lines. Control thread.
final class LivePrinter {
  enum Mode { case terminal, lines, json }
  let mode: Mode
  private var view = LiveMeterView()
  private var talk = TalkSegments()
  private let human = HumanMeterFormat()
  private var lastReading: LevelReading?
  private var status = ""
  /// Lines of the meter block on the screen, the cursor at the end of the last.
  private var drawnLines = 0

  init(json: Bool) {
    mode = json ? .json : (StandardOutput.isTerminal ? .terminal : .lines)
  }

  /// Unlatches the clip indicators.
  func clearClips() {
    view.clearClips()
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  /// Extra text at the end of the terminal line (gain, mute).
  func setStatus(_ text: String) {
    status = text
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  private func show(_ event: MeterEvent) {
    switch (mode, event) {
    case (.json, _):
      StandardOutput.write(LiveEventJSON.line(for: .meter(event)), flush: true)
    case (.terminal, .level(let reading)):
      lastReading = reading
      redraw(reading)
    case (.lines, .level(let reading)):
      StandardOutput.write(human.line(for: reading), flush: true)
    case (_, .talkStart), (_, .talkEnd):
      talk.take(event)
    case (_, .summary(let summary)):
      endLine()
      for line in human.summaryLines(summary, segments: talk.closed) {
        StandardOutput.write(line)
      }
      StandardOutput.flush()
    }
  }

  /// What the devices granted: a `start` JSON line, or one line of text.
  func start(_ granted: GrantedConfiguration, capture: String?, playback: String?) {
    let rate = Double(granted.sampleRate)
    func milliseconds(_ frames: Int) -> String {
      DecimalFormatting.fixed(Double(frames) / rate * 1000, places: 1)
    }
    let captureFrames = capture == nil ? 0 : granted.periodFrames * granted.inputPeriodCount
    let playbackFrames = playback == nil ? 0 : granted.periodFrames * granted.outputPeriodCount
    if mode == .json {
      var object = JSONObject(event: "start", capacity: 160)
      object.add("rate", granted.sampleRate)
      object.add("period_frames", granted.periodFrames)
      if capture != nil { object.add("capture_buffer_frames", captureFrames) }
      if playback != nil { object.add("playback_buffer_frames", playbackFrames) }
      object.add("buffering_ms", Double(captureFrames + playbackFrames) / rate * 1000, places: 1)
      StandardOutput.write(object.finished, flush: true)
    } else {
      var parts = [String]()
      if let capture {
        parts.append(
          "capture \(capture) \(granted.inputPeriodCount)×\(granted.periodFrames) (\(milliseconds(captureFrames)) ms)"
        )
      }
      if let playback {
        parts.append(
          "playback \(playback) \(granted.outputPeriodCount)×\(granted.periodFrames) (\(milliseconds(playbackFrames)) ms)"
        )
      }
      StandardOutput.write(
        "\(granted.sampleRate) Hz, " + parts.joined(separator: ", "), flush: true)
    }
  }

  /// One event of the job: in JSON mode its line (`line` when the caller
  /// already encoded it, else `LiveEventJSON`), otherwise text.
  func show(_ event: LiveJobEvent, line: String? = nil) {
    if mode == .json {
      StandardOutput.write(line ?? LiveEventJSON.line(for: event), flush: true)
      return
    }
    switch event {
    case .meter(let meter): show(meter)
    case .tone(let tone): show(tone)
    case .feedback(let feedback): self.feedback(feedback)
    case .xrun(let bus, let time, let lostFrames): xrun(bus, time: time, lostFrames: lostFrames)
    case .pause(let time, let seconds): paused(time: time, seconds: seconds)
    case .audioLost(let time, let seconds, let cause):
      lost(time: time, seconds: seconds, inPause: cause == .pause)
    case .deviceLost(let time, let failure): deviceLost(time: time, reason: failure.description)
    case .deviceBack(let time, let gap, let filled):
      deviceBack(time: time, gap: gap, filled: filled)
    case .connectionsRestored(let time, let connections):
      connectionsRestored(time: time, connections)
    }
  }

  /// A decoded tone or sequence, on its own line above the meter.
  private func show(_ event: ToneDecoderEvent) {
    clearBlock()
    StandardOutput.write(ToneEventFormat.text(event), flush: true)
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  /// What the howl guard did, on its own line above the meter.
  private func feedback(_ event: HowlGuardEvent) {
    clearBlock()
    StandardOutput.write(FeedbackEventFormat.text(event), flush: true)
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  /// The device or its server went away; the job waits for it (`--reconnect`).
  private func deviceLost(time: Double, reason: String) {
    clearBlock()
    StandardOutput.write(
      "device lost at \(DecimalFormatting.fixed(time, places: 2)) s: \(reason); waiting for it to come back",
      flush: true)
  }

  /// The device is back after `gap` seconds; the job goes on.
  private func deviceBack(time: Double, gap: Double, filled: Bool) {
    clearBlock()
    StandardOutput.write(
      "device back at \(DecimalFormatting.fixed(time, places: 2)) s after a \(DecimalFormatting.fixed(gap, places: 2)) s gap\(filled ? " (filled with silence in the recording)" : "")",
      flush: true)
  }

  /// The connections of the lost client's ports made again on the new
  /// one, and those that could not be (their other port did not come back).
  private func connectionsRestored(time: Double, _ connections: RestoredConnections) {
    clearBlock()
    for line in ConnectionsText.lines(connections) { StandardOutput.write(line, flush: true) }
  }

  /// An xrun, with the frames a sound server lost when it says (`lostFrames` > 0).
  private func xrun(_ bus: Bus, time: Double, lostFrames: Int = 0) {
    clearBlock()
    let lost = lostFrames > 0 ? ", \(lostFrames) frames lost" : ""
    StandardOutput.write(
      "xrun (\(bus == .input ? "capture overrun" : "playback underrun")) at \(DecimalFormatting.fixed(time, places: 2)) s\(lost)",
      flush: true)
  }

  /// The process was held for `seconds` (stopped with Ctrl-Z, or starved)
  /// at stream time `time`: audio of that time may be missing.
  private func paused(time: Double, seconds: Double) {
    clearBlock()
    StandardOutput.write(
      "paused for \(DecimalFormatting.fixed(seconds, places: 1)) s at \(DecimalFormatting.fixed(time, places: 2)) s (the process was stopped)",
      flush: true)
  }

  /// Audio a pause (`inPause`) or an underrun's recovery cost (the device
  /// could not hold it): a `gap` with its span, as the recorder's index has it.
  private func lost(time: Double, seconds: Double, inPause: Bool) {
    clearBlock()
    let held =
      inPause
      ? "while micloop was paused" : "while playback recovered from an underrun"
    StandardOutput.write(
      "lost \(DecimalFormatting.fixed(seconds, places: 2)) s of audio at \(DecimalFormatting.fixed(time, places: 2)) s: the device could not hold it \(held)",
      flush: true)
  }

  /// Leaves the meter block on the screen so later output starts below it.
  func endLine() {
    if drawnLines > 0 {
      StandardOutput.writeRaw("\n")
      drawnLines = 0
    }
  }

  /// Takes the meter block off the screen, the cursor where it began.
  private func clearBlock() {
    guard drawnLines > 0 else { return }
    StandardOutput.writeRaw(Self.toBlockStart(drawnLines) + "\u{1B}[J")
    drawnLines = 0
  }

  private static func toBlockStart(_ lines: Int) -> String {
    "\r" + (lines > 1 ? "\u{1B}[\(lines - 1)A" : "")
  }

  /// Draws the block over the previous one in one write, so it never flickers.
  private func redraw(_ reading: LevelReading) {
    // Lines as wide as the terminal would wrap and break the cursor moves.
    let columns = StandardOutput.terminalColumns() ?? 80
    let lines = view.lines(for: reading, status: status, columns: columns)
    var frame = drawnLines > 0 ? Self.toBlockStart(drawnLines) : "\r"
    for (index, line) in lines.enumerated() {
      frame += "\u{1B}[2K" + line + (index < lines.count - 1 ? "\n" : "")
    }
    if lines.count < drawnLines { frame += "\u{1B}[J" }
    StandardOutput.writeRaw(frame)
    drawnLines = lines.count
  }
}
