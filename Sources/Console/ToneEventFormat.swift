import TextFormatting
import TonePlans

/// Renders decoded tones and sequences as JSON Lines or as aligned text.
/// Safe on any thread.
public enum ToneEventFormat {
  /// One JSON object (without the newline).
  public static func json(_ event: ToneDecoderEvent) -> String {
    switch event {
    case .tone(let tone): return json(tone, event: "tone")
    case .toneStart(let tone): return json(tone, event: "tone_start")
    case .sequence(let sequence):
      return
        "{\"event\":\"sequence\",\"time\":\(JSONLines.time(sequence.time)),\"duration\":\(JSONLines.time(sequence.duration)),\"plan\":\(JSONText.quoted(sequence.plan)),\"text\":\(JSONText.quoted(sequence.text)),\"symbols\":\(JSONText.quoted(sequence.symbols))"
        + (sequence.call.map { ",\"call\":\(JSONText.quoted($0))" } ?? "") + "}"
    case .page(let page):
      let frequencies = page.frequencies.map { DecimalFormatting.fixed($0, places: 1) }
      return
        "{\"event\":\"page\",\"time\":\(JSONLines.time(page.time)),\"duration\":\(JSONLines.time(page.duration)),\"plan\":\(JSONText.quoted(page.plan)),\"frequencies\":[\(frequencies.joined(separator: ","))],\"group\":\(page.isGroupCall)}"
    }
  }

  /// A `tone` or `tone_start` object, built piece by piece into one buffer
  /// (a long decode prints thousands).
  private static func json(_ tone: DecodedTone, event: String) -> String {
    var line = "{\"event\":\""
    line.reserveCapacity(192)
    line += event
    line += "\",\"time\":"
    line += JSONLines.time(tone.time)
    line += ",\"duration\":"
    line += JSONLines.time(tone.duration)
    line += ",\"plan\":"
    line += JSONText.quoted(tone.plan)
    line += ",\"symbol\":"
    line += JSONText.quoted(String(tone.symbol))
    line += ",\"frequencies\":["
    for (index, frequency) in tone.frequencies.enumerated() {
      if index > 0 { line += "," }
      line += DecimalFormatting.fixed(frequency, places: 1)
    }
    line += "],\"level_dbfs\":"
    line += DecimalFormatting.json(tone.levels.max(), places: 1)
    line += ",\"levels_dbfs\":["
    for (index, level) in tone.levels.enumerated() {
      if index > 0 { line += "," }
      line += DecimalFormatting.json(level, places: 1)
    }
    line += "]}"
    return line
  }

  /// The closing `summary` object.
  public static func jsonSummary(duration: Double, tones: Int, sequences: Int) -> String {
    "{\"event\":\"summary\",\"duration\":\(JSONLines.time(duration)),\"tones\":\(tones),\"sequences\":\(sequences)}"
  }

  /// One line of text, such as
  /// `   2.010 s  dtmf    5      770.2 + 1335.9 Hz  -13.0 dBFS   70 ms`.
  public static func text(_ event: ToneDecoderEvent) -> String {
    switch event {
    case .tone(let tone):
      return text(tone) + padded(String(Int((tone.duration * 1000).rounded())), 4) + " ms"
    case .toneStart(let tone):
      return text(tone) + "started"
    case .sequence(let sequence) where sequence.kind == .alarm:
      return padded(DecimalFormatting.fixed(sequence.time, places: 3), 8) + " s  "
        + padded(sequence.plan, -10) + "SIGNAL \"" + sequence.text + "\""
        + (sequence.call.map { " after call \"\($0)\"" } ?? "")
    case .sequence(let sequence):
      let raw = sequence.symbols == sequence.text ? "" : "  (sent as \(sequence.symbols))"
      return padded(DecimalFormatting.fixed(sequence.time, places: 3), 8) + " s  "
        + padded(sequence.plan, -10) + (sequence.kind == .characterCode ? "TEXT" : "CALL") + " \""
        + sequence.text + "\"" + raw
    case .page(let page):
      let frequencies =
        page.frequencies.map { DecimalFormatting.fixed($0, places: 1) }.joined(separator: " then ")
        + " Hz"
      return padded(DecimalFormatting.fixed(page.time, places: 3), 8) + " s  "
        + (page.isGroupCall ? "GROUP PAGE " : "PAGE ") + page.plan + "  " + frequencies + "  "
        + String(Int((page.duration * 1000).rounded())) + " ms"
    }
  }

  /// A tone's line up to its duration.
  private static func text(_ tone: DecodedTone) -> String {
    let frequencies =
      tone.frequencies.map { DecimalFormatting.fixed($0, places: 1) }.joined(separator: " + ")
      + " Hz"
    let level = tone.levels.max().map { DecimalFormatting.fixed($0, places: 1) } ?? "-"
    return padded(DecimalFormatting.fixed(tone.time, places: 3), 8) + " s  "
      + padded(tone.plan, -10) + padded(String(tone.symbol), -3)
      + padded(frequencies, 18) + "  " + padded(level, 6) + " dBFS  "
  }

  /// Right-aligns in `width` columns, or left-aligns for a negative width.
  static func padded(_ text: String, _ width: Int) -> String {
    let fill = String(repeating: " ", count: max(0, abs(width) - text.count))
    return width < 0 ? text + fill : fill + text
  }
}
