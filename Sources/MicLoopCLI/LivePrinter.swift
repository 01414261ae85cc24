import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import SignalDSP

/// Prints what a live job reports: a meter line redrawn in place on a
/// terminal, plain lines otherwise, or JSON Lines. Control thread.
final class LivePrinter {
  enum Mode { case terminal, lines, json }
  let mode: Mode
  private var view = LiveMeterView()
  private var segments = [(start: Double, end: Double)]()
  private var openStart: Double?
  private let human = HumanMeterFormat()
  private var lastReading: LevelReading?
  private var status = ""
  private var drewLine = false

  init(json: Bool) {
    mode = json ? .json : (StandardOutput.isTerminal ? .terminal : .lines)
  }

  /// Extra text at the end of the terminal line (gain, mute).
  func setStatus(_ text: String) {
    status = text
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  func show(_ event: MeterEvent) {
    switch (mode, event) {
    case (.json, _):
      StandardOutput.write(JSONLines.line(for: event), flush: true)
    case (.terminal, .level(let reading)):
      lastReading = reading
      redraw(reading)
    case (.lines, .level(let reading)):
      StandardOutput.write(human.line(for: reading), flush: true)
    case (_, .talkStart(let time)):
      openStart = time
    case (_, .talkEnd(let time)):
      segments.append((openStart ?? time, time))
      openStart = nil
    case (_, .summary(let summary)):
      endLine()
      for line in human.summaryLines(summary, segments: segments) { StandardOutput.write(line) }
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
      var fields = [
        "\"event\":\"start\"", "\"rate\":\(granted.sampleRate)",
        "\"period_frames\":\(granted.periodFrames)",
      ]
      if capture != nil { fields.append("\"capture_buffer_frames\":\(captureFrames)") }
      if playback != nil { fields.append("\"playback_buffer_frames\":\(playbackFrames)") }
      fields.append("\"buffering_ms\":\(milliseconds(captureFrames + playbackFrames))")
      StandardOutput.write("{" + fields.joined(separator: ",") + "}", flush: true)
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

  /// A decoded tone or sequence, on its own line above the meter.
  func show(_ event: ToneDecoderEvent) {
    if mode == .json {
      StandardOutput.write(ToneEventFormat.json(event), flush: true)
      return
    }
    endLine()
    StandardOutput.write(ToneEventFormat.text(event), flush: true)
    if mode == .terminal, let reading = lastReading { redraw(reading) }
  }

  func xrun(_ bus: Bus, time: Double) {
    if mode == .json {
      StandardOutput.write(
        "{\"event\":\"xrun\",\"time\":\(DecimalFormatting.fixed(time, places: 3)),\"bus\":\"\(bus.name)\"}",
        flush: true)
    } else {
      endLine()
      StandardOutput.write(
        "xrun (\(bus == .input ? "capture overrun" : "playback underrun")) at \(DecimalFormatting.fixed(time, places: 2)) s",
        flush: true)
    }
  }

  /// Finishes the redrawn line so later output starts on its own line.
  func endLine() {
    if drewLine {
      StandardOutput.writeRaw("\n")
      drewLine = false
    }
  }

  private func redraw(_ reading: LevelReading) {
    var line = view.line(for: reading, status: status)
    // A line longer than the terminal wraps, and the carriage return would
    // then redraw only its last row.
    if let columns = StandardOutput.terminalColumns(), line.count >= columns {
      line = String(line.prefix(columns - 1))
    }
    StandardOutput.writeRaw("\r\u{1B}[2K" + line)
    drewLine = true
  }
}
