import AudioFiles
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Voice- and tone-activated recording: one file per transmission, each
/// starting `preRoll` before its first sound, and an index that accounts
/// for every frame of the session.
///
/// A consumer of a timeline: captured audio in order (`append`), with the
/// trigger's reports (`talk`, or the recorder's own level trigger), decoded
/// tones (`tone`), how far the detectors have got (`detector(reached:)`,
/// `decoder(reached:)`), xruns and gaps, all in stream time; `update`
/// then decides what it can. Audio waits in a look-back ring until the
/// triggers have decided about it, so a start reported late still gets its
/// pre-roll, a pause is known to be shorter than the hang before a file is
/// split, and a call is found before the announcement that follows it.
///
/// The state of each transmission: idle → active (a file once the activity
/// has lasted `minimum`; a blip otherwise) → hang → closed, or back to
/// active when activity returns within the hang. A file that reaches
/// `maximum` is split at the next pause, sample-continuous. Files are
/// written through `AudioFileWriter` as `NAME.part.wav`, renamed when their
/// sidecar is written. Spans of the timeline (`recording`, `idle`, `blip`,
/// `gap`) go to the session's index in timeline order.
///
/// Control thread only; nothing here runs on the audio thread.
public final class Recorder {
  public let settings: RecorderSettings
  public let sampleRate: Double
  public let channelCount: Int
  public let directory: String
  public let clock: StreamClock
  public let encoding: AudioFileEncoding
  /// The session index's file name (in `directory`).
  public let indexName: String
  let listener: (RecorderEvent) -> Void

  // Durations in frames.
  let preRoll: Int64
  let hang: Int64
  let minimum: Int64
  let maximum: Int64
  let forcedMaximum: Int64
  let callHang: Int64
  let triggerLag: Int64
  let toneLag: Int64
  let tagLag: Int64
  let isDecoding: Bool

  let ring: LookbackRing
  /// Frames the look-back keeps for the pre-roll, the triggers' delays and
  /// a pending transmission; the rest of its capacity is room for what
  /// arrives between two updates (`RecorderSettings.largestArrival`, grown
  /// when more came).
  let reachFrames: Int
  /// Frames appended since the last update.
  var framesSinceUpdate = 0
  /// Frames of undecided audio the look-back holds at most while a
  /// trigger lags (`RecorderSettings.largestBacklog`).
  let backlogLimit: Int64
  /// Whether the current episode of a lagging trigger was reported.
  var isBacklogReported = false
  var trigger = ActivityTrack()
  var gate: ActivityTrack?
  var calls: ActivityTrack?
  var callLabels: [(start: Int64, end: Int64, label: String)] = []
  var levelTrigger: LevelTrigger?
  var matcher: CallMatcher
  let subTone: SubToneGate?
  /// Timeline frames the trigger and the decoder have heard.
  var detected: Int64 = 0
  var decoded: Int64 = 0
  /// Where stream time (which stops during a gap) meets the timeline:
  /// from stream frame `streamFrame` on, timeline = stream + `offset`.
  var offsets: [(streamFrame: Int64, offset: Int64)] = [(0, 0)]

  enum Phase: Equatable {
    case idle
    case active
    case hang(since: Int64)
  }

  /// One transmission, from its first activity to its close.
  struct Transmission {
    var start: Int64
    var lastActiveEnd: Int64
    /// Frames the trigger was active, pauses left out: what `minimum`
    /// is measured against, so a squelch tail and a click a second later
    /// are not a transmission.
    var activeFrames: Int64 = 0
    var label: String
    var isConfirmed = false
    var file: RecordingFile?
    /// Where the current file (or lost span) begins.
    var fileStart: Int64 = 0
    /// Frames up to here went into files or were counted lost.
    var written: Int64 = 0
    /// Files made so far.
    var part = 0
    var previousName: String?
    var lost: (since: Int64, reason: GapReason, detail: String?)?
    var lastRetry = 0.0
    var wantsSplit = false
    var xrunFrames: [Int64] = []
  }

  /// A closed file waiting for its tags (tones are reported after they end).
  struct Closing {
    let id: Int
    let file: RecordingFile
    var record: RecordedFile
    var end: Int64 { record.startFrame + record.frames }
    var lastTry = -Double.infinity
  }

  var cursor: Int64 = 0
  var phase = Phase.idle
  /// The end of the last span put on the timeline.
  var spanEnd: Int64 = 0
  var current: Transmission?
  var closing: [Closing] = []
  var nextClosingID = 0
  /// Spans in timeline order; a recording waits for its tags.
  var queue: [(event: RecorderEvent?, closingID: Int?)] = []
  var tags: [RecordingTag] = []
  let store: RecordingStore
  let index: SessionIndex
  var summary = SessionSummary(
    frames: 0, files: 0, recordedFrames: 0, blips: 0, gaps: 0, gapFrames: 0, xruns: 0, deleted: 0)
  var namedFiles = 0
  var lastMaintenance = -Double.infinity
  var isFinished = false
  /// Whether the current episode of a full disk (or budget) was reported.
  var isShortageReported = false
  /// Frames of the timeline lost because the disk or the budget had no room.
  public internal(set) var framesLostToDisk: Int64 = 0

  /// Seconds between looks at the disk (age, retries, syncing).
  static let maintenanceInterval = 1.0
  /// Seconds between tries to write again after the disk refused.
  static let retryInterval = 1.0
  /// Frames written to a file at a time. The header is rewritten after
  /// each write, so a kill in the middle of one leaves at most this many
  /// frames in the file that its header does not count (one period of a
  /// live recording's default 1024).
  static let writeChunk = 1024
  /// Seconds the trigger's reports may lag what it has heard, beyond its
  /// own hold: a start is reported once the level has stayed up (50 ms),
  /// an end once the hold has passed.
  static let talkReportSlack = 0.3
  /// What an end refinement looks at: the pause after the reported end
  /// (its floor) and the stretch before it.
  static let refineAfter = 0.1
  static let refineBefore = 0.4
  static let refineFrame = 0.01
  /// How far above the pause's floor (power ratio, 3 dB) still counts as sound:
  /// 6 dB cut the faint ends of words in 10 dB SNR noise, splitting pauses
  /// 200 ms shorter than the hang.
  static let refineRatio: Float = 2
  /// How far above the pause's loudest 10 ms frame (power ratio, 1.8 dB).
  static let refinePeakRatio: Float = 1.5

  /// Starts a session: makes `directory` (and its parents) when missing,
  /// takes stock of earlier recordings there, creates the session's index
  /// and reports `sessionStarted`.
  /// - Parameters:
  ///   - settings: triggers, timing, naming and retention (checked).
  ///   - sampleRate: the stream's rate, within `RecorderSettings.sampleRates`.
  ///   - channelCount: the stream's channels; every file has them all.
  ///   - encoding: the sample encoding of the files.
  ///   - directory: where the files and the session's index go.
  ///   - clock: places timeline frames in wall-clock time.
  ///   - source: the device or file, for the index.
  ///   - listener: every event, in order, as it is written to the index.
  public init(
    settings: RecorderSettings, sampleRate: Double, channelCount: Int,
    encoding: AudioFileEncoding, directory: String, clock: StreamClock, source: String,
    listener: @escaping (RecorderEvent) -> Void
  ) throws(RecorderError) {
    guard RecorderSettings.sampleRates.contains(sampleRate) else {
      throw .unsupportedRate(sampleRate)
    }
    self.settings = settings
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.encoding = encoding
    self.clock = clock
    self.listener = listener
    var trimmed = directory
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
    self.directory = trimmed
    func frames(_ seconds: Double) -> Int64 { Int64((seconds * sampleRate).rounded()) }
    preRoll = frames(settings.preRoll)
    hang = max(1, frames(settings.hang))
    minimum = frames(settings.minimum)
    maximum = max(1, frames(settings.maximum))
    forcedMaximum = max(maximum + 1, frames(settings.maximum * RecorderSettings.forcedSplitFactor))
    callHang = frames(settings.callHang)
    switch settings.trigger {
    case .talk:
      triggerLag = frames(settings.meter.talk.holdTime + Self.talkReportSlack)
    case .level(let threshold, let hysteresis, let hold):
      let level = LevelTrigger(
        threshold: threshold, hysteresis: hysteresis, hold: hold, sampleRate: sampleRate,
        channelCount: channelCount)
      levelTrigger = level
      triggerLag = frames(level.endLatency) + 1
    }
    isDecoding = !settings.decodedPlans.isEmpty
    toneLag = isDecoding ? frames(settings.toneLatency) : 0
    tagLag = frames(settings.tagLatency)
    matcher = CallMatcher(starts: settings.startOn)
    if !settings.startOn.isEmpty { calls = ActivityTrack() }
    subTone = settings.subTone.map { SubToneGate(frequency: $0) }
    if subTone != nil { gate = ActivityTrack() }
    // The look-back: pre-roll, the triggers' delays, a pending
    // transmission's minimum and hang, and what may arrive at once.
    let reach =
      settings.preRoll + settings.minimum + settings.hang
      + max(Double(triggerLag), Double(toneLag)) / sampleRate
    let arrival = max(settings.largestArrival, Double(FileRecording.blockFrames) / sampleRate)
    reachFrames = Int((reach * sampleRate).rounded(.up))
    backlogLimit = max(
      Int64(reachFrames) * 2, frames(max(settings.largestBacklog, settings.largestArrival)))
    ring = LookbackRing(
      capacity: reachFrames + Int((arrival * sampleRate).rounded(.up)), channelCount: channelCount)

    try Self.makeDirectory(self.directory)
    store = RecordingStore(directory: self.directory, policy: settings.retention)
    let started = clock.time(ofFrame: 0)
    index = try SessionIndex(
      directory: self.directory,
      prefix: SessionFiles.indexPrefix
        + FileNaming(template: FileNaming.defaultTemplate)
        .name(epochSeconds: started, trigger: "", count: 0))
    let name = index.name
    indexName = name
    store.sessionIndexPath = index.path
    emit(
      .sessionStarted(
        SessionStart(
          start: started, sampleRate: sampleRate, channelCount: channelCount,
          encoding: encoding.rawValue, source: source, indexName: name,
          trigger: settings.trigger.label, startOn: settings.startOn.map(\.label),
          subTone: settings.subTone, preRoll: settings.preRoll, hang: settings.hang,
          minimum: settings.minimum, maximum: settings.maximum)))
    for entry in store.expire(now: SystemClock.now) { reportDeleted(entry, reason: "keep_days") }
  }

  static func makeDirectory(_ path: String) throws(RecorderError) {
    let failure = RecordingFile.makeParent(of: path + "/x")
    var status = stat()
    guard stat(path, &status) == 0 else {
      // Why the folder could not be made (a read-only parent), else why it is not there.
      throw .cannotCreate(path: path, reason: String(cString: strerror(failure ?? errno)))
    }
    guard status.st_mode & S_IFMT == S_IFDIR else { throw .notDirectory(path: path) }
    guard access(path, W_OK) == 0 else {
      throw .cannotCreate(path: path, reason: "not writable")
    }
  }

  // MARK: What the timeline brings

  /// The frames recorded so far on the timeline (gaps included).
  public var timelineFrames: Int64 { ring.endFrame }

  /// Bytes of recordings, sidecars and indexes the retention counts.
  public var diskUsage: Int64 { store.usage }

  /// Bytes the file system of the directory lets micloop write (`nil`
  /// when it cannot tell).
  public var freeBytes: Int64? { store.freeBytes() }

  /// The file being written, if any (its `.part` name relative to the directory).
  public var openFileName: String? {
    current?.file.map { $0.name + ".part." + $0.fileExtension }
  }

  /// Seconds of the file being written.
  public var openFileSeconds: Double {
    Double(current?.file?.frames ?? 0) / sampleRate
  }

  /// The next captured frames, interleaved.
  public func append(_ samples: UnsafePointer<Float>, frameCount: Int) {
    guard frameCount > 0, !isFinished else { return }
    framesSinceUpdate += frameCount
    let newEnd = ring.endFrame + Int64(frameCount)
    if newEnd - firstUndecidedFrame > backlogLimit { catchUp(before: newEnd - backlogLimit) }
    // More than `largestArrival` between two updates, or a trigger further
    // behind than its delay, would push out frames not yet decided: the
    // look-back grows to hold them instead. (At least doubling: a caller
    // that appends many blocks between updates grows it a few times, not
    // at every block.)
    let needed = max(reachFrames + framesSinceUpdate, Int(newEnd - firstUndecidedFrame))
    if needed > ring.capacity { ring.grow(toHold: max(needed, 2 * ring.capacity)) }
    ring.append(samples, frameCount: frameCount)
    if var level = levelTrigger {
      level.process(samples, frameCount: frameCount) { isStart, frame in
        if isStart { trigger.open(at: frame) } else { trigger.close(at: frame) }
      }
      levelTrigger = level
      detected = ring.endFrame
    }
  }

  /// Notes that `streamFrames` frames of the stream had been captured at
  /// `epochSeconds` (live streams; see `StreamClock`).
  public func observeArrival(streamFrames: Int64, at epochSeconds: Double) {
    clock.observe(frame: timeline(streamFrame: streamFrames), at: epochSeconds)
  }

  /// The timeline frame of stream frame `frame`.
  func timeline(streamFrame frame: Int64) -> Int64 {
    var offset: Int64 = 0
    for entry in offsets where entry.streamFrame <= frame { offset = entry.offset }
    return frame + offset
  }

  func timeline(_ seconds: Double) -> Int64 {
    timeline(streamFrame: Int64((seconds * sampleRate).rounded()))
  }

  /// The talk detector opened (`isStart`) or closed at `time` seconds of
  /// stream time (with the `talk` trigger).
  public func talk(isStart: Bool, at time: Double) {
    guard case .talk = settings.trigger else { return }
    let frame = timeline(time)
    if isStart {
      trigger.open(at: frame)
    } else if let start = trigger.spans.last?.start, trigger.isOpen {
      trigger.close(at: max(start + 1, refinedEnd(frame)))
    }
  }

  /// The talk detector has heard the stream up to `time` seconds.
  public func detector(reached time: Double) {
    guard case .talk = settings.trigger else { return }
    detected = max(detected, timeline(time))
  }

  /// A decoded tone, call or page (stream time): a tag, and maybe a call
  /// that starts a recording or the sub-tone that gates one.
  public func tone(_ event: ToneDecoderEvent) {
    let (time, duration) = event.span
    let tag = RecordingTag(
      event: event, startFrame: timeline(time), endFrame: timeline(time + duration))
    tags.append(tag)
    emit(.tone(tag))
    if let subTone {
      switch event {
      case .toneStart(let tone) where subTone.matches(tone):
        if !(gate!.isActive(at: tag.startFrame)) { gate!.open(at: tag.startFrame) }
      case .tone(let tone) where subTone.matches(tone):
        if gate!.isOpen {
          gate!.close(at: tag.endFrame)
        } else {
          gate!.add(start: tag.startFrame, end: tag.endFrame)
        }
      default: break
      }
    }
    guard calls != nil else { return }
    for call in matcher.match(event) {
      let start = timeline(call.start)
      let end = timeline(call.end)
      // Active through the call, and long enough after it that the hang
      // ends `callHang` after the call: the announcement follows.
      calls!.add(start: start, end: max(end, end + callHang - hang))
      callLabels.append((start, end, call.label))
      if callLabels.count > 256 { callLabels.removeFirst() }
    }
  }

  /// The tone decoder has heard `frames` frames of the stream.
  public func decoder(reached frames: Int64) {
    decoded = max(decoded, timeline(streamFrame: frames))
  }

  /// A capture xrun at `time` seconds of stream time; `lostFrames` when
  /// the backend knows how many frames it lost (they become a gap).
  public func xrun(at time: Double, lostFrames: Int?) {
    let frame = min(timeline(time), ring.endFrame)
    summary.xruns += 1
    emit(.xrun(frame: frame, lostFrames: lostFrames))
    if current?.isConfirmed == true { current!.xrunFrames.append(frame) }
    if let lostFrames, lostFrames > 0 {
      gap(frames: Int64(lostFrames), reason: .xrun, detail: nil, streamContinues: false)
    }
  }

  /// Frames missing from the timeline where the audio ends now: the
  /// device went away (`streamContinues` false: stream time stopped too),
  /// or audio the detectors heard never reached the recorder (true).
  /// A transmission in progress ends where the audio stopped.
  public func gap(frames: Int64, reason: GapReason, detail: String?, streamContinues: Bool) {
    guard frames > 0, !isFinished else { return }
    let end = ring.endFrame
    settle(at: end, ending: "gap")
    queueSpan(.gap(startFrame: end, frames: frames, reason: reason, detail: detail))
    spanEnd = end + frames
    ring.skip(frames: frames)
    cursor = end + frames
    if var level = levelTrigger {
      level.jump(to: cursor) { isStart, frame in
        if !isStart { trigger.close(at: frame) }
      }
      levelTrigger = level
    }
    if !streamContinues {
      let offset = offsets.last!.offset
      offsets.append((end - offset, offset + frames))
    }
    if levelTrigger != nil { detected = max(detected, cursor) }
    update()
  }

  /// Ends everything that `end` cuts short: decides the timeline up to it,
  /// closes the transmission there and puts the quiet before it on the
  /// timeline.
  func settle(at end: Int64, ending: String) {
    advance(to: end)
    if let transmission = current {
      switch phase {
      case .hang(let since):
        let expiry = since + hang
        close(at: min(expiry, end), ending: expiry <= end ? "quiet" : ending)
      case .active:
        if transmission.isConfirmed {
          close(at: end, ending: ending)
        } else {
          current!.lastActiveEnd = end
          close(at: end, ending: ending)
        }
      case .idle: break
      }
    }
    if spanEnd < end {
      queueSpan(.idle(startFrame: spanEnd, frames: end - spanEnd))
      spanEnd = end
    }
  }
}
