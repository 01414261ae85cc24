import TextFormatting
import TonePlans

/// A tone, call or page that was decoded, as recordings carry it in their
/// tags: where it lay on the timeline and what it was.
public struct RecordingTag: Sendable, Equatable {
  public var event: ToneDecoderEvent
  /// The timeline frames it spans.
  public var startFrame: Int64
  public var endFrame: Int64

  /// The tag as JSON, with its start in seconds from `fileStart` when given.
  func json(sampleRate: Double, fileStart: Int64?) -> String {
    var object = JSONObject()
    write(into: &object, sampleRate: sampleRate, fileStart: fileStart)
    return object.finished
  }

  /// Adds the tag's members to `object`: the decoded event as
  /// `tones --json` writes it (`ToneDecoderEvent.writeJSON`), placed on the
  /// timeline, and its `offset` into the file from `fileStart` when given.
  func write(into object: inout JSONObject, sampleRate: Double, fileStart: Int64?) {
    event.writeJSON(
      into: &object, time: Double(startFrame) / sampleRate,
      duration: Double(endFrame - startFrame) / sampleRate)
    if let fileStart {
      object.add("offset", Double(startFrame - fileStart) / sampleRate, places: 3)
    }
  }

  /// A few words for a person: "zvei1 12345", "dtmf 5", "ctcss 88.5 Hz".
  public var summary: String {
    switch event {
    case .tone(let tone), .toneStart(let tone):
      tone.kind == .subAudible
        ? "ctcss \(DecimalFormatting.fixed(tone.frequencies.first ?? 0, places: 1)) Hz"
        : "\(tone.plan) \(tone.symbol)"
    case .sequence(let sequence): "\(sequence.plan) \(sequence.text)"
    case .page(let page): "\(page.isGroupCall ? "group page" : "page") \(page.plan)"
    }
  }
}

/// A closed recording, as its index line and sidecar describe it.
public struct RecordedFile: Sendable {
  /// Path relative to the recording directory, and the full path.
  public var name: String
  public var path: String
  public var sidecarName: String
  public var startFrame: Int64
  public var frames: Int64
  /// The first sample's wall-clock time (seconds since 1970).
  public var start: Double
  /// What started the transmission: `talk`, `level:-40`, `zvei1:12345` …
  public var trigger: String
  public var tags: [RecordingTag]
  /// Its place among the files of one transmission (split at the maximum,
  /// at a gap or on a full disk): 1, 2 …
  public var part: Int
  /// The file this one continues, sample-continuous (part 2 and later).
  public var continues: String?
  /// Why it ended: `quiet` (the hang passed), `split` (the maximum),
  /// `gap`, `disk_full`, `end` (the session ended).
  public var ending: String
  /// Capture xruns inside it (timeline frames).
  public var xrunFrames: [Int64]
}

/// Why part of the timeline holds no audio that should be there.
public enum GapReason: String, Sendable {
  /// The device or its sound server went away (`--reconnect` bridged it).
  case deviceLost = "device_lost"
  /// The sound server ran cycles without micloop (frames counted).
  case xrun
  /// micloop's own buffer overflowed: the disk or the machine could not keep up.
  case overflow
  /// micloop itself was held (stopped with Ctrl-Z or SIGSTOP, or starved)
  /// longer than the device could keep its audio.
  case pause
  /// The file system was full.
  case diskFull = "disk_full"
  /// `--max-bytes` could not be kept by deleting closed recordings.
  case maximumBytes = "max_bytes"
  /// `--min-free` could not be kept by deleting closed recordings.
  case minimumFree = "min_free"
  /// A file could not be written for another reason (the detail says).
  case writeFailed = "write_failed"
}

/// What a recording session reports, in the order it happens. Each event
/// has one JSON line (`json`), written to the session's index; the spans
/// (`recording`, `idle`, `blip`, `gap`) tile the timeline without overlap
/// or hole, so their frames add up to the session's.
public enum RecorderEvent: Sendable {
  case sessionStarted(SessionStart)
  /// A file was opened (it is named `.part` until closed).
  case opened(name: String, startFrame: Int64, start: Double, trigger: String, part: Int)
  case recording(RecordedFile)
  /// Quiet: nothing to record.
  case idle(startFrame: Int64, frames: Int64)
  /// A transmission shorter than the minimum: no file.
  case blip(startFrame: Int64, frames: Int64, trigger: String)
  /// Audio that should have been recorded or captured and was not.
  case gap(startFrame: Int64, frames: Int64, reason: GapReason, detail: String?)
  /// A capture xrun at a frame; the frames lost when the backend knows.
  case xrun(frame: Int64, lostFrames: Int?)
  /// A decoded tone, call or page.
  case tone(RecordingTag)
  /// Retention deleted a closed recording (or an old index).
  case deleted(name: String, bytes: Int64, reason: String)
  /// Something went wrong that did not stop the session.
  case problem(RecorderProblem)
  case sessionEnded(SessionSummary)
}

/// The start of a session: its format and where its index is.
public struct SessionStart: Sendable {
  public var start: Double
  public var sampleRate: Double
  public var channelCount: Int
  public var encoding: String
  public var source: String
  public var indexName: String
  public var trigger: String
  public var startOn: [String]
  public var subTone: Double?
  public var preRoll: Double
  public var hang: Double
  public var minimum: Double
  public var maximum: Double
}

/// The totals of a session.
public struct SessionSummary: Sendable, Equatable {
  /// Timeline frames covered (recordings + idle + blips + gaps).
  public var frames: Int64
  public var files: Int
  public var recordedFrames: Int64
  public var blips: Int
  public var gaps: Int
  public var gapFrames: Int64
  public var xruns: Int
  public var deleted: Int
}

extension RecorderEvent {
  /// The event's JSON line (without newline); times in seconds of the
  /// timeline (`time`), wall-clock times in UTC (`start`).
  public func json(sampleRate: Double, clock: StreamClock) -> String {
    var object = JSONObject()
    func span(_ name: String, _ startFrame: Int64, _ frames: Int64) {
      object.add("event", name)
      object.add("time", Double(startFrame) / sampleRate, places: 3)
      object.add("start_frame", startFrame)
      object.add("frames", frames)
      object.add("duration", Double(frames) / sampleRate, places: 3)
      object.add("start", WallClockTime(epochSeconds: clock.time(ofFrame: startFrame)).iso8601)
    }
    switch self {
    case .sessionStarted(let session):
      object.add("event", "session_start")
      object.add("start", WallClockTime(epochSeconds: session.start).iso8601)
      object.add("rate", Int(session.sampleRate))
      object.add("channels", session.channelCount)
      object.add("encoding", session.encoding)
      object.add("source", session.source)
      object.add("index", session.indexName)
      object.add("trigger", session.trigger)
      object.add("start_on", strings: session.startOn)
      object.add("ctcss", session.subTone, places: 1)
      object.add("pre_roll", session.preRoll, places: 3)
      object.add("hang", session.hang, places: 3)
      object.add("min", session.minimum, places: 3)
      object.add("max", session.maximum, places: 3)
    case .opened(let name, let startFrame, let start, let trigger, let part):
      object.add("event", "open")
      object.add("time", Double(startFrame) / sampleRate, places: 3)
      object.add("file", name)
      object.add("start_frame", startFrame)
      object.add("start", WallClockTime(epochSeconds: start).iso8601)
      object.add("trigger", trigger)
      object.add("part", part)
    case .recording(let file):
      return file.json(sampleRate: sampleRate, event: true)
    case .idle(let startFrame, let frames):
      span("idle", startFrame, frames)
    case .blip(let startFrame, let frames, let trigger):
      span("blip", startFrame, frames)
      object.add("trigger", trigger)
    case .gap(let startFrame, let frames, let reason, let detail):
      span("gap", startFrame, frames)
      object.add("reason", reason.rawValue)
      if let detail { object.add("detail", detail) }
    case .xrun(let frame, let lost):
      object.add("event", "xrun")
      object.add("time", Double(frame) / sampleRate, places: 3)
      object.add("frame", frame)
      object.add("start", WallClockTime(epochSeconds: clock.time(ofFrame: frame)).iso8601)
      object.add("lost_frames", optionalInteger: lost)
    case .tone(let tag):
      tag.write(into: &object, sampleRate: sampleRate, fileStart: nil)
    case .deleted(let name, let bytes, let reason):
      object.add("event", "deleted")
      object.add("file", name)
      object.add("bytes", bytes)
      object.add("reason", reason)
    case .problem(let problem):
      object.add("event", "problem")
      object.add("message", problem.line())
    case .sessionEnded(let summary):
      object.add("event", "session_end")
      object.add("frames", summary.frames)
      object.add("duration", Double(summary.frames) / sampleRate, places: 3)
      object.add("files", summary.files)
      object.add("recorded_frames", summary.recordedFrames)
      object.add("blips", summary.blips)
      object.add("gaps", summary.gaps)
      object.add("gap_frames", summary.gapFrames)
      object.add("xruns", summary.xruns)
      object.add("deleted", summary.deleted)
    }
    return object.finished
  }
}

extension RecordedFile {
  /// The index line (`event` true) or the sidecar (which adds the format).
  func json(
    sampleRate: Double, event: Bool, channelCount: Int = 0, encoding: String = "",
    session: String = ""
  ) -> String {
    var object = JSONObject()
    if event {
      object.add("event", "recording")
    } else {
      // First, so retention knows its own sidecars by their first bytes.
      object.add("recorder", "micloop")
    }
    object.add("time", Double(startFrame) / sampleRate, places: 3)
    object.add("file", name)
    object.add("start_frame", startFrame)
    object.add("frames", frames)
    object.add("duration", Double(frames) / sampleRate, places: 3)
    object.add("start", WallClockTime(epochSeconds: start).iso8601)
    object.add(
      "end", WallClockTime(epochSeconds: start + Double(frames) / sampleRate).iso8601)
    object.add("trigger", trigger)
    object.add(
      "tags",
      json: JSONText.array(tags.map { $0.json(sampleRate: sampleRate, fileStart: startFrame) }))
    object.add("part", part)
    object.add("continues", optional: continues)
    object.add("ending", ending)
    object.add(
      "xruns", numbers: xrunFrames.lazy.map { Double($0 - startFrame) / sampleRate }, places: 3)
    if event {
      object.add("sidecar", sidecarName)
    } else {
      object.add("rate", Int(sampleRate))
      object.add("channels", channelCount)
      object.add("encoding", encoding)
      object.add("session", session)
    }
    return object.finished
  }
}
