import DuplexIO
import SignalDSP
import Synchronization
import TonePlans

/// The client of a playback-only unit that plays a list of tones — one
/// endless or timed tone for `micloop tone`, an encoded message for
/// `micloop send` — the same signal on every output channel.
///
/// A tone followed by a pause (or the last tone) fades out so that it ends
/// exactly at its length; back-to-back tones switch frequency with the phase
/// kept, as 5-tone encoders do. `renderOutput` runs on the audio thread and
/// never allocates; `isDone`, `framesRendered` and `requestStop` are the
/// cross-thread surface.
public final class ToneSource: DuplexClient, @unchecked Sendable {
  private struct Step {
    var toneCount: Int
    var toneFrames: Int
    var gapFrames: Int
  }

  public let sampleRate: Int
  public let channelCount: Int
  /// Frames of the whole schedule; `nil` when it plays until `requestStop`.
  public let totalFrames: Int?
  /// True once the last tone has faded out (every later period is silence).
  public let isDone = Atomic<Bool>(false)
  public let framesRendered = Atomic<Int>(0)
  private let stopRequested = Atomic<Bool>(false)
  private var generator: ToneGenerator
  private let steps: UnsafeMutableBufferPointer<Step>
  private let frequencies: UnsafeMutablePointer<Double>
  private let amplitudes: UnsafeMutablePointer<Float>
  private var stepIndex = 0
  private var position = 0
  private var rendered = 0
  private var stopping = false
  private let mono: UnsafeMutablePointer<Float>
  private let maximumPeriod: Int

  /// Plays `segments` (at most `ToneGenerator.maximumTones` frequencies
  /// each), every tone at `amplitude` (linear peak). A segment whose duration
  /// is infinite plays until `requestStop`.
  public init(
    segments: [ToneSegment], amplitude: Float, sampleRate: Int, channelCount: Int,
    maximumPeriod: Int = 4096
  ) {
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.maximumPeriod = maximumPeriod
    generator = ToneGenerator(sampleRate: Double(sampleRate))
    let slots = ToneGenerator.maximumTones
    steps = .allocate(capacity: max(1, segments.count))
    frequencies = .allocate(capacity: max(1, segments.count) * slots)
    frequencies.initialize(repeating: 0, count: max(1, segments.count) * slots)
    amplitudes = .allocate(capacity: max(1, segments.count) * slots)
    amplitudes.initialize(repeating: 0, count: max(1, segments.count) * slots)
    var total = 0
    var endless = false
    for (index, segment) in segments.enumerated() {
      let count = min(segment.frequencies.count, slots)
      for slot in 0..<count {
        frequencies[index * slots + slot] = segment.frequencies[slot]
        amplitudes[index * slots + slot] = amplitude
      }
      let toneFrames: Int
      if segment.duration.isFinite {
        toneFrames = Int((segment.duration * Double(sampleRate)).rounded())
      } else {
        toneFrames = Int.max / 4
        endless = true
      }
      let gapFrames = Int((segment.gap * Double(sampleRate)).rounded())
      steps[index] = Step(toneCount: count, toneFrames: toneFrames, gapFrames: gapFrames)
      if !endless { total += toneFrames + gapFrames }
    }
    if segments.isEmpty { steps[0] = Step(toneCount: 0, toneFrames: 0, gapFrames: 0) }
    stepCount = segments.count
    totalFrames = endless ? nil : total
    mono = .allocate(capacity: maximumPeriod)
    mono.initialize(repeating: 0, count: maximumPeriod)
  }

  private let stepCount: Int

  deinit {
    steps.deallocate()
    frequencies.deallocate()
    amplitudes.deallocate()
    mono.deallocate()
  }

  /// Starts the fade-out (any thread).
  public func requestStop() { stopRequested.store(true, ordering: .releasing) }

  /// Renders `frameCount` frames into `output` (interleaved, `channelCount`
  /// channels) without a device, for writing files. Control thread.
  public func render(into output: UnsafeMutablePointer<Float>, frameCount: Int) {
    var done = 0
    while done < frameCount {
      let count = min(frameCount - done, maximumPeriod)
      renderMono(count)
      for frame in 0..<count {
        for channel in 0..<channelCount {
          output[(done + frame) * channelCount + channel] = mono[frame]
        }
      }
      done += count
    }
  }

  /// Playback only: no input to take (audio thread).
  public func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {}

  public func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    if isDone.load(ordering: .relaxed) { return }
    render(
      into: output.samples.baseAddress!,
      frameCount: min(output.frameCount, output.samples.count / channelCount))
    isSilence = false
  }

  private func renderMono(_ count: Int) {
    let slots = ToneGenerator.maximumTones
    var frame = 0
    while frame < count {
      if !stopping && stopRequested.load(ordering: .relaxed) {
        stopping = true
        stepIndex = stepCount
        generator.stop()
      }
      guard stepIndex < stepCount else {
        // After the last tone: the fade-out ends, then silence.
        generator.render(into: mono + frame, count: count - frame)
        break
      }
      let step = steps[stepIndex]
      if position == 0 {
        generator.setTones(
          frequencies: UnsafeBufferPointer(
            start: frequencies + stepIndex * slots, count: step.toneCount),
          amplitudes: UnsafeBufferPointer(
            start: amplitudes + stepIndex * slots, count: step.toneCount))
        generator.start()
      }
      let length = step.toneFrames + step.gapFrames
      let fades = step.gapFrames > 0 || stepIndex == stepCount - 1
      let fadeStart = fades ? max(0, step.toneFrames - generator.fadeSamples - 1) : Int.max
      var run = min(count - frame, length - position)
      if position < fadeStart {
        run = min(run, fadeStart - position)
      } else if position == fadeStart {
        generator.stop()
      }
      generator.render(into: mono + frame, count: run)
      position += run
      frame += run
      if position >= length {
        stepIndex += 1
        position = 0
      }
    }
    rendered += count
    framesRendered.store(rendered, ordering: .releasing)
    if stepIndex >= stepCount && !generator.isSounding { isDone.store(true, ordering: .releasing) }
  }
}
