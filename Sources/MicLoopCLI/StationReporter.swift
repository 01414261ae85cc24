import DuplexIO
import Foundation
import Metering
import MicLoopKit
import Recording
import Station
import TonePlans

/// Hands a running job's events to its station: each event's JSON line
/// (encoded once, by the caller) to `/events`, the numbers to `/metrics`,
/// and the session's recordings to `/recordings`. Every call returns at
/// once (`StationFeed`). Control thread.
final class StationReporter {
  private let feed: StationFeed
  private var talkStart: Double?
  private var storageNoted = -Double.infinity
  /// Seconds between looks at a recording session's storage.
  static let storageInterval = 1.0

  init(feed: StationFeed) { self.feed = feed }

  /// Shows where the recordings' storage stands, at most once every
  /// `storageInterval` (`now`: monotonic seconds).
  func noteStorage(of recorder: Recorder, now: Double) {
    guard now - storageNoted >= Self.storageInterval else { return }
    storageNoted = now
    feed.metrics.setStorage(
      usedBytes: recorder.diskUsage, budgetBytes: recorder.settings.retention.maximumBytes,
      freeBytes: recorder.freeBytes)
  }

  /// A live job's event and its JSON line.
  func take(_ event: LiveJobEvent, line: String) {
    feed.publish(line)
    count(event)
  }

  /// A live job's event that only counts (its line comes from elsewhere).
  func count(_ event: LiveJobEvent) {
    let metrics = feed.metrics
    switch event {
    case .meter(.level(let reading)):
      if reading.channels.count > 1 {
        for channel in 0..<reading.channels.count {
          metrics.setLevel(
            channel: channel + 1, rms: reading.channels.rmsDecibels(channel),
            peak: reading.channels.peakDecibels(channel))
        }
      } else {
        metrics.setLevel(channel: 1, rms: reading.rmsDecibels, peak: reading.peakDecibels)
      }
      metrics.setTalking(reading.isTalking)
    case .meter(.talkStart(let time)):
      talkStart = time
      metrics.setTalking(true)
    case .meter(.talkEnd(let time)):
      if let talkStart { metrics.addTalk(seconds: time - talkStart) }
      talkStart = nil
      metrics.setTalking(false)
    case .meter(.summary): break
    case .tone(let tone):
      switch tone {
      case .tone(let decoded): metrics.countTone(plan: decoded.plan)
      case .sequence(let sequence): metrics.countCall(plan: sequence.plan)
      case .page(let page): metrics.countCall(plan: page.plan)
      case .toneStart: break
      }
    case .feedback: break
    case .xrun(let bus, _, _): metrics.countXrun(bus: bus.name)
    case .pause: break
    case .audioLost(_, _, let cause): metrics.countGap(reason: cause.gapReason)
    case .deviceLost:
      metrics.setDeviceUp(false)
      metrics.countGap(reason: "device_lost")
    case .deviceBack: metrics.setDeviceUp(true)
    case .connectionsRestored: break
    }
  }

  /// A recording session's event and its index line: recordings become
  /// servable, deleted ones stop being so.
  func take(_ event: RecorderEvent, line: String) {
    feed.publish(line)
    switch event {
    case .recording(let file):
      feed.addRecording(RecordingEntry(name: file.name, path: file.path, indexLine: line))
      feed.metrics.countRecording(bytes: Self.size(of: file.path))
    case .deleted(let name, _, _): feed.removeRecording(named: name)
    case .gap(_, _, let reason, _) where Self.isStorageLoss(reason):
      feed.metrics.countGap(reason: reason.rawValue)
    default: break
    }
  }

  /// A gap only the recorder knows of (storage or its own buffer); the
  /// others the job's own events have counted already.
  static func isStorageLoss(_ reason: GapReason) -> Bool {
    switch reason {
    case .overflow, .diskFull, .maximumBytes, .minimumFree, .writeFailed: true
    case .deviceLost, .xrun, .pause: false
    }
  }

  private static func size(of path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
  }
}
