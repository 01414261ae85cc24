import AudioFiles
import Dispatch
import Metering
import Synchronization

/// Meters an audio file from start to end, streaming it block by block so
/// memory stays flat for any length.
///
/// Two threads share the work: a reader thread reads, converts, measures
/// peak, RMS and true peak and reduces each channel to its speech band at
/// the talk detector's rate (`MeterLevelStage`) a few blocks ahead, while
/// the calling thread runs the envelope, the talk decisions and loudness
/// (`MeterTalkStage`) and emits every event. The events are exactly those of a
/// `MeterProcessor` fed the same file.
public enum FileMeter {
  /// The outcome of metering a file.
  public struct Outcome: Sendable {
    /// Totals of what was read.
    public var summary: MeterSummary
    /// A problem found after reading everything present (a truncated file),
    /// reported after the results.
    public var problem: AudioFileError?
  }

  /// Meters every frame of `reader`, calling `emit` for each event in
  /// stream order (ending with the summary) on the calling thread;
  /// `shouldStop`, asked before each block, ends it early with the summary
  /// of what was read. `reader` is read on another thread until this returns.
  public static func run(
    _ reader: AudioFileReader, settings: MeterSettings, blockFrames: Int = 16_384,
    shouldStop: () -> Bool = { false }, emit: (MeterEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let levels = MeterLevelStage(
      sampleRate: reader.sampleRate, channelCount: reader.channelCount, settings: settings,
      maximumBlock: blockFrames, screensNonFinite: reader.canHoldNonFiniteSamples)
    let talk = MeterTalkStage(following: levels, settings: settings, blockFrames: blockFrames)
    let channels = reader.channelCount
    let pipeline = ReducedBlockPipeline(
      levels: levels, reader: reader, blockFrames: blockFrames,
      intervalsPerBlock: blockFrames / levels.intervalFrames + 2)
    guard let thread = BackgroundThread({ pipeline.produce() }) else {
      throw .readFailed(path: reader.displayPath, reason: "no thread to read with")
    }
    var stopped = false
    var ending: ReducedBlock.Ending?
    repeat {
      if !stopped && shouldStop() {
        stopped = true
        pipeline.stopRequested.store(true, ordering: .relaxed)
      }
      let block = pipeline.nextFilled()
      var position = 0
      var frame = 0
      for index in 0..<block.intervalCount {
        let interval = block.intervals[index]
        talk.measureLoudness(
          block.samples + frame * channels, frameCount: interval.frameEnd - frame)
        talk.listen(block.reduced, offset: position, count: interval.end - position, emit: emit)
        talk.report(interval.levels, emit: emit)
        position = interval.end
        frame = interval.frameEnd
      }
      talk.measureLoudness(block.samples + frame * channels, frameCount: block.frames - frame)
      talk.listen(block.reduced, offset: position, count: block.count - position, emit: emit)
      ending = block.ending
      pipeline.release()
    } while ending == nil
    thread.join()
    if case .failed(let error) = ending { throw error }
    if reader.framesRead == 0 {
      throw reader.wasStopped
        ? .stoppedBeforeAudio(path: reader.displayPath) : .empty(path: reader.displayPath)
    }
    if let interval = levels.finishInterval() { talk.report(interval, emit: emit) }
    var summary: MeterSummary?
    talk.finish(levels.summary()) { event in
      if case .summary(let totals) = event { summary = totals }
      emit(event)
    }
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(summary: summary!, problem: problem)
  }
}

/// One block of audio on its way from the reader thread to the talk
/// stage: the frames as read, each metered channel's reduced speech band,
/// and the intervals that ended inside it.
final class ReducedBlock {
  enum Ending {
    case finished
    case failed(AudioFileError)
  }

  /// The block's `frames` interleaved frames as read (screened).
  let samples: UnsafeMutablePointer<Float>
  var frames = 0
  /// Per metered channel, `count` reduced samples.
  let reduced: [UnsafeMutablePointer<Float>]
  var count = 0
  /// Intervals that ended in this block, after how many reduced samples and frames.
  let intervals: UnsafeMutableBufferPointer<(levels: IntervalLevels, end: Int, frameEnd: Int)>
  var intervalCount = 0
  /// Set on the last block: the stream ended (or stopped) or failed.
  var ending: Ending?

  init(frames: Int, channels: Int, metered: Int, capacity: Int, intervalCapacity: Int) {
    samples = .allocate(capacity: frames * channels)
    samples.initialize(repeating: 0, count: frames * channels)
    reduced = (0..<metered).map { _ in
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
      buffer.initialize(repeating: 0, count: capacity)
      return buffer
    }
    intervals = .allocate(capacity: intervalCapacity)
  }

  deinit {
    samples.deallocate()
    for buffer in reduced { buffer.deallocate() }
    intervals.deallocate()
  }
}

/// A few `ReducedBlock`s passed round between the reader thread, which
/// fills them with `MeterLevelStage`, and the calling thread, which empties
/// them; semaphores order every hand-over.
final class ReducedBlockPipeline: @unchecked Sendable {
  let stopRequested = Atomic<Bool>(false)
  private let blocks: [ReducedBlock]
  private let free: DispatchSemaphore
  private let filled = DispatchSemaphore(value: 0)
  private var nextToFill = 0
  private var nextToEmpty = 0
  // Touched by the reader thread only, once it runs.
  private let levels: MeterLevelStage
  private let reader: AudioFileReader
  private let blockFrames: Int

  init(levels: MeterLevelStage, reader: AudioFileReader, blockFrames: Int, intervalsPerBlock: Int) {
    self.levels = levels
    self.reader = reader
    self.blockFrames = blockFrames
    let capacity = levels.maximumReducedCount(forFrames: blockFrames)
    blocks = (0..<4).map { _ in
      ReducedBlock(
        frames: blockFrames, channels: reader.channelCount,
        metered: levels.meteredChannels.count, capacity: capacity,
        intervalCapacity: intervalsPerBlock)
    }
    free = DispatchSemaphore(value: blocks.count)
  }

  /// The reader thread's loop: fills blocks until the file ends, fails or
  /// a stop is asked for; the last block carries the ending.
  func produce() {
    let channels = reader.channelCount
    while true {
      free.wait()
      let block = blocks[nextToFill]
      nextToFill = (nextToFill + 1) % blocks.count
      block.count = 0
      block.frames = 0
      block.intervalCount = 0
      block.ending = nil
      var frames = 0
      if !stopRequested.load(ordering: .relaxed) {
        do throws(AudioFileError) {
          frames = try reader.read(into: block.samples, frameCount: blockFrames)
        } catch {
          block.ending = .failed(error)
        }
      }
      var offset = 0
      while offset < frames {
        let slice = min(frames - offset, levels.framesLeftInInterval)
        let measured = levels.measure(
          block.samples + offset * channels, frameCount: slice, into: block.reduced,
          offset: block.count)
        block.count += measured.reducedCount
        offset += slice
        if let interval = measured.finished {
          block.intervals[block.intervalCount] = (interval, block.count, offset)
          block.intervalCount += 1
        }
      }
      block.frames = frames
      if frames == 0 && block.ending == nil { block.ending = .finished }
      let isLast = block.ending != nil
      filled.signal()
      if isLast { return }
    }
  }

  /// The next filled block, waiting for the reader (calling thread).
  func nextFilled() -> ReducedBlock {
    filled.wait()
    return blocks[nextToEmpty]
  }

  /// Hands the block from `nextFilled` back to the reader.
  func release() {
    nextToEmpty = (nextToEmpty + 1) % blocks.count
    free.signal()
  }
}
