import DuplexIO
import DuplexIOTesting
import FeedbackControl
import Foundation
import MicLoopKit
import SignalDSP

/// What one closed-loop run heard and did.
struct LoopRun {
  /// What the speaker played and the microphone heard, from the first frame.
  var speaker: [Float]
  var microphone: [Float]
  /// What the guard did (empty without a guard).
  var events: [HowlGuardEvent]
}

/// Runs the live loopback job (LiveProcessor on a DuplexUnit) on a
/// simulated device pair in a simulated room, as fast as the processor
/// allows, for `frames` frames at 48 kHz with 256-frame periods and two
/// periods of playback buffering (micloop loopback's defaults). The
/// periods are stepped four at a time (about the control thread's 20 ms
/// cycle), and the control thread's share of the job — learning the loop —
/// runs between steps, as it would keep pace in real time.
func runClosedLoop(
  impulseResponse: [Float], talker: [Float], frames: Int, gain: Double,
  changes: [GainChange] = [], guardSettings: HowlGuardSettings?, ringOut: RingOutPlan? = nil,
  learns: Bool = true
) -> LoopRun {
  let room = SimulatedRoom(
    impulseResponse: impulseResponse, talker: talker, recordingCapacity: frames)
  let device = SimulatedDevicePair(
    periodFrames: Evaluation.period, clock: .handStepped, format: .float, room: room)
  var configuration = DuplexConfiguration(.duplex)
  configuration.sampleRate = Evaluation.rate
  configuration.periodFrames = Evaluation.period
  configuration.periodCount = 2
  configuration.alsa.usesRealtimePriority = false
  configuration.settlingTime = 0
  var settings = LiveSettings()
  settings.meter = nil
  settings.gainDecibels = gain
  settings.gainChanges = changes
  settings.feedbackGuard = guardSettings
  settings.feedbackRingOut = ringOut
  settings.feedbackLearning = learns
  let processor = LiveProcessor(settings: settings)
  let unit = DuplexUnit(configuration: configuration, backend: device, client: processor)
  var events = [HowlGuardEvent]()
  do {
    try unit.initialize()
    try unit.start()
  } catch {
    fatalError("the simulated unit did not start: \(error)")
  }
  var cycles = SteppedCycles(device, periodsPerCycle: Evaluation.periodsPerCycle)
  while room.microphoneFrames < frames {
    cycles.step {
      processor.learnLoop()
      processor.feedbackEvents.drain { events.append(contentsOf: $0) }
    }
  }
  unit.stop()
  processor.feedbackEvents.drain { events.append(contentsOf: $0) }
  let limit = Double(frames) / Double(Evaluation.rate)
  return LoopRun(
    speaker: room.speakerSignal(), microphone: room.microphoneSignal(),
    events: events.filter { $0.time < limit })
}

/// Runs `body` for every index on two threads (the machine's cores), in any order.
func concurrently<T>(_ count: Int, _ body: (Int) -> T) -> [T] {
  let results = UnsafeMutableBufferPointer<T?>.allocate(capacity: count)
  results.initialize(repeating: nil)
  defer { results.deallocate() }
  nonisolated(unsafe) let slots = results
  DispatchQueue.concurrentPerform(iterations: count) { index in slots[index] = body(index) }
  return results.map { $0! }
}
