import DuplexIO
import TextFormatting

/// JSON Lines of what happens to a live job's devices (lost, back, their
/// connections restored, xruns, pauses and what a pause cost), one schema
/// for every command that runs live. Safe on any thread.
public enum LiveEventLines {
  public static func deviceLost(time: Double, reason: String) -> String {
    "{\"event\":\"device_lost\",\"time\":\(JSONLines.time(time)),\"reason\":\(JSONText.quoted(reason))}"
  }

  public static func deviceBack(time: Double, gap: Double, filled: Bool) -> String {
    "{\"event\":\"device_back\",\"time\":\(JSONLines.time(time)),\"gap_seconds\":\(JSONLines.time(gap)),\"gap_filled\":\(filled)}"
  }

  public static func connectionsRestored(time: Double, _ connections: RestoredConnections)
    -> String
  {
    let restored = connections.restored.map(JSONText.quoted).joined(separator: ",")
    let missing = connections.notRestored.map(JSONText.quoted).joined(separator: ",")
    return
      "{\"event\":\"connections_restored\",\"time\":\(JSONLines.time(time)),\"restored\":[\(restored)],\"not_restored\":[\(missing)]}"
  }

  public static func xrun(_ bus: Bus, time: Double, lostFrames: Int) -> String {
    let lost = lostFrames > 0 ? ",\"lost_frames\":\(lostFrames)" : ""
    return "{\"event\":\"xrun\",\"time\":\(JSONLines.time(time)),\"bus\":\"\(bus.name)\"\(lost)}"
  }

  public static func pause(time: Double, seconds: Double) -> String {
    "{\"event\":\"pause\",\"time\":\(JSONLines.time(time)),\"duration\":\(JSONLines.time(seconds))}"
  }

  /// Audio a pause or an underrun's recovery cost: a gap with its span and
  /// `reason` (`pause` or `xrun`), as the recorder's index has it.
  public static func lost(time: Double, seconds: Double, reason: String) -> String {
    "{\"event\":\"gap\",\"time\":\(JSONLines.time(time)),\"duration\":\(JSONLines.time(seconds)),\"reason\":\"\(reason)\"}"
  }
}
