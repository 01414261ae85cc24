import AudioFiles
import DuplexIO
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
  private let listener: (RecorderEvent) -> Void

  // Durations in frames.
  private let preRoll: Int64
  private let hang: Int64
  private let minimum: Int64
  private let maximum: Int64
  private let forcedMaximum: Int64
  private let callHang: Int64
  private let triggerLag: Int64
  private let toneLag: Int64
  private let tagLag: Int64
  private let isDecoding: Bool

  private let ring: LookbackRing
  private var trigger = ActivityTrack()
  private var gate: ActivityTrack?
  private var calls: ActivityTrack?
  private var callLabels: [(start: Int64, end: Int64, label: String)] = []
  private var levelTrigger: LevelTrigger?
  private var matcher: CallMatcher
  private let subTone: SubToneGate?
  /// Timeline frames the trigger and the decoder have heard.
  private var detected: Int64 = 0
  private var decoded: Int64 = 0
  /// Where stream time (which stops during a gap) meets the timeline:
  /// from stream frame `streamFrame` on, timeline = stream + `offset`.
  private var offsets: [(streamFrame: Int64, offset: Int64)] = [(0, 0)]

  private enum Phase: Equatable {
    case idle
    case active
    case hang(since: Int64)
  }

  /// One transmission, from its first activity to its close.
  private struct Transmission {
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
  private struct Closing {
    let id: Int
    let file: RecordingFile
    var record: RecordedFile
    var end: Int64 { record.startFrame + record.frames }
    var lastTry = -Double.infinity
  }

  private var cursor: Int64 = 0
  private var phase = Phase.idle
  /// The end of the last span put on the timeline.
  private var spanEnd: Int64 = 0
  private var current: Transmission?
  private var closing: [Closing] = []
  private var nextClosingID = 0
  /// Spans in timeline order; a recording waits for its tags.
  private var queue: [(event: RecorderEvent?, closingID: Int?)] = []
  private var tags: [RecordingTag] = []
  private let store: RecordingStore
  private let index: SessionIndex
  private var summary = SessionSummary(
    frames: 0, files: 0, recordedFrames: 0, blips: 0, gaps: 0, gapFrames: 0, xruns: 0, deleted: 0)
  private var namedFiles = 0
  private var lastMaintenance = -Double.infinity
  private var isFinished = false
  /// Whether the current episode of a full disk (or budget) was reported.
  private var isShortageReported = false
  /// Frames of the timeline lost because the disk or the budget had no room.
  public private(set) var framesLostToDisk: Int64 = 0

  /// Seconds between looks at the disk (age, retries, syncing).
  static let maintenanceInterval = 1.0
  /// Seconds between tries to write again after the disk refused.
  static let retryInterval = 1.0
  /// Frames written to a file at a time.
  static let writeChunk = 4096
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
  ///   - clock: places timeline frames in wall-clock time.
  ///   - source: the device or file, for the index.
  ///   - listener: every event, in order, as it is written to the index.
  public init(
    settings: RecorderSettings, sampleRate: Double, channelCount: Int,
    encoding: AudioFileEncoding, directory: String, clock: StreamClock, source: String,
    listener: @escaping (RecorderEvent) -> Void
  ) throws(RecorderError) {
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
    // transmission's minimum and hang, and a second to spare.
    let lookBack =
      settings.preRoll + settings.minimum + settings.hang
      + max(Double(triggerLag), Double(toneLag)) / sampleRate + 1
    ring = LookbackRing(
      capacity: Int((lookBack * sampleRate).rounded(.up)), channelCount: channelCount)

    try Self.makeDirectory(self.directory)
    store = RecordingStore(directory: self.directory, policy: settings.retention)
    let started = clock.time(ofFrame: 0)
    var name =
      SessionFiles.indexPrefix
      + FileNaming(template: FileNaming.defaultTemplate)
      .name(epochSeconds: started, trigger: "", count: 0) + ".jsonl"
    var attempt = 1
    while access(self.directory + "/" + name, F_OK) == 0 {
      attempt += 1
      name = String(name.dropLast(6).split(separator: "~").first!) + "~\(attempt).jsonl"
    }
    indexName = name
    index = try SessionIndex(path: self.directory + "/" + name)
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

  private static func makeDirectory(_ path: String) throws(RecorderError) {
    RecordingFile.makeParent(of: path + "/x")
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
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
  private func timeline(streamFrame frame: Int64) -> Int64 {
    var offset: Int64 = 0
    for entry in offsets where entry.streamFrame <= frame { offset = entry.offset }
    return frame + offset
  }

  private func timeline(_ seconds: Double) -> Int64 {
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
    let (time, duration): (Double, Double) =
      switch event {
      case .tone(let tone), .toneStart(let tone): (tone.time, tone.duration)
      case .sequence(let sequence): (sequence.time, sequence.duration)
      case .page(let page): (page.time, page.duration)
      }
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
  private func settle(at end: Int64, ending: String) {
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

  // MARK: Deciding

  /// Decides what the reports so far allow, writes what is decided, and
  /// looks after the disk.
  public func update() {
    guard !isFinished else { return }
    advance(to: horizon)
    writeDecided()
    publishClosed(all: false)
    maintain()
  }

  /// Frames before this are known for every trigger.
  private var horizon: Int64 {
    var limit = min(ring.endFrame, detected - triggerLag)
    if gate != nil || calls != nil { limit = min(limit, decoded - toneLag) }
    return limit
  }

  private func isActive(at frame: Int64) -> Bool {
    let triggered = trigger.isActive(at: frame) || (calls?.isActive(at: frame) ?? false)
    guard let gate else { return triggered }
    return triggered && gate.isActive(at: frame)
  }

  /// Whether a transmission may start at `frame`: with calls, only a call
  /// starts one.
  private func startsTransmission(at frame: Int64) -> Bool {
    if let calls { return calls.isActive(at: frame) && (gate?.isActive(at: frame) ?? true) }
    return isActive(at: frame)
  }

  private func nextChange(after frame: Int64) -> Int64? {
    let changes = [
      trigger.nextChange(after: frame), calls?.nextChange(after: frame),
      gate?.nextChange(after: frame),
    ].compactMap { $0 }
    return changes.min()
  }

  private func advance(to limit: Int64) {
    deciding: while cursor < limit {
      let active = isActive(at: cursor)
      let change = min(nextChange(after: cursor) ?? limit, limit)
      switch phase {
      case .idle:
        if active && startsTransmission(at: cursor) {
          begin(at: cursor)
        } else {
          cursor = change
        }
      case .active:
        guard active else {
          enterHang(at: cursor)
          continue
        }
        var stop = change
        if current!.isConfirmed {
          let due = current!.fileStart + forcedMaximum
          if cursor >= due { split(at: cursor) } else { stop = min(stop, due) }
        }
        current!.lastActiveEnd = stop
        current!.activeFrames += stop - cursor
        if !current!.isConfirmed && current!.activeFrames >= minimum { confirm() }
        cursor = stop
      case .hang(let since):
        let expiry = since + hang
        if active {
          if current!.isConfirmed && current!.wantsSplit {
            split(at: max(since, cursor - preRoll))
          }
          phase = .active
          continue
        }
        guard change >= expiry else {
          cursor = change
          continue
        }
        // The hang has passed. If the next transmission starts within a
        // pre-roll of the tail's end, the tail ends where its pre-roll
        // begins (never before the hang's start): each file keeps its own
        // first sounds. Decided once the pre-roll after the tail is known.
        guard change < limit || limit >= expiry + preRoll else { break deciding }
        var end = expiry
        if change < expiry + preRoll, isActive(at: change), startsTransmission(at: change) {
          end = min(expiry, max(since, change - preRoll))
        }
        close(at: end, ending: "quiet")
        cursor = end
      }
    }
    forgetOldActivity()
  }

  private func begin(at frame: Int64) {
    // A start reported later than the triggers' delay: from where it began.
    let reported =
      [trigger.spanStart(holding: frame), calls?.spanStart(holding: frame)]
      .compactMap { $0 }.min() ?? frame
    let start = max(spanEnd, min(reported, frame))
    var label = settings.trigger.label
    if calls != nil,
      let call = callLabels.last(where: {
        $0.start <= frame + 1 && frame < max($0.end, $0.start + 1) + callHang
      })
    {
      label = call.label
    }
    current = Transmission(
      start: start, lastActiveEnd: frame, activeFrames: frame - start, label: label)
    phase = .active
  }

  private func enterHang(at frame: Int64) {
    phase = .hang(since: frame)
    if let transmission = current, transmission.isConfirmed,
      frame - transmission.fileStart >= maximum
    {
      current!.wantsSplit = true
    }
  }

  /// The transmission has lasted `minimum`: its file begins `preRoll`
  /// before it (not before the last span, nor before what the ring holds).
  private func confirm() {
    let fileStart = max(current!.start - preRoll, spanEnd, ring.startFrame)
    if fileStart > spanEnd { queueSpan(.idle(startFrame: spanEnd, frames: fileStart - spanEnd)) }
    spanEnd = fileStart
    current!.isConfirmed = true
    current!.fileStart = fileStart
    current!.written = fileStart
    openFile(at: fileStart)
  }

  /// Ends the transmission at `end`: a blip if it never lasted the
  /// minimum, else its file (or lost span) closes there.
  private func close(at end: Int64, ending: String) {
    guard let transmission = current else { return }
    if transmission.isConfirmed {
      write(through: end)
      if let lost = current!.lost {
        queueSpan(
          .gap(
            startFrame: lost.since, frames: end - lost.since, reason: lost.reason,
            detail: lost.detail))
      } else if let file = current!.file {
        closeFile(file, ending: ending)
      }
      spanEnd = max(spanEnd, end)
    } else {
      // A blip: the quiet before it and its hang stay idle.
      let blipEnd = max(transmission.start, min(transmission.lastActiveEnd, end))
      if transmission.start > spanEnd {
        queueSpan(.idle(startFrame: spanEnd, frames: transmission.start - spanEnd))
      }
      queueSpan(
        .blip(
          startFrame: transmission.start, frames: blipEnd - transmission.start,
          trigger: transmission.label))
      spanEnd = max(spanEnd, blipEnd)
    }
    current = nil
    phase = .idle
  }

  /// Splits the file at `frame`, sample-continuous: the next part begins there.
  private func split(at frame: Int64) {
    write(through: frame)
    if current!.lost == nil, let file = current!.file {
      closeFile(file, ending: "split")
      spanEnd = frame
      current!.fileStart = frame
      current!.wantsSplit = false
      openFile(at: frame)
    } else {
      current!.fileStart = frame
      current!.wantsSplit = false
    }
  }

  // MARK: Writing

  /// Writes what is decided to belong to the open file.
  private func writeDecided() {
    guard let transmission = current, transmission.isConfirmed else { return }
    let target: Int64
    switch phase {
    case .active:
      target = min(ring.endFrame, cursor + hang, transmission.fileStart + forcedMaximum)
    case .hang(let since):
      // The tail's last pre-roll waits: the next transmission may need it.
      target = min(
        ring.endFrame, transmission.wantsSplit ? since : max(since, since + hang - preRoll))
    case .idle: return
    }
    write(through: target)
  }

  /// Writes the ring's frames up to `target` into the open file; on a
  /// full disk they are counted lost instead, and a file opens again once
  /// space returns.
  private func write(through target: Int64) {
    guard current != nil else { return }
    while current!.written < target {
      if current!.lost != nil {
        guard retryAfterLoss() else {
          current!.written = target
          return
        }
        continue
      }
      guard let file = current!.file else {
        current!.written = target
        return
      }
      let end = min(target, current!.written + Int64(Self.writeChunk))
      let (deleted, shortage) = store.makeRoom(for: file.bytes(forFrames: end - current!.written))
      for (entry, reason) in deleted { reportDeleted(entry, reason: shortageName(reason)!) }
      if let shortage {
        loseFile(reason: gapReason(shortage), detail: nil)
        continue
      }
      var failure: AudioFileError?
      ring.read(from: current!.written, to: end) { samples, frames in
        guard failure == nil else { return }
        do throws(AudioFileError) { try file.write(samples, frameCount: frames) } catch {
          failure = error
        }
      }
      if let failure {
        let full = store.freeBytes().map { $0 < RecordingStore.reserve * 2 } ?? false
        loseFile(reason: full ? .diskFull : .writeFailed, detail: failure.description)
        continue
      }
      current!.written = end
      store.openBytes = RecordingFile.roundedUp(file.bytes(forFrames: file.frames) + 4096)
      file.syncIfDue(interval: settings.syncInterval)
    }
  }

  private func shortageName(_ shortage: RecordingStore.Shortage?) -> String? {
    switch shortage {
    case .maximumBytes?: "max_bytes"
    case .minimumFree?: "min_free"
    case .diskFull?: "disk_full"
    case nil: nil
    }
  }

  private func gapReason(_ shortage: RecordingStore.Shortage) -> GapReason {
    switch shortage {
    case .maximumBytes: .maximumBytes
    case .minimumFree: .minimumFree
    case .diskFull: .diskFull
    }
  }

  /// The open file ends where its frames end; what follows is lost until
  /// the disk takes data again.
  private func loseFile(reason: GapReason, detail: String?) {
    var since = current!.written
    if let file = current!.file {
      since = file.startFrame + file.frames
      if file.frames > 0 {
        closeFile(file, ending: reason.rawValue)
      } else {
        file.discard()
        store.openBytes = 0
      }
      current!.file = nil
    }
    current!.written = since
    current!.lost = (since, reason, detail)
    current!.lastRetry = MonotonicClock.seconds
    spanEnd = since
    reportShortage(reason, at: since, detail: detail)
  }

  /// Says once per episode (until a file opens again) why recording
  /// stopped: one line, with what happens next.
  private func reportShortage(_ reason: GapReason, at frame: Int64, detail: String?) {
    guard !isShortageReported else { return }
    isShortageReported = true
    let cause =
      switch reason {
      case .diskFull: "the disk under \(directory) is full"
      case .maximumBytes: "\(directory) holds --max-bytes and no closed recording is left to delete"
      case .minimumFree:
        "the disk under \(directory) is down to --min-free and no closed recording is left to delete"
      default: "cannot write to \(directory)" + (detail.map { " (\($0))" } ?? "")
      }
    emit(
      .problem(
        "\(cause): recording stopped at \(Self.seconds(frame, sampleRate)) s; capture goes on, the lost span is a gap in the index, and recording resumes when there is room"
      ))
  }

  /// After a loss, whether a file could open again (tried once a second).
  private func retryAfterLoss() -> Bool {
    let now = MonotonicClock.seconds
    guard now - current!.lastRetry >= Self.retryInterval || isFinished else { return false }
    current!.lastRetry = now
    let oneSecond = Int64(sampleRate) * Int64(channelCount) * 4
    let (deleted, shortage) = store.makeRoom(for: oneSecond)
    for (entry, reason) in deleted { reportDeleted(entry, reason: shortageName(reason)!) }
    guard shortage == nil, let lost = current!.lost else { return false }
    let resume = current!.written
    queueSpan(
      .gap(
        startFrame: lost.since, frames: resume - lost.since, reason: lost.reason,
        detail: lost.detail))
    spanEnd = resume
    current!.lost = nil
    current!.fileStart = resume
    openFile(at: resume)
    return current!.lost == nil
  }

  private func openFile(at frame: Int64) {
    let (deleted, shortage) = store.makeRoom(for: Int64(sampleRate) * Int64(channelCount) * 4)
    for (entry, reason) in deleted { reportDeleted(entry, reason: shortageName(reason)!) }
    if let shortage {
      current!.file = nil
      current!.written = frame
      current!.lost = (frame, gapReason(shortage), nil)
      current!.lastRetry = MonotonicClock.seconds
      reportShortage(gapReason(shortage), at: frame, detail: nil)
      return
    }
    let start = clock.time(ofFrame: frame)
    namedFiles += 1
    let base = settings.naming.name(
      epochSeconds: start, trigger: current!.label, count: namedFiles)
    let name = uniqueName(base)
    do throws(AudioFileError) {
      let file = try RecordingFile(
        directory: directory, name: name, fileExtension: settings.container.fileExtension,
        startFrame: frame, startTime: start, sampleRate: sampleRate, channelCount: channelCount,
        encoding: encoding, broadcast: broadcastInfo(start: start, label: current!.label))
      current!.file = file
      current!.part += 1
      current!.written = frame
      store.openBytes = file.diskBytes
      emit(
        .opened(
          name: name + ".part." + settings.container.fileExtension, startFrame: frame, start: start,
          trigger: current!.label, part: current!.part))
    } catch {
      let full = store.freeBytes().map { $0 < RecordingStore.reserve * 2 } ?? false
      current!.file = nil
      current!.written = frame
      current!.lost = (frame, full ? .diskFull : .writeFailed, error.description)
      current!.lastRetry = MonotonicClock.seconds
      reportShortage(current!.lost!.reason, at: frame, detail: error.description)
      return
    }
    isShortageReported = false
  }

  /// `base`, or `base-2`, `base-3` … when a file of that name exists.
  private func uniqueName(_ base: String) -> String {
    var name = base
    var attempt = 1
    let fileExtension = settings.container.fileExtension
    func taken(_ name: String) -> Bool {
      let path = directory + "/" + name
      return access(path + "." + fileExtension, F_OK) == 0
        || access(path + ".part." + fileExtension, F_OK) == 0 || access(path + ".json", F_OK) == 0
    }
    while taken(name) {
      attempt += 1
      name = base + "-\(attempt)"
    }
    return name
  }

  /// The `bext` chunk of a file starting at `start` (seconds since 1970).
  private func broadcastInfo(start: Double, label: String) -> BroadcastInfo {
    let time = WallClockTime(epochSeconds: start)
    let bits =
      switch encoding {
      case .pcm16: "16"
      case .pcm24: "24"
      case .pcm32: "32"
      case .float: "32F"
      }
    return BroadcastInfo(
      description: "micloop record, \(label), first sample at \(time.iso8601)",
      originator: "micloop",
      originationDate:
        "\(WallClockTime.pad(time.year, 4))-\(WallClockTime.pad(time.month))-\(WallClockTime.pad(time.day))",
      originationTime:
        "\(WallClockTime.pad(time.hour)):\(WallClockTime.pad(time.minute)):\(WallClockTime.pad(time.second))",
      timeReference: UInt64((time.secondsSinceMidnight * sampleRate).rounded()),
      codingHistory:
        "A=PCM,F=\(Int(sampleRate)),W=\(bits),M=\(channelCount == 1 ? "mono" : channelCount == 2 ? "stereo" : "multi"),T=micloop record\r\n"
    )
  }

  /// Closes `file` at its frames and sets it aside until its tags are in.
  private func closeFile(_ file: RecordingFile, ending: String) {
    file.closeAudio()
    store.openBytes = 0
    let end = file.startFrame + file.frames
    let record = RecordedFile(
      name: file.fileName, path: file.finalPath, sidecarName: file.sidecarName,
      startFrame: file.startFrame, frames: file.frames, start: file.startTime,
      trigger: current!.label, tags: [], part: current!.part, continues: current!.previousName,
      ending: ending,
      xrunFrames: current!.xrunFrames.filter { $0 >= file.startFrame && $0 <= end })
    current!.previousName = file.fileName
    current!.file = nil
    nextClosingID += 1
    closing.append(Closing(id: nextClosingID, file: file, record: record))
    queue.append((nil, nextClosingID))
    spanEnd = max(spanEnd, end)
  }

  /// Gives closed files their tags, sidecars and final names, once the
  /// decoder has heard far enough past their end (`all`: at once).
  private func publishClosed(all: Bool) {
    var index = 0
    while index < closing.count {
      var item = closing[index]
      let ready = all || !isDecoding || decoded >= item.end + tagLag
      let now = MonotonicClock.seconds
      guard ready, all || now - item.lastTry >= Self.retryInterval else {
        index += 1
        continue
      }
      item.record.tags = tags.filter {
        $0.endFrame > item.record.startFrame && $0.startFrame < item.end
      }
      let sidecar = item.record.json(
        sampleRate: sampleRate, event: false, channelCount: channelCount,
        encoding: encoding.rawValue, session: indexName)
      if let problem = item.file.publish(sidecar: sidecar) {
        item.lastTry = now
        closing[index] = item
        if !all {
          index += 1
          continue
        }
        emit(
          .problem(
            "\(item.file.partPath): cannot write its sidecar (\(problem)); it keeps its .part name")
        )
        item.record.name = item.file.name + ".part." + item.file.fileExtension
        item.record.path = item.file.partPath
      }
      store.add(audio: item.record.path, sidecar: problemFree(item) ? item.file.sidecarPath : nil)
      if let slot = queue.firstIndex(where: { $0.closingID == item.id }) {
        queue[slot].event = .recording(item.record)
      }
      closing.remove(at: index)
    }
    flushQueue()
  }

  private func problemFree(_ item: Closing) -> Bool { access(item.file.sidecarPath, F_OK) == 0 }

  // MARK: The index

  private func queueSpan(_ event: RecorderEvent) {
    switch event {
    case .idle(_, let frames), .blip(_, let frames, _), .gap(_, let frames, _, _):
      guard frames > 0 else { return }
    default: break
    }
    queue.append((event, nil))
    flushQueue()
  }

  private func flushQueue() {
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
        if reason != .deviceLost && reason != .xrun && reason != .overflow {
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

  private func emit(_ event: RecorderEvent) {
    index.append(event.json(sampleRate: sampleRate, clock: clock))
    store.sessionIndexBytes = RecordingFile.roundedUp(index.bytes)
    listener(event)
  }

  private func reportDeleted(_ entry: RecordingStore.Entry, reason: String) {
    summary.deleted += 1
    let name =
      entry.audio.hasPrefix(directory + "/")
      ? String(entry.audio.dropFirst(directory.count + 1)) : entry.audio
    emit(.deleted(name: name, bytes: entry.bytes, reason: reason))
  }

  // MARK: Housekeeping

  /// Once a second: deletes what is too old, retries the index, syncs.
  private func maintain() {
    let now = MonotonicClock.seconds
    guard now - lastMaintenance >= Self.maintenanceInterval else { return }
    lastMaintenance = now
    for entry in store.expire(now: SystemClock.now) { reportDeleted(entry, reason: "keep_days") }
    index.flushPending()
    index.syncIfDue(interval: settings.syncInterval)
    current?.file?.syncIfDue(interval: settings.syncInterval)
  }

  /// Forgets activity and tags no decision can need any more.
  private func forgetOldActivity() {
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

  // MARK: Helpers

  /// Moves a reported talk end back to where the sound really stopped:
  /// the detector's median of 50 ms and its envelope's release report an
  /// end some 40 ms after the last loud 10 ms frame. The pause after the
  /// end gives the floor; the last frame 6 dB above it ends the talk.
  private func refinedEnd(_ end: Int64) -> Int64 {
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
    JSONText.fixed(Double(frame) / rate, places: 3)
  }
}
