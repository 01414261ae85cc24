import TextFormatting
import TonePlans

/// Renders decoded tones and sequences as JSON Lines or as aligned text.
/// Safe on any thread.
public enum ToneEventFormat {
  /// One JSON object (without the newline).
  public static func json(_ event: ToneDecoderEvent) -> String {
    var object = JSONObject(capacity: 192)
    let span = event.span
    event.writeJSON(into: &object, time: span.time, duration: span.duration)
    return object.finished
  }

  /// The closing `summary` object.
  public static func jsonSummary(duration: Double, tones: Int, sequences: Int) -> String {
    var object = JSONObject(event: "summary", capacity: 80)
    object.add("duration", seconds: duration)
    object.add("tones", tones)
    object.add("sequences", sequences)
    return object.finished
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
