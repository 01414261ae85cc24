import DuplexIO
import SignalDSP
import Synchronization

/// The client of a playback-only unit that plays a tone generator: the
/// same signal on every output channel, faded in at the start and faded out
/// so that it ends at exactly `duration` (or soon after `requestStop`).
///
/// `renderOutput` runs on the audio thread and never allocates; `isDone`,
/// `framesRendered` and `requestStop` are the cross-thread surface.
public final class ToneSource: DuplexClient, @unchecked Sendable {
  public let sampleRate: Int
  public let channelCount: Int
  /// Frames after which the fade-out has ended; `nil` plays until `requestStop`.
  public let totalFrames: Int?
  /// True once the fade-out has ended (every later period is silence).
  public let isDone = Atomic<Bool>(false)
  public let framesRendered = Atomic<Int>(0)
  private let stopRequested = Atomic<Bool>(false)
  private var generator: ToneGenerator
  private var rendered = 0
  private var stopping = false
  private let mono: UnsafeMutablePointer<Float>
  private let maximumPeriod: Int

  public init(
    tones: [(frequency: Double, amplitude: Float)], sampleRate: Int, channelCount: Int,
    duration: Double?, maximumPeriod: Int
  ) {
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.maximumPeriod = maximumPeriod
    generator = ToneGenerator(sampleRate: Double(sampleRate))
    generator.setTones(tones)
    generator.start()
    totalFrames = duration.map { Int(($0 * Double(sampleRate)).rounded()) }
    mono = .allocate(capacity: maximumPeriod)
    mono.initialize(repeating: 0, count: maximumPeriod)
  }

  deinit { mono.deallocate() }

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

  public func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {}

  public func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags, isSilence: inout Bool
  ) {
    if isDone.load(ordering: .relaxed) { return }
    render(into: output.baseAddress!, frameCount: min(frameCount, output.count / channelCount))
    isSilence = false
  }

  private func renderMono(_ count: Int) {
    if !stopping && stopRequested.load(ordering: .relaxed) {
      stopping = true
      generator.stop()
    }
    var frame = 0
    while frame < count {
      // Start the fade-out exactly where it must end at `totalFrames`.
      if !stopping, let totalFrames {
        let fadeStart = max(0, totalFrames - generator.fadeSamples - 1)
        if rendered + frame >= fadeStart {
          stopping = true
          generator.stop()
        } else {
          let run = min(count - frame, fadeStart - rendered - frame)
          generator.render(into: mono + frame, count: run)
          frame += run
          continue
        }
      }
      generator.render(into: mono + frame, count: count - frame)
      frame = count
    }
    rendered += count
    framesRendered.store(rendered, ordering: .releasing)
    if stopping && !generator.isSounding { isDone.store(true, ordering: .releasing) }
  }
}
