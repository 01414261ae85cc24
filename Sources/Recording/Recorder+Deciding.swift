import AudioFiles
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// What the recorder decides once the triggers have spoken: where a
/// transmission starts (with its pre-roll), enters its hang, is confirmed,
/// closes or splits. Control thread only.
extension Recorder {
  /// Decides what the reports so far allow, writes what is decided, and
  /// looks after the disk.
  public func update() {
    guard !isFinished else { return }
    framesSinceUpdate = 0
    let decidable = horizon
    if decidable >= ring.endFrame - Int64(reachFrames) { isBacklogReported = false }
    advance(to: decidable)
    writeDecided()
    publishClosed(all: false)
    maintain()
  }

  /// Frames before this are known for every trigger.
  var horizon: Int64 {
    var limit = min(ring.endFrame, detected - triggerLag)
    if gate != nil || calls != nil { limit = min(limit, decoded - toneLag) }
    return limit
  }

  /// The oldest frame a decision may still need from the look-back: the
  /// open file's next frame, a pending transmission's pre-roll, or the
  /// pre-roll of one starting at the cursor.
  var firstUndecidedFrame: Int64 {
    var first = cursor
    if let transmission = current {
      first = min(first, transmission.isConfirmed ? transmission.written : transmission.start)
    }
    return max(spanEnd, first - preRoll)
  }

  /// Makes room in the look-back when a trigger has fallen more than
  /// `backlogLimit` behind the audio (its reports stopped, or its
  /// analysis dropped frames): decides what the triggers allow and, when
  /// that is not enough, decides the frames before `frame` without the
  /// late reports, which is reported once per episode.
  func catchUp(before frame: Int64) {
    advance(to: horizon)
    writeDecided()
    // Only what was heard a look-back's reach ago: the newest frames wait
    // for the triggers' usual delay (a long stretch appended at once, with
    // the triggers keeping up, is decided as usual).
    let target = min(frame, ring.endFrame - Int64(reachFrames))
    guard firstUndecidedFrame < target else { return }
    if !isBacklogReported {
      isBacklogReported = true
      let behind = Self.seconds(ring.endFrame - min(cursor, horizon), sampleRate)
      emit(
        .problem(
          RecorderProblem(
            cause:
              "the triggers fell \(behind) s behind the audio at \(Self.seconds(cursor, sampleRate)) s",
            meanwhile:
              "What they had not reported by then is decided without them, so no audio waits unbounded in memory"
          )))
    }
    advance(to: target)
    writeDecided()
  }

  func isActive(at frame: Int64) -> Bool {
    let triggered = trigger.isActive(at: frame) || (calls?.isActive(at: frame) ?? false)
    guard let gate else { return triggered }
    return triggered && gate.isActive(at: frame)
  }

  /// Whether a transmission may start at `frame`: with calls, only a call
  /// starts one.
  func startsTransmission(at frame: Int64) -> Bool {
    if let calls { return calls.isActive(at: frame) && (gate?.isActive(at: frame) ?? true) }
    return isActive(at: frame)
  }

  func nextChange(after frame: Int64) -> Int64? {
    let changes = [
      trigger.nextChange(after: frame), calls?.nextChange(after: frame),
      gate?.nextChange(after: frame),
    ].compactMap { $0 }
    return changes.min()
  }

  func advance(to limit: Int64) {
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

  func begin(at frame: Int64) {
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

  func enterHang(at frame: Int64) {
    phase = .hang(since: frame)
    if let transmission = current, transmission.isConfirmed,
      frame - transmission.fileStart >= maximum
    {
      current!.wantsSplit = true
    }
  }

  /// The transmission has lasted `minimum`: its file begins `preRoll`
  /// before it (not before the last span, nor before what the ring holds).
  func confirm() {
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
  func close(at end: Int64, ending: String) {
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
  func split(at frame: Int64) {
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
}
