import FeedbackControl
import SignalDSP
import TextFormatting

/// Renders what the howl guard did as a JSON Lines object or a line of
/// text. Safe on any thread.
public enum FeedbackEventFormat {
  /// One JSON object (without the newline): `{"event":"feedback","time":…,
  /// "frequency":…,"depth_db":…,"action":…}`; the frequency is `null` for
  /// the duck, `growth_db_per_s` is there when a howl was found,
  /// `"planned":true` when the ring-out plan set the action ahead, and
  /// `"learned":true` besides when that plan was learned while the loop ran.
  public static func json(_ event: HowlGuardEvent) -> String {
    var object = JSONObject(event: "feedback", capacity: 128)
    object.add("time", seconds: event.time)
    object.add("frequency", event.isDuck ? nil : event.frequency, places: 1)
    object.add("depth_db", event.depth, places: 1)
    object.add("action", event.action.name)
    if event.growth.isFinite { object.add("growth_db_per_s", event.growth, places: 0) }
    if event.isPlanned { object.add("planned", true) }
    if event.isLearned { object.add("learned", true) }
    return object.finished
  }

  /// One line of text, for example "feedback at 2.17 s: notch at 2427 Hz,
  /// -12 dB (growing 87 dB/s)", or "… -6 dB (ring-out)" when planned
  /// ("(learned loop)" when the plan was learned while the loop ran).
  public static func text(_ event: HowlGuardEvent) -> String {
    let time = DecimalFormatting.fixed(event.time, places: 2)
    let depth = DecimalFormatting.fixed(event.depth, places: 0) + " dB"
    let growth =
      event.isLearned
      ? " (learned loop)"
      : event.isPlanned
        ? " (ring-out)"
        : event.growth.isFinite
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

  /// What the ring-out plan holds, as JSON: `{"event":"ring_out",
  /// "maximum_stable_gain_db":…,"frequency":…,"first_gain_db":…,
  /// "notches":…,"notches_at_gain_db":…}` (the last two: the most notches
  /// the plan sets without a duck, and from which gain).
  public static func json(_ plan: RingOutPlan) -> String {
    let fullest = fullestStep(plan)
    var object = JSONObject(event: "ring_out", capacity: 160)
    object.add("maximum_stable_gain_db", plan.maximumStableGain, places: 2)
    object.add("frequency", plan.frequency, places: 1)
    object.add("first_gain_db", plan.firstGain, places: 1)
    object.add("notches", plan.notchCount(fullest))
    object.add("notches_at_gain_db", plan.gain(ofStep: fullest), places: 1)
    return object.finished
  }

  /// What the ring-out plan holds, in one line of text.
  public static func text(_ plan: RingOutPlan) -> String {
    let fullest = fullestStep(plan)
    let duckFrom = (0..<plan.stepCount).first { plan.duck(ofStep: $0) > 0 }
    return
      "Ring-out: the loop howls first at \(DecimalFormatting.fixed(plan.frequency, places: 0)) Hz past \(DecimalFormatting.signed(plan.maximumStableGain, places: 1)) dB; notches are set ahead from \(DecimalFormatting.signed(plan.firstGain, places: 1)) dB (\(plan.notchCount(fullest)) by \(DecimalFormatting.signed(plan.gain(ofStep: fullest), places: 1)) dB)"
      + (duckFrom.map {
        ", the output is ducked from \(DecimalFormatting.signed(plan.gain(ofStep: $0), places: 1)) dB"
      } ?? "")
  }

  /// The first step with the most notches and no duck (or step 0).
  private static func fullestStep(_ plan: RingOutPlan) -> Int {
    var best = 0
    for step in 0..<plan.stepCount where plan.duck(ofStep: step) == 0 {
      if plan.notchCount(step) > plan.notchCount(best) { best = step }
    }
    return best
  }
}
