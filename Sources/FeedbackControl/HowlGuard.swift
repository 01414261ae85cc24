import SignalDSP
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Feedback (howl) protection for a live output: notches placed at the
/// frequency of a howl as it grows, deepened while it keeps growing
/// through them, lifted after a quiet time; and a broadband duck as the
/// last resort.
///
/// It sits in the output path and adds no latency: the notches are IIR
/// filters (`NotchBank`), the duck a gain; the detector
/// (`HowlDetector`) reads the output after both, so a notch that is too
/// shallow shows the howl still growing and is deepened. While no notch is
/// set and the duck is at unity the guard leaves every sample untouched,
/// bit for bit.
///
/// With a `RingOutPlan` (the loop's measured response), the notches a gain
/// needs are set the moment the gain gets there, before any howl grows;
/// the detector still watches for what the plan did not foresee. Without
/// one, a plan learned while the loop runs (`offerLearnedPlan`, from
/// `LoopLearner` and `LearnedLoop` on the control thread) does the same.
///
/// `prepare`-time work happens in `init` (FFTW plans, buffers); `process`
/// runs on the audio thread and never allocates, locks or throws: what it
/// does comes back through `emit` as plain `HowlGuardEvent` values (the
/// live job pushes them into a ring for the control thread).
public final class HowlGuard: @unchecked Sendable {
  public let settings: HowlGuardSettings
  public let sampleRate: Double
  public let channelCount: Int
  /// The notches (inspect between periods; the audio thread owns them).
  public let bank: NotchBank
  private let detector: HowlDetector
  private let mono: UnsafeMutablePointer<Float>
  private let maximumFrameCount: Int

  /// Broadband cut now (dB, 0 or more) and its linear ramp.
  public private(set) var duckDepth = 0.0
  private var duckGain: Float = 1
  private var duckTarget: Float = 1
  private var duckStep: Float = 0
  private var duckRemaining = 0
  private let duckRampFrames: Int
  /// When the duck last went down, in seconds of stream time.
  private var lastDuck = -Double.infinity
  private var lastDuckRelease = -Double.infinity

  /// Per slot: when the notch last acted (placed or deepened), and when it was last lifted a step.
  private var lastActivity: [Double]
  private var lastLift: [Double]
  /// Times of the latest new notches, for "several howls at once".
  private var recentNotches: [Double]
  private var recentIndex = 0

  /// The time of the frame after the last processed.
  private var now = 0.0
  /// The gain of the previous call (NaN before the first) and until when
  /// the detector stays alert after the gain was raised.
  private var previousGain = Double.nan
  private var alertUntil = -Double.infinity
  /// Until when the last gain rise keeps the detector unsettled.
  private var unsettledUntil = -Double.infinity

  /// Notches set ahead for the gain, if the loop's response is known.
  public let ringOut: RingOutPlan?
  /// A learned plan offered by the control thread and not yet taken up,
  /// and one the audio thread has put aside for the control thread to
  /// release (each retained once, or nil).
  private let offeredPlan = Atomic<UnsafeMutableRawPointer?>(nil)
  private let retiredPlan = Atomic<UnsafeMutableRawPointer?>(nil)
  /// The learned plan in force (audio thread; retained by its offer).
  private var learnedPlan: UnsafeMutableRawPointer?
  /// The gain followed upwards no faster than `learnedRise` per
  /// `learnedRiseTime` (dB; NaN before the first period), and the gain of
  /// the jump that let the learned plan act (−∞: none).
  private var riseBase = Double.nan
  private var jumpGain = -Double.infinity
  /// The plan's step in force (−1: none), the bank slot of each of its
  /// notches (−1: none free), and the duck it needs.
  private var plannedStep = -1
  private var plannedSlots: [Int]
  private var plannedDuck = 0.0

  /// - Parameters:
  ///   - channelCount: interleaved channels of the output.
  ///   - maximumFrameCount: the most frames one `process` call gets.
  ///   - ringOut: notches to set ahead as the gain rises (same sample rate).
  ///   - learns: whether learned plans will be offered (their first use is
  ///     then rehearsed here, off the audio thread).
  public init(
    settings: HowlGuardSettings = HowlGuardSettings(), sampleRate: Double, channelCount: Int,
    maximumFrameCount: Int, ringOut: RingOutPlan? = nil, learns: Bool = false
  ) {
    self.settings = settings
    self.ringOut = ringOut
    plannedSlots = [Int](repeating: -1, count: max(1, settings.notchCount))
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.maximumFrameCount = maximumFrameCount
    bank = NotchBank(
      capacity: settings.notchCount, channelCount: channelCount, sampleRate: sampleRate,
      quality: settings.notchQuality, rampDuration: settings.depthRampDuration)
    detector = HowlDetector(settings: settings, sampleRate: sampleRate)
    mono = .allocate(capacity: max(1, maximumFrameCount))
    mono.initialize(repeating: 0, count: max(1, maximumFrameCount))
    duckRampFrames = max(1, Int((settings.duckRampDuration * sampleRate).rounded()))
    lastActivity = [Double](repeating: 0, count: settings.notchCount)
    lastLift = [Double](repeating: 0, count: settings.notchCount)
    recentNotches = [Double](repeating: -Double.infinity, count: max(1, settings.simultaneousHowls))
    warmUp(learns: learns && ringOut == nil)
  }

  deinit {
    mono.deallocate()
    for plan in [
      offeredPlan.load(ordering: .acquiring), retiredPlan.load(ordering: .acquiring), learnedPlan,
    ] {
      if let plan { Unmanaged<RingOutPlan>.fromOpaque(plan).release() }
    }
  }

  /// Offers a plan learned while the loop runs (control thread): the audio
  /// thread takes it up at the start of a period, in place of the last
  /// (an offer not yet taken up is replaced). Ignored with a measured plan.
  public func offerLearnedPlan(_ plan: RingOutPlan) {
    releaseRetiredPlan()
    let offer = Unmanaged.passRetained(plan).toOpaque()
    if let stale = offeredPlan.exchange(offer, ordering: .acquiringAndReleasing) {
      Unmanaged<RingOutPlan>.fromOpaque(stale).release()
    }
  }

  /// Releases the learned plan the audio thread put aside, if any (control thread).
  public func releaseRetiredPlan() {
    if let retired = retiredPlan.exchange(nil, ordering: .acquiringAndReleasing) {
      Unmanaged<RingOutPlan>.fromOpaque(retired).release()
    }
  }

  /// The plan in force: the measured one, or the learned one (audio thread).
  private var plan: RingOutPlan? {
    ringOut ?? learnedPlan.map { Unmanaged<RingOutPlan>.fromOpaque($0).takeUnretainedValue() }
  }

  /// Takes up a learned plan on offer, when the last one put aside has been
  /// released (audio thread: no release here).
  private func takeOfferedPlan() {
    guard ringOut == nil, offeredPlan.load(ordering: .acquiring) != nil,
      retiredPlan.load(ordering: .acquiring) == nil,
      let offer = offeredPlan.exchange(nil, ordering: .acquiringAndReleasing)
    else { return }
    retiredPlan.store(learnedPlan, ordering: .releasing)
    learnedPlan = offer
    // The new plan decides afresh which notches the gain needs.
    plannedStep = -1
  }

  /// Runs every path of `process` once — analysis, a notch, deepening, the
  /// duck, lifting — and then starts afresh, so that whatever the Swift
  /// runtime sets up on first use happens here, not on the audio thread.
  private func warmUp(learns: Bool) {
    let frames = detector.frameLength + detector.hop
    let silence = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    defer { silence.deallocate() }
    silence.initialize(repeating: 0, count: frames)
    detector.analyze(silence, count: frames, gainDecibels: 0) { _ in }
    let finding = HowlDetector.Finding(frequency: sampleRate / 8, level: 0, growth: 100)
    act(on: finding, gainDecibels: 0) { _ in }
    act(on: finding, gainDecibels: 0) { _ in }
    if let ringOut {
      applyPlan(gainDecibels: ringOut.gain(ofStep: ringOut.stepCount - 1)) { _ in }
      applyPlan(gainDecibels: ringOut.gain(ofStep: 0)) { _ in }
    } else if learns, let rehearsal = Self.rehearsalPlan(sampleRate: sampleRate, settings: settings)
    {
      offerLearnedPlan(rehearsal)
      takeOfferedPlan()
      applyPlan(gainDecibels: rehearsal.gain(ofStep: rehearsal.stepCount - 1)) { _ in }
      offerLearnedPlan(rehearsal)
      takeOfferedPlan()
      applyPlan(gainDecibels: rehearsal.gain(ofStep: 0)) { _ in }
      releaseRetiredPlan()
      if let learnedPlan { Unmanaged<RingOutPlan>.fromOpaque(learnedPlan).release() }
      learnedPlan = nil
    }
    now = settings.liftDelay + settings.duckHold + 1
    liftQuietNotches { _ in }
    releaseDuck { _ in }
    applyDuck(silence, frameCount: min(frames, maximumFrameCount))
    // Afresh.
    bank.removeAll()
    detector.reset()
    duckDepth = 0
    duckGain = 1
    duckTarget = 1
    duckStep = 0
    duckRemaining = 0
    lastDuck = -Double.infinity
    lastDuckRelease = -Double.infinity
    for slot in 0..<settings.notchCount {
      lastActivity[slot] = 0
      lastLift[slot] = 0
    }
    for index in 0..<recentNotches.count { recentNotches[index] = -Double.infinity }
    recentIndex = 0
    previousGain = .nan
    alertUntil = -.infinity
    unsettledUntil = -.infinity
    plannedStep = -1
    plannedDuck = 0
    for index in plannedSlots.indices { plannedSlots[index] = -1 }
    riseBase = .nan
    jumpGain = -.infinity
    now = 0
  }

  /// A plan for a loop of one echo 10 ms on, to rehearse a learned plan's
  /// first use with.
  private static func rehearsalPlan(sampleRate: Double, settings: HowlGuardSettings)
    -> RingOutPlan?
  {
    var response = [Float](repeating: 0, count: max(2, Int(0.01 * sampleRate) + 1))
    response[response.count - 1] = 0.5
    return RingOutPlan(impulseResponse: response, sampleRate: sampleRate, settings: settings)
  }

  /// Whether the guard is leaving the output untouched (no notch, no duck).
  public var isIdle: Bool { bank.isEmpty && duckDepth == 0 && duckRemaining == 0 && duckGain == 1 }

  /// Guards `frameCount` interleaved frames in place (audio thread).
  /// - Parameters:
  ///   - time: stream time of the first frame, in seconds.
  ///   - gainDecibels: the gain the output gets after the guard (for the
  ///     detector's level floor).
  ///   - emit: receives what the guard decided in this call.
  public func process(
    _ samples: UnsafeMutablePointer<Float>, frameCount: Int, time: Double, gainDecibels: Double,
    emit: (HowlGuardEvent) -> Void
  ) {
    let frames = min(frameCount, maximumFrameCount)
    now = time + Double(frames) / sampleRate
    takeOfferedPlan()
    followJumps(gainDecibels: gainDecibels, seconds: Double(frames) / sampleRate)
    applyPlan(gainDecibels: gainDecibels, emit: emit)
    bank.process(samples, frameCount: frames)
    applyDuck(samples, frameCount: frames)
    let channels = channelCount
    if channels == 1 {
      mono.update(from: samples, count: frames)
    } else {
      let scale = 1 / Float(channels)
      for frame in 0..<frames {
        var sum: Float = 0
        for channel in 0..<channels { sum += samples[frame * channels + channel] }
        mono[frame] = sum * scale
      }
    }
    // A raised gain is how a loop most often goes past its limit: for a
    // while, steep growth is judged over the short span.
    // A rise the ring-out plan covers is no alarm: the loop as measured
    // stays under its limit there (what it builds up settling is not a howl).
    if gainDecibels > previousGain + settings.alertRise && !(ringOut?.covers(gainDecibels) ?? false)
    {
      alertUntil = now + settings.alertDuration
      unsettledUntil = now + settings.settleTime
    }
    previousGain = gainDecibels
    // A loop the guard holds down (a notch, the duck) was past its limit
    // lately: a howl may come back as it lifts, so nothing settles until
    // `settleTime` after it let go.
    if !isIdle { unsettledUntil = max(unsettledUntil, now + settings.settleTime) }
    detector.isAlert = now < alertUntil
    detector.isSettled = now >= unsettledUntil
    detector.analyze(mono, count: frames, gainDecibels: gainDecibels) { finding in
      act(on: finding, gainDecibels: gainDecibels, emit: emit)
    }
    liftQuietNotches(emit: emit)
    releaseDuck(emit: emit)
  }

  // MARK: Decisions

  /// Notes a jump of the gain, which lets a learned plan act while the
  /// gain stays up; a fall of more than the jump's size ends it.
  private func followJumps(gainDecibels: Double, seconds: Double) {
    if riseBase.isNaN { riseBase = gainDecibels }
    if gainDecibels - riseBase > settings.learnedRise { jumpGain = max(jumpGain, gainDecibels) }
    if gainDecibels < jumpGain - settings.learnedRise { jumpGain = -.infinity }
    let climb = settings.learnedRise / max(1e-3, settings.learnedRiseTime) * seconds
    riseBase = min(gainDecibels, riseBase + climb)
  }

  /// Sets the notches and the duck the ring-out plan gives for the gain,
  /// and keeps them from lifting while the gain needs them.
  private func applyPlan(gainDecibels: Double, emit: (HowlGuardEvent) -> Void) {
    let isLearned = self.ringOut == nil
    guard let ringOut = plan, !isLearned || jumpGain > -.infinity,
      let step = ringOut.step(at: gainDecibels)
    else {
      plannedStep = -1
      plannedDuck = 0
      return
    }
    let count = ringOut.notchCount(step)
    if step != plannedStep {
      let halfWidth = settings.notchHalfWidth
      let reach = settings.ringOutReach
      var duckNeeded = ringOut.duck(ofStep: step)
      for index in 0..<count {
        let notch = ringOut.notch(index, ofStep: step)
        if let slot = bank.slot(near: notch.frequency, within: reach) {
          plannedSlots[index] = slot
          if bank.depth(slot) < notch.depth {
            bank.setDepth(slot, notch.depth)
            emit(
              HowlGuardEvent(
                action: .deepen, time: now, frequency: bank.frequency(slot), depth: -notch.depth,
                growth: .nan, isPlanned: true, isLearned: isLearned))
          }
        } else if let slot = bank.freeSlot {
          plannedSlots[index] = slot
          bank.place(slot, frequency: notch.frequency, depth: notch.depth)
          emit(
            HowlGuardEvent(
              action: .notch, time: now, frequency: notch.frequency, depth: -notch.depth,
              growth: .nan, isPlanned: true, isLearned: isLearned))
        } else {
          // The bank is full of notches for howls found: the duck stands in.
          plannedSlots[index] = -1
          duckNeeded = max(duckNeeded, notch.depth)
        }
        detector.forget(around: notch.frequency, octaves: halfWidth)
      }
      plannedStep = step
      let duck = min(settings.maximumDuck, duckNeeded)
      if duck > duckDepth {
        duckDepth = duck
        lastDuck = now
        lastDuckRelease = now
        rampDuck()
        emit(
          HowlGuardEvent(
            action: .duck, time: now, frequency: .nan, depth: -duckDepth, growth: .nan,
            isPlanned: true, isLearned: isLearned))
      }
      // A measured plan holds its duck and notches while the gain needs them;
      // a learned one may be wrong (what a talker leaves predictable looks
      // like a loop): they lift as found ones do, and a real loop that grows
      // again is found.
      plannedDuck = isLearned ? 0 : duck
    }
    guard !isLearned else { return }
    for index in 0..<count where plannedSlots[index] >= 0 {
      lastActivity[plannedSlots[index]] = now
      lastLift[plannedSlots[index]] = now
    }
  }

  private func act(
    on finding: HowlDetector.Finding, gainDecibels: Double, emit: (HowlGuardEvent) -> Void
  ) {
    let isLoud = finding.level + gainDecibels >= settings.duckLevel
    let needed = depth(forGrowth: finding.growth)
    var placed = false
    let halfWidth = settings.notchHalfWidth
    let reach = settings.sameNotchReach
    if let slot = bank.slot(near: finding.frequency, within: reach) {
      let current = bank.depth(slot)
      if current < settings.maximumDepth {
        let deeper = min(settings.maximumDepth, max(current + settings.depthStep, needed))
        bank.setDepth(slot, deeper)
        lastActivity[slot] = now
        lastLift[slot] = now
        placed = true
        emit(
          HowlGuardEvent(
            action: .deepen, time: now, frequency: bank.frequency(slot), depth: -deeper,
            growth: finding.growth))
      }
      detector.forget(around: bank.frequency(slot), octaves: halfWidth)
      detector.forget(around: finding.frequency, octaves: halfWidth)
    } else if let slot = bank.freeSlot {
      bank.place(slot, frequency: finding.frequency, depth: needed)
      lastActivity[slot] = now
      lastLift[slot] = now
      placed = true
      emit(
        HowlGuardEvent(
          action: .notch, time: now, frequency: finding.frequency, depth: -needed,
          growth: finding.growth))
      detector.forget(around: finding.frequency, octaves: halfWidth)
      recentNotches[recentIndex] = now
      recentIndex = (recentIndex + 1) % recentNotches.count
    }
    // Several howls at once: the last `simultaneousHowls` new notches all within the window.
    var several = true
    for index in 0..<recentNotches.count
    where now - recentNotches[index] > settings.simultaneousWindow {
      several = false
    }
    if !placed || several || isLoud { duck(growth: finding.growth, emit: emit) }
  }

  /// The first depth of a notch for a howl growing `growth` dB/s: the
  /// faster it grows, the further the loop is past its limit.
  func depth(forGrowth growth: Double) -> Double {
    let wanted = settings.minimumDepth + settings.depthPerGrowth * max(0, growth)
    let steps = (wanted / settings.depthStep).rounded(.up)
    return min(settings.maximumDepth, max(settings.minimumDepth, steps * settings.depthStep))
  }

  private func duck(growth: Double, emit: (HowlGuardEvent) -> Void) {
    // One step per howl-growth period at most: a duck needs a loop's time to show.
    guard now - lastDuck >= settings.duckInterval, duckDepth < settings.maximumDuck else { return }
    duckDepth = min(settings.maximumDuck, duckDepth + settings.duckStep)
    lastDuck = now
    lastDuckRelease = now
    rampDuck()
    detector.forgetAll()
    emit(
      HowlGuardEvent(action: .duck, time: now, frequency: .nan, depth: -duckDepth, growth: growth))
  }

  private func releaseDuck(emit: (HowlGuardEvent) -> Void) {
    guard duckDepth > plannedDuck, now - lastDuck >= settings.duckHold,
      now - lastDuckRelease >= settings.duckReleaseInterval
    else { return }
    duckDepth = max(plannedDuck, duckDepth - settings.duckReleaseStep)
    lastDuckRelease = now
    rampDuck()
    emit(HowlGuardEvent(action: .lift, time: now, frequency: .nan, depth: -duckDepth, growth: .nan))
  }

  private func rampDuck() {
    duckTarget = Float(Decibels.amplitude(-duckDepth))
    duckRemaining = duckRampFrames
    duckStep = (duckTarget - duckGain) / Float(duckRampFrames)
  }

  private func applyDuck(_ samples: UnsafeMutablePointer<Float>, frameCount: Int) {
    guard duckRemaining > 0 || duckGain != 1 else { return }
    let channels = channelCount
    for frame in 0..<frameCount {
      if duckRemaining > 0 {
        duckRemaining -= 1
        duckGain = duckRemaining == 0 ? duckTarget : duckGain + duckStep
      }
      for channel in 0..<channels { samples[frame * channels + channel] *= duckGain }
    }
  }

  private func liftQuietNotches(emit: (HowlGuardEvent) -> Void) {
    for slot in 0..<bank.capacity where bank.isActive(slot) && bank.depth(slot) > 0 {
      guard now - lastActivity[slot] >= settings.liftDelay,
        now - lastLift[slot] >= settings.liftInterval
      else { continue }
      let shallower = max(0, bank.depth(slot) - settings.liftStep)
      bank.setDepth(slot, shallower)
      lastLift[slot] = now
      emit(
        HowlGuardEvent(
          action: .lift, time: now, frequency: bank.frequency(slot), depth: -shallower,
          growth: .nan))
    }
  }
}
