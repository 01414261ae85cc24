import DuplexIO
import TextFormatting

/// JSON Lines of what happens to a live job's devices (lost, back, their
/// connections restored, xruns, pauses and what a pause or an underrun's
/// recovery cost), one schema for every command that runs live. Safe on
/// any thread.
public enum LiveEventLines {
  public static func deviceLost(time: Double, reason: String) -> String {
    var object = JSONObject(event: "device_lost", capacity: 96)
    object.add("time", seconds: time)
    object.add("reason", reason)
    return object.finished
  }

  public static func deviceBack(time: Double, gap: Double, filled: Bool) -> String {
    var object = JSONObject(event: "device_back", capacity: 96)
    object.add("time", seconds: time)
    object.add("gap_seconds", seconds: gap)
    object.add("gap_filled", filled)
    return object.finished
  }

  public static func connectionsRestored(time: Double, _ connections: RestoredConnections)
    -> String
  {
    var object = JSONObject(event: "connections_restored")
    object.add("time", seconds: time)
    object.add("restored", strings: connections.restored)
    object.add("not_restored", strings: connections.notRestored)
    return object.finished
  }

  public static func xrun(_ bus: Bus, time: Double, lostFrames: Int) -> String {
    var object = JSONObject(event: "xrun", capacity: 80)
    object.add("time", seconds: time)
    object.add("bus", bus.name)
    // As the recorder's index has it: null when the device did not say.
    object.add("lost_frames", optionalInteger: lostFrames > 0 ? lostFrames : nil)
    return object.finished
  }

  public static func pause(time: Double, seconds: Double) -> String {
    var object = JSONObject(event: "pause", capacity: 64)
    object.add("time", seconds: time)
    object.add("duration", seconds: seconds)
    return object.finished
  }

  /// Audio a pause or an underrun's recovery cost: a gap with its span and
  /// `reason` (`pause` or `xrun`), as the recorder's index has it.
  public static func lost(time: Double, seconds: Double, reason: String) -> String {
    var object = JSONObject(event: "gap", capacity: 80)
    object.add("time", seconds: time)
    object.add("duration", seconds: seconds)
    object.add("reason", reason)
    return object.finished
  }
}
