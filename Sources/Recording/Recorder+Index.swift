import AudioFiles
import TextFormatting
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// The session index: spans queued in timeline order and events handed
/// to the listener; housekeeping (retention, forgetting old activity) and
/// the end of the session. Control thread only.
extension Recorder {
  func queueSpan(_ event: RecorderEvent) {
    switch event {
    case .idle(_, let frames), .blip(_, let frames, _), .gap(_, let frames, _, _):
      guard frames > 0 else { return }
    default: break
    }
    queue.append((event, nil))
    flushQueue()
  }

  func flushQueue() {
    while let first = queue.first, let event = first.event {
      queue.removeFirst()
      switch event {
      case .recording(let file):
        summary.files += 1
        summary.recordedFrames += file.frames
        summary.frames += file.frames
      case .idle(_, let frames): summary.frames += frames
      case .blip(_, let frames, _):
        summary.blips += 1
        summary.frames += frames
      case .gap(_, let frames, let reason, _):
        if reason != .deviceLost && reason != .xrun && reason != .overflow && reason != .pause {
          framesLostToDisk += frames
        }
        summary.gaps += 1
        summary.gapFrames += frames
        summary.frames += frames
      default: break
      }
      emit(event)
    }
  }

  func emit(_ event: RecorderEvent) {
    index.append(event.json(sampleRate: sampleRate, clock: clock))
    store.sessionIndexBytes = RecordingFile.roundedUp(index.bytes)
    listener(event)
  }

  func reportDeleted(_ entry: RecordingStore.Entry, reason: String) {
    summary.deleted += 1
    let name =
      entry.audio.hasPrefix(directory + "/")
      ? String(entry.audio.dropFirst(directory.count + 1)) : entry.audio
    emit(.deleted(name: name, bytes: entry.bytes, reason: reason))
  }

  /// Once a second: deletes what is too old, retries the index, syncs.
  func maintain() {
    let now = MonotonicClock.seconds
    guard now - lastMaintenance >= Self.maintenanceInterval else { return }
    lastMaintenance = now
    for entry in store.expire(now: SystemClock.now) { reportDeleted(entry, reason: "keep_days") }
    index.flushPending()
    index.syncIfDue(interval: settings.syncInterval)
    current?.file?.syncIfDue(interval: settings.syncInterval)
  }

  /// Forgets activity and tags no decision can need any more.
  func forgetOldActivity() {
    let keep = min(cursor, current.map { $0.start - preRoll } ?? cursor) - Int64(sampleRate)
    trigger.forget(before: keep)
    gate?.forget(before: keep)
    calls?.forget(before: keep)
    let oldestOpen = closing.map { $0.record.startFrame }.min() ?? keep
    let tagKeep = min(keep, oldestOpen, current?.fileStart ?? keep)
    if tags.count > 64 { tags.removeAll { $0.endFrame < tagKeep } }
    callLabels.removeAll { $0.end + callHang < keep }
  }

  /// Ends the session: decides the rest of the timeline, closes the file
  /// in progress where the audio ended, publishes every file and writes
  /// the summary. Returns the summary.
  @discardableResult
  public func finish() -> SessionSummary {
    guard !isFinished else { return summary }
    let end = ring.endFrame
    settle(at: end, ending: "end")
    isFinished = true
    publishClosed(all: true)
    flushQueue()
    emit(.sessionEnded(summary))
    index.close()
    return summary
  }

  /// Moves a reported talk end back to where the sound really stopped:
  /// the detector's median of 50 ms and its envelope's release report an
  /// end some 40 ms after the last loud 10 ms frame. The pause after the
  /// end gives the floor; the last frame 6 dB above it ends the talk.
  func refinedEnd(_ end: Int64) -> Int64 {
    let frame = Int64((sampleRate * Self.refineFrame).rounded())
    let after = Int64((sampleRate * Self.refineAfter).rounded())
    let before = Int64((sampleRate * Self.refineBefore).rounded())
    guard frame > 0, ring.endFrame >= end + after, ring.startFrame <= end - before else {
      return end
    }
    func power(_ start: Int64) -> Float {
      var sum: Float = 0
      ring.read(from: start, to: start + frame) { samples, frames in
        for index in 0..<frames * channelCount { sum += samples[index] * samples[index] }
      }
      return sum / Float(frame * Int64(channelCount))
    }
    var floors = [Float]()
    var position = end
    while position + frame <= end + after {
      floors.append(power(position))
      position += frame
    }
    floors.sort()
    // Over the pause's median by the ratio, and over its loudest frame
    // too: a fluctuating background (a fan's rumble) is not sound.
    let threshold = max(
      floors[floors.count / 2] * Self.refineRatio, floors.last! * Self.refinePeakRatio)
    position = end - frame
    while position >= end - before {
      if power(position) >= threshold { return position + frame }
      position -= frame
    }
    return end
  }

  static func seconds(_ frame: Int64, _ rate: Double) -> String {
    DecimalFormatting.json(Double(frame) / rate, places: 3)
  }
}
