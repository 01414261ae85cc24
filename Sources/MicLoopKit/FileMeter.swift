import AudioFiles
import Metering

/// Meters an audio file from start to end, streaming it block by block so
/// memory stays flat for any length.
///
/// Two threads share the work: a reader thread reads, converts, measures
/// peak, RMS and true peak and reduces each channel to the talk detector's
/// rate (`MeterLevelStage`) a few blocks ahead, while the calling thread
/// runs the speech-band filter, the envelope, the talk decisions and
/// loudness (`MeterTalkStage`) and emits every event. The events are exactly those of a
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
  /// - Parameter blockFrames: frames per block read; by default
  ///   `fileBlockFrames` (or the whole file, when shorter) when the length
  ///   is known, else `streamBlockFrames`.
  public static func run(
    _ reader: AudioFileReader, settings: MeterSettings, blockFrames: Int? = nil,
    shouldStop: () -> Bool = { false }, emit: (MeterEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let blockFrames =
      blockFrames
      ?? reader.declaredFrameCount.map { Int(min(Int64(fileBlockFrames), max(1, $0))) }
      ?? streamBlockFrames
    let levels = MeterLevelStage(
      sampleRate: reader.sampleRate, channelCount: reader.channelCount, settings: settings,
      maximumBlock: blockFrames, screensNonFinite: reader.canHoldNonFiniteSamples)
    let talk = MeterTalkStage(following: levels, settings: settings, blockFrames: blockFrames)
    let channels = reader.channelCount
    let capacity = levels.maximumReducedCount(forFrames: blockFrames)
    let blocks = (0..<Self.blocksInFlight).map { _ in
      ReducedBlock(
        frames: blockFrames, channels: channels, metered: levels.meteredChannels.count,
        capacity: capacity, intervalCapacity: blockFrames / levels.intervalFrames + 2)
    }
    let read = try ReadAhead.run(
      reader, blocks: blocks, shouldStop: shouldStop,
      fill: { block, stopRequested, _ in
        block.fill(
          from: reader, levels: levels, frameCount: blockFrames, stopRequested: stopRequested)
      },
      consume: { block, _ in
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
      })
    if let interval = levels.finishInterval() { talk.report(interval, emit: emit) }
    var summary: MeterSummary?
    talk.finish(levels.summary()) { event in
      if case .summary(let totals) = event { summary = totals }
      emit(event)
    }
    return Outcome(summary: summary!, problem: read.problem)
  }

  /// Blocks read ahead at most.
  static let blocksInFlight = 4
  /// Frames per block of a file of known length: long blocks, so that
  /// handing them between the threads (a wake-up each) costs next to nothing.
  public static let fileBlockFrames = 65_536
  /// Frames per block of a stream (a pipe): short, so that readings
  /// follow the stream closely.
  public static let streamBlockFrames = 16_384
}

/// One block of audio on its way from the reader thread to the talk
/// stage: the frames as read, each metered channel at the reduced rate,
/// and the intervals that ended inside it.
final class ReducedBlock {
  /// The block's `frames` interleaved frames as read (screened).
  let samples: UnsafeMutablePointer<Float>
  var frames = 0
  /// Per metered channel, `count` reduced samples.
  let reduced: [UnsafeMutablePointer<Float>]
  var count = 0
  /// Intervals that ended in this block, after how many reduced samples and frames.
  let intervals: UnsafeMutableBufferPointer<(levels: IntervalLevels, end: Int, frameEnd: Int)>
  var intervalCount = 0

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

  /// Reads up to `frameCount` frames and measures them with `levels`
  /// (reader thread); returns the stream's ending when this is the last block.
  func fill(
    from reader: AudioFileReader, levels: MeterLevelStage, frameCount: Int, stopRequested: Bool
  ) -> ReadAhead.Ending? {
    let channels = reader.channelCount
    count = 0
    intervalCount = 0
    frames = 0
    var ending: ReadAhead.Ending?
    var read = 0
    if !stopRequested {
      do throws(AudioFileError) {
        read = try reader.read(into: samples, frameCount: frameCount)
      } catch {
        ending = .failed(error)
      }
    }
    var offset = 0
    while offset < read {
      let slice = min(read - offset, levels.framesLeftInInterval)
      let measured = levels.measure(
        samples + offset * channels, frameCount: slice, into: reduced, offset: count)
      count += measured.reducedCount
      offset += slice
      if let interval = measured.finished {
        intervals[intervalCount] = (interval, count, offset)
        intervalCount += 1
      }
    }
    frames = read
    if read == 0 && ending == nil { ending = .finished }
    return ending
  }
}
