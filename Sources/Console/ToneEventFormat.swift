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
      var object = JSONObject(event: "sequence", capacity: 160)
      object.add("time", seconds: sequence.time)
      object.add("duration", seconds: sequence.duration)
      object.add("plan", sequence.plan)
      object.add("text", sequence.text)
      object.add("symbols", sequence.symbols)
      if let call = sequence.call { object.add("call", call) }
      return object.finished
    case .page(let page):
      var object = JSONObject(event: "page", capacity: 160)
      object.add("time", seconds: page.time)
      object.add("duration", seconds: page.duration)
      object.add("plan", page.plan)
      object.add("frequencies", numbers: page.frequencies, places: 1)
      object.add("group", page.isGroupCall)
      return object.finished
    }
  }

  private static func json(_ tone: DecodedTone, event: String) -> String {
    var object = JSONObject(event: event, capacity: 192)
    object.add("time", seconds: tone.time)
    object.add("duration", seconds: tone.duration)
    object.add("plan", tone.plan)
    object.add("symbol", String(tone.symbol))
    object.add("frequencies", numbers: tone.frequencies, places: 1)
    object.add("level_dbfs", tone.levels.max(), places: 1)
    object.add("levels_dbfs", numbers: tone.levels, places: 1)
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
