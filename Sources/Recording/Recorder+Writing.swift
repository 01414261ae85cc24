import AudioFiles
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Writing decided audio into recording files: opening, writing through
/// a target frame, closing with a sidecar, and what a shortage of disk
/// space does. Control thread only.
extension Recorder {
  /// Writes what is decided to belong to the open file.
  func writeDecided() {
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
  func write(through target: Int64) {
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

  func shortageName(_ shortage: RecordingStore.Shortage?) -> String? {
    switch shortage {
    case .maximumBytes?: "max_bytes"
    case .minimumFree?: "min_free"
    case .diskFull?: "disk_full"
    case nil: nil
    }
  }

  func gapReason(_ shortage: RecordingStore.Shortage) -> GapReason {
    switch shortage {
    case .maximumBytes: .maximumBytes
    case .minimumFree: .minimumFree
    case .diskFull: .diskFull
    }
  }

  /// The open file ends where its frames end; what follows is lost until
  /// the disk takes data again.
  func loseFile(reason: GapReason, detail: String?) {
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
  /// stopped, what goes on meanwhile and what frees the way: the one line
  /// a shortage gets (the session's end adds none).
  func reportShortage(_ reason: GapReason, at frame: Int64, detail: String?) {
    guard !isShortageReported else { return }
    isShortageReported = true
    let (cause, fix): (String, RecorderProblem.Fix) =
      switch reason {
      case .diskFull: ("the disk under \(directory) is full", .freeSpaceOrSetABudget)
      case .maximumBytes:
        (
          "\(directory) holds the byte budget and no closed recording is left to delete",
          .raiseTheByteBudget
        )
      case .minimumFree:
        (
          "the disk under \(directory) is down to the free-space floor and no closed recording is left to delete",
          .freeSpaceOrLowerTheFloor
        )
      default:
        (
          "cannot write to \(directory)" + (detail.map { " (\($0))" } ?? ""),
          .checkTheDirectory
        )
      }
    emit(
      .problem(
        RecorderProblem(
          cause: "\(cause): recording stopped at \(Self.seconds(frame, sampleRate)) s", fix: fix,
          meanwhile:
            "Capture goes on, each lost span is a \(reason.rawValue) gap in \(indexName), and recording resumes by itself when there is room"
        )))
  }

  /// After a loss, whether a file could open again (tried once a second).
  func retryAfterLoss() -> Bool {
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

  func openFile(at frame: Int64) {
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
    do throws(AudioFileError) {
      let file = try RecordingFile(
        directory: directory, base: base, fileExtension: settings.container.fileExtension,
        startFrame: frame, startTime: start, sampleRate: sampleRate, channelCount: channelCount,
        encoding: encoding, broadcast: broadcastInfo(start: start, label: current!.label))
      current!.file = file
      current!.part += 1
      current!.written = frame
      store.openBytes = file.diskBytes
      emit(
        .opened(
          name: file.name + ".part." + file.fileExtension, startFrame: frame, start: start,
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

  /// The `bext` chunk of a file starting at `start` (seconds since 1970).
  func broadcastInfo(start: Double, label: String) -> BroadcastInfo {
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
      originator: SessionFiles.originator,
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
  func closeFile(_ file: RecordingFile, ending: String) {
    guard file.frames > 0 else {
      // The transmission ended where its file began: nothing to keep.
      file.discard()
      store.openBytes = 0
      current!.file = nil
      return
    }
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
  func publishClosed(all: Bool) {
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
            RecorderProblem(
              cause:
                "\(item.file.partPath): cannot write its sidecar (\(problem)); it keeps its .part name"
            )))
        item.record.name = item.file.name + ".part." + item.file.fileExtension
        item.record.path = item.file.partPath
      }
      store.add(
        audio: item.record.path, sidecar: item.file.hasSidecar ? item.file.sidecarPath : nil)
      if let slot = queue.firstIndex(where: { $0.closingID == item.id }) {
        queue[slot].event = .recording(item.record)
      }
      closing.remove(at: index)
    }
    flushQueue()
  }
}
