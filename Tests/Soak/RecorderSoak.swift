import AudioFiles
import Foundation
import Recording
import TonePlans

/// What the transmission recorder did over the soak, from its events:
/// every file it published and deleted, the tags it put on them, and any
/// gap, xrun or problem. Control thread.
final class RecorderTally {
  /// The names of the files published, in order (names only: the soak's
  /// own memory must stay flat too).
  var recordings = [String]()
  var deleted = [String]()
  var tags = 0
  var gaps = 0
  var xruns = 0
  var problems = [String]()
  var summary: SessionSummary?

  func take(_ event: RecorderEvent) {
    switch event {
    case .recording(let file):
      recordings.append(file.name)
      tags += file.tags.count
    case .deleted(let name, _, _): deleted.append(name)
    case .gap: gaps += 1
    case .xrun: xruns += 1
    case .problem(let problem): problems.append(problem.cause)
    case .sessionEnded(let summary): self.summary = summary
    default: break
    }
  }
}

/// The recorder's settings for the soak: a file per transmission opened
/// by level (the digit stands 50 dB over the noise), the digits tagged,
/// and a byte budget that makes retention delete all day long.
func soakRecorderSettings() -> RecorderSettings {
  var settings = RecorderSettings()
  settings.trigger = .level(threshold: -30)
  settings.minimum = 0.05
  settings.tagPlans = [TonePlan.dtmf]
  settings.retention = RetentionPolicy(maximumBytes: soakRecordingBudget)
  return settings
}

/// The recordings' byte budget: a few dozen of the day's files.
let soakRecordingBudget: Int64 = 2 << 20
