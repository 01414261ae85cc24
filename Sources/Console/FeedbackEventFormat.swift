import SignalDSP
import TextFormatting

/// Renders what the howl guard did as a JSON Lines object or a line of
/// text. Safe on any thread.
public enum FeedbackEventFormat {
  /// One JSON object (without the newline): `{"event":"feedback","time":…,
  /// "frequency":…,"depth_db":…,"action":…}`; the frequency is `null` for
  /// the duck, and `growth_db_per_s` is there when a howl was found.
  public static func json(_ event: HowlGuardEvent) -> String {
    var line = "{\"event\":\"feedback\",\"time\":"
    line += JSONLines.time(event.time)
    line += ",\"frequency\":"
    line += event.isDuck ? "null" : DecimalFormatting.fixed(event.frequency, places: 1)
    line += ",\"depth_db\":"
    line += DecimalFormatting.fixed(event.depth, places: 1)
    line += ",\"action\":\"" + event.action.name + "\""
    if event.growth.isFinite {
      line += ",\"growth_db_per_s\":" + DecimalFormatting.fixed(event.growth, places: 0)
    }
    return line + "}"
  }

  /// One line of text, for example "feedback at 2.17 s: notch at 2427 Hz,
  /// -12 dB (growing 87 dB/s)".
  public static func text(_ event: HowlGuardEvent) -> String {
    let time = DecimalFormatting.fixed(event.time, places: 2)
    let depth = DecimalFormatting.fixed(event.depth, places: 0) + " dB"
    let growth =
      event.growth.isFinite
      ? " (growing \(DecimalFormatting.fixed(event.growth, places: 0)) dB/s)" : ""
    let place = "\(DecimalFormatting.fixed(event.frequency, places: 0)) Hz"
    switch (event.action, event.isDuck) {
    case (.notch, _): return "feedback at \(time) s: notch at \(place), \(depth)\(growth)"
    case (.deepen, _):
      return "feedback at \(time) s: notch at \(place) deepened to \(depth)\(growth)"
    case (.duck, _): return "feedback at \(time) s: output ducked to \(depth)\(growth)"
    case (.lift, true):
      return event.depth == 0
        ? "feedback at \(time) s: duck lifted" : "feedback at \(time) s: duck eased to \(depth)"
    case (.lift, false):
      return event.depth == 0
        ? "feedback at \(time) s: notch at \(place) lifted"
        : "feedback at \(time) s: notch at \(place) eased to \(depth)"
    }
  }
}
