import TextFormatting

/// One schema for a decoded event wherever it is written as JSON: a
/// `tones --json` line, a recording session's index and a recording's
/// tags. The writer places the event in its own time (stream seconds, or
/// a recording's timeline), the event adds what it is. Any thread.
extension ToneDecoderEvent {
  /// The event's name: `tone`, `tone_start`, `sequence` or `page`.
  public var jsonName: String {
    switch self {
    case .tone: "tone"
    case .toneStart: "tone_start"
    case .sequence: "sequence"
    case .page: "page"
    }
  }

  /// Where the event lies in stream time: its start and duration, seconds.
  public var span: (time: Double, duration: Double) {
    switch self {
    case .tone(let tone), .toneStart(let tone): (tone.time, tone.duration)
    case .sequence(let sequence): (sequence.time, sequence.duration)
    case .page(let page): (page.time, page.duration)
    }
  }

  /// Adds `event`, then `time` and `duration` as given, then what was
  /// decoded: `plan` and a tone's `symbol`, `frequencies`, `level_dbfs`
  /// and `levels_dbfs`; a sequence's `text`, `symbols` and the `call` a
  /// siren signal followed; a page's `frequencies` and `group`.
  public func writeJSON(into object: inout JSONObject, time: Double, duration: Double) {
    object.add("event", jsonName)
    object.add("time", seconds: time)
    object.add("duration", seconds: duration)
    switch self {
    case .tone(let tone), .toneStart(let tone):
      object.add("plan", tone.plan)
      object.add("symbol", String(tone.symbol))
      object.add("frequencies", numbers: tone.frequencies, places: 1)
      object.add("level_dbfs", tone.levels.max(), places: 1)
      object.add("levels_dbfs", numbers: tone.levels, places: 1)
    case .sequence(let sequence):
      object.add("plan", sequence.plan)
      object.add("text", sequence.text)
      object.add("symbols", sequence.symbols)
      if let call = sequence.call { object.add("call", call) }
    case .page(let page):
      object.add("plan", page.plan)
      object.add("frequencies", numbers: page.frequencies, places: 1)
      object.add("group", page.isGroupCall)
    }
  }
}
