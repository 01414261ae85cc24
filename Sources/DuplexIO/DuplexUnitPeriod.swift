import Synchronization

/// What the audio thread carries from one period to the next.
struct LoopState {
  var sampleTime: Int64 = 0
  var flags: IOFlags = []
  var isInputDelivered = false
  var isDriftCorrected = false
  var drift = DriftTracker(period: 0, isActive: false)
  /// Frames after start during which xruns count as settling.
  var settlingFrames: Int64 = 0

  init() {}

  init(granted: GrantedConfiguration, settlingTime: Double, isCallbackDriven: Bool) {
    // One graph clock drives both directions of a sound server's client:
    // there is no drift to follow.
    drift = DriftTracker(
      period: granted.periodFrames,
      isActive: granted.inputFormat != nil && granted.outputFormat != nil && !isCallbackDriven)
    settlingFrames = Int64(settlingTime * Double(granted.sampleRate))
  }
}

// MARK: The audio thread

extension DuplexUnit {
  enum Step { case proceed, retry, end }

  func fail(_ code: Int32, _ operation: LoopOperation) {
    failureOperation.store(operation.rawValue, ordering: .relaxed)
    failureCode.store(max(1, code), ordering: .releasing)
  }

  /// Counts one loss in `statistics` (as settling, an overrun or an
  /// underrun). Only the speaker settles: a capture restart loses what was
  /// captured, whenever it happens.
  private func count(xrun flag: IOFlags) {
    if flag == .outputUnderrun && loop.sampleTime < loop.settlingFrames {
      statistics.settlingXruns.add(1, ordering: .relaxed)
    } else if flag == .outputUnderrun {
      statistics.underruns.add(1, ordering: .relaxed)
    } else {
      statistics.overruns.add(1, ordering: .relaxed)
    }
  }

  /// The one place a polled backend's result is judged: go on, try the
  /// period again (woken, or recovered from an xrun), or end the loop.
  func judge(_ result: IOResult, _ operation: LoopOperation, xrun flag: IOFlags, period: Int)
    -> Step
  {
    switch result {
    case .ready: return .proceed
    case .woken: return .retry
    case .failed(let code):
      fail(code, operation)
      return .end
    case .xrun:
      count(xrun: flag)
      loop.flags.insert(flag)
      // A period already given to the client keeps its place in time.
      if loop.isInputDelivered { loop.sampleTime += Int64(period) }
      // A callback-driven backend's server recovers by itself.
      if backend.isCallbackDriven { return .retry }
      // An underrun is the speaker's alone: what capture holds is kept.
      let recovered = flag == .outputUnderrun ? backend.restartPlayback() : backend.restartBoth()
      if case .failed(let code) = recovered {
        fail(code, .restart)
        return .end
      }
      return .retry
    }
  }

  /// The polled backends' loop, on the unit's own audio thread: wait for a
  /// period, run it, until `stop` or a failure.
  func runLoop(_ granted: GrantedConfiguration) {
    defer {
      // Tell the owner first: halting a dead device may hang.
      running.store(false, ordering: .releasing)
      loopEnded.signal()
      // Dropping playback would discard what is queued; a drain plays it.
      if !keepsPlayback.load(ordering: .acquiring) || failureCode.load(ordering: .acquiring) != 0 {
        backend.halt()
      }
      halted.signal()
    }
    let period = granted.periodFrames
    while !stopRequested.load(ordering: .acquiring) {
      loop.isInputDelivered = false
      switch judge(backend.waitForPeriod(), .wait, xrun: .inputOverrun, period: period) {
      case .proceed: break
      case .retry: continue
      case .end: return
      }
      switch runPeriod(frames: period, granted: granted) {
      case .proceed, .retry: continue
      case .end: return
      }
    }
  }

  /// One period of `period` frames: read the capture, the client's input
  /// callback, its render callback, write the playback; then the period's
  /// bookkeeping. Runs on whichever thread drives the unit.
  func runPeriod(frames period: Int, granted: GrantedConfiguration) -> Step {
    let hasInput = granted.inputFormat != nil
    if let format = granted.inputFormat {
      let got = backend.read(captureRaw, frames: period)
      let step = judge(got, .capture, xrun: .inputOverrun, period: period)
      guard step == .proceed else { return step }
      let stamp = AudioTimeStamp(sampleTime: loop.sampleTime, hostTime: backend.hostTime())
      client.inputAvailable(
        CapturedInput(
          raw: captureRaw, format: format, frameCount: period,
          channelCount: granted.inputChannelCount),
        timeStamp: stamp, flags: loop.flags)
      loop.isInputDelivered = true
    }
    if let format = granted.outputFormat {
      let outputChannels = granted.outputChannelCount
      let outputSamples = period * outputChannels
      let stamp = AudioTimeStamp(
        sampleTime: loop.sampleTime,
        hostTime: hasInput ? backend.hostTime() : MonotonicClock.now())
      let base = outputBuffer.baseAddress!
      base.update(repeating: 0, count: outputSamples)
      var isSilence = true
      client.renderOutput(
        OutputPeriod(
          samples: UnsafeMutableBufferPointer(start: base, count: outputSamples),
          frameCount: period, channelCount: outputChannels),
        timeStamp: stamp, flags: loop.flags, isSilence: &isSilence)
      // Follow a playback clock that runs apart from the capture clock.
      let adjustment = loop.drift.adjustment()
      let frames = period - adjustment
      if adjustment < 0 {
        // Repeat the last frame to stretch the period.
        for frame in period..<frames {
          for channel in 0..<outputChannels {
            base[frame * outputChannels + channel] = base[(period - 1) * outputChannels + channel]
          }
        }
      }
      if adjustment != 0 {
        statistics.driftCorrectedFrames.add(adjustment, ordering: .relaxed)
        loop.isDriftCorrected = true
      }
      if isSilence && adjustment >= 0 {
        playbackRaw.initializeMemory(
          as: UInt8.self, repeating: 0, count: frames * outputChannels * format.byteCount)
      } else {
        format.encode(base, into: playbackRaw, count: frames * outputChannels)
      }
      let written = backend.write(playbackRaw, frames: frames)
      let step = judge(written, .playback, xrun: .outputUnderrun, period: period)
      guard step == .proceed else { return step }
      let delay = backend.outputDelay()
      loop.drift.observe(delay: delay)
      if delay > statistics.maximumOutputDelay.load(ordering: .relaxed) {
        statistics.maximumOutputDelay.store(delay, ordering: .relaxed)
      }
    }
    // The next period tells the client what this one corrected.
    loop.flags = loop.isDriftCorrected ? .driftCorrected : []
    loop.isDriftCorrected = false
    loop.sampleTime += Int64(period)
    statistics.periods.add(1, ordering: .relaxed)
    return .proceed
  }

  // MARK: Callback-driven backends

  /// One server cycle (the server's real-time thread): the losses it
  /// reports are counted and flagged in this period, then the period runs.
  /// Nothing runs once `stop` was asked or the loop failed; `stop` waits
  /// for a cycle already inside to finish.
  func runCycle(frames: Int, losses: CycleLosses) {
    isInCycle.store(true, ordering: .sequentiallyConsistent)
    defer { isInCycle.store(false, ordering: .releasing) }
    guard !stopRequested.load(ordering: .sequentiallyConsistent),
      running.load(ordering: .acquiring), let granted
    else { return }
    if !losses.isEmpty { note(losses, granted: granted) }
    loop.isInputDelivered = false
    if runPeriod(frames: frames, granted: granted) == .end {
      running.store(false, ordering: .releasing)
      loopEnded.signal()
    }
  }

  /// Counts what a server lost as xruns (an overrun when capturing, an
  /// underrun when only playing) and flags the period on each bus in use.
  private func note(_ losses: CycleLosses, granted: GrantedConfiguration) {
    let flag: IOFlags = granted.inputFormat != nil ? .inputOverrun : .outputUnderrun
    for _ in 0..<losses.xruns { count(xrun: flag) }
    if losses.lostFrames > 0 { statistics.lostFrames.add(losses.lostFrames, ordering: .relaxed) }
    if granted.inputFormat != nil { loop.flags.insert(.inputOverrun) }
    if granted.outputFormat != nil { loop.flags.insert(.outputUnderrun) }
  }

  /// The server ended the streams (its own thread, not the audio thread).
  func serverEnded(code: Int32) {
    guard running.load(ordering: .acquiring) else { return }
    fail(code, .wait)
    running.store(false, ordering: .releasing)
    loopEnded.signal()
  }
}
