import Console
import MicLoopKit

/// The JSON line of each event a live job reports: what `--json` prints
/// and what a station's `/events` sends, from the one set of Console
/// encoders. Control thread.
enum LiveEventJSON {
  static func line(for event: LiveJobEvent) -> String {
    switch event {
    case .meter(let meter): JSONLines.line(for: meter)
    case .tone(let tone): ToneEventFormat.json(tone)
    case .feedback(let feedback): FeedbackEventFormat.json(feedback)
    case .xrun(let bus, let time, let lostFrames):
      LiveEventLines.xrun(bus, time: time, lostFrames: lostFrames)
    case .pause(let time, let seconds): LiveEventLines.pause(time: time, seconds: seconds)
    case .audioLost(let time, let seconds, let cause):
      LiveEventLines.lost(time: time, seconds: seconds, reason: cause.gapReason)
    case .deviceLost(let time, let failure):
      LiveEventLines.deviceLost(time: time, reason: failure.description)
    case .deviceBack(let time, let gap, let filled):
      LiveEventLines.deviceBack(time: time, gap: gap, filled: filled)
    case .connectionsRestored(let time, let connections):
      LiveEventLines.connectionsRestored(time: time, connections)
    }
  }
}
