import AudioFiles
import Dispatch
import SignalDSP
import Synchronization
import ToneDecoding
import TonePlans

/// Decodes the tones in an audio file from start to end, streaming it in
/// blocks so memory stays flat for any length.
///
/// Two threads share the work: a reader thread reads, mixes to mono and
/// prepares each block (`ToneDecoderAhead`: the decoder's streams, and
/// spectra of frames analysed ahead while the calling thread is busy),
/// and the calling thread decodes the blocks and emits every event. The
/// events are exactly those of `ToneDecoder.process` fed the same file.
public enum FileToneDecoder {
  /// The outcome of decoding a file.
  public struct Outcome: Sendable {
    /// Seconds of audio read.
    public var duration: Double
    /// NaN or infinite samples, decoded as silence.
    public var invalidSamples: Int
    /// A problem found after reading everything present (a truncated file).
    public var problem: AudioFileError?
  }

  /// Decodes every frame of `reader` (the mix of all channels, or only
  /// `channel`), calling `emit` on the calling thread for each tone and
  /// sequence; `shouldStop`, asked before each block, ends it early.
  /// `reader` is read on another thread until this returns, and `decoder`
  /// takes nothing else meanwhile. The decoder hears the file `readFrames`
  /// at a time (as many `ToneDecoder.process` calls).
  public static func run(
    _ reader: AudioFileReader, decoder: ToneDecoder, channel: Int? = nil,
    readFrames: Int = 8192, shouldStop: () -> Bool = { false },
    emit: (ToneDecoderEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let pipeline = ToneBlockPipeline(
      reader: reader, ahead: ToneDecoderAhead(for: decoder), channel: channel,
      readFrames: readFrames)
    guard let thread = BackgroundThread({ pipeline.produce() }) else {
      throw .readFailed(path: reader.displayPath, reason: "no thread to read with")
    }
    var stopped = false
    var ending: ToneBlockPipeline.Ending?
    repeat {
      if !stopped && shouldStop() {
        stopped = true
        pipeline.stopRequested.store(true, ordering: .relaxed)
      }
      let slot = pipeline.nextFilled()
      ending = slot.ending
      switch ending {
      case nil, .failed?: decoder.process(slot.block, emit: emit)
      case .finished? where reader.framesRead > 0: decoder.finish(slot.block, emit: emit)
      case .finished?: break
      }
      pipeline.release()
    } while ending == nil
    thread.join()
    if case .failed(let error) = ending { throw error }
    if reader.framesRead == 0 {
      throw reader.wasStopped
        ? .stoppedBeforeAudio(path: reader.displayPath) : .empty(path: reader.displayPath)
    }
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(
      duration: Double(reader.framesRead) / reader.sampleRate,
      invalidSamples: pipeline.invalidSamples, problem: problem)
  }
}

/// A few `ToneBlock`s passed round between the reader thread, which fills
/// them, and the calling thread, which decodes them; semaphores order
/// every hand-over. While the calling thread has no block waiting, the
/// reader leaves the frames still to measure to it and hands over what it
/// has; else it fills a block up to `readsPerBlock` reads and measures
/// ahead. Both spin briefly before sleeping on a hand-over.
final class ToneBlockPipeline: @unchecked Sendable {
  enum Ending {
    case finished
    case failed(AudioFileError)
  }

  final class Slot {
    let block: ToneBlock
    /// Set on the last block: the stream ended (or stopped; the block then
    /// holds the streams' ends) or reading failed.
    var ending: Ending?
    init(_ block: ToneBlock) { self.block = block }
  }

  let stopRequested = Atomic<Bool>(false)
  /// Blocks filled and not yet taken by the calling thread.
  private let ready = Atomic<Int>(0)
  private let slots: [Slot]
  private let free: DispatchSemaphore
  private let filled = DispatchSemaphore(value: 0)
  private var nextToFill = 0
  private var nextToEmpty = 0
  // Touched by the reader thread only, until the last block is handed over.
  private let reader: AudioFileReader
  private let ahead: ToneDecoderAhead
  private let channel: Int?
  private let readFrames: Int
  private static let readsPerBlock = 2
  private(set) var invalidSamples = 0

  init(reader: AudioFileReader, ahead: ToneDecoderAhead, channel: Int?, readFrames: Int) {
    self.reader = reader
    self.ahead = ahead
    self.channel = channel
    self.readFrames = readFrames
    let capacity = readFrames * Self.readsPerBlock
    slots = (0..<8).map { _ in Slot(ahead.makeBlock(capacity: capacity)) }
    free = DispatchSemaphore(value: slots.count)
  }

  /// The reader thread's loop: fills blocks until the file ends, fails or
  /// a stop is asked for; the last block carries the ending.
  func produce() {
    let channels = reader.channelCount
    // Mono is read straight into the block; more channels are mixed into it.
    let buffer =
      channels > 1 ? UnsafeMutablePointer<Float>.allocate(capacity: readFrames * channels) : nil
    defer { buffer?.deallocate() }
    // The decoder has no block waiting: it is about to wait for this one.
    let hurry = { self.ready.load(ordering: .relaxed) == 0 }
    while true {
      Self.wait(free)
      let slot = slots[nextToFill]
      nextToFill = (nextToFill + 1) % slots.count
      let block = slot.block
      block.removeAll()
      slot.ending = nil
      for _ in 0..<Self.readsPerBlock {
        let input = block.input + block.preparedCount
        var frames = 0
        if !stopRequested.load(ordering: .relaxed) {
          do throws(AudioFileError) {
            frames = try reader.read(into: buffer ?? input, frameCount: readFrames)
          } catch {
            slot.ending = .failed(error)
            break
          }
        }
        if frames == 0 {
          ahead.prepareEnd(block, hurry: hurry)
          slot.ending = .finished
          break
        }
        if buffer != nil || reader.canHoldNonFiniteSamples {
          invalidSamples += MonoMix.mix(
            buffer ?? input, frameCount: frames, channelCount: channels, channel: channel,
            into: input)
        }
        ahead.prepare(block, count: frames, hurry: hurry)
        if hurry() { break }
      }
      let isLast = slot.ending != nil
      ready.add(1, ordering: .relaxed)
      filled.signal()
      if isLast { return }
    }
  }

  /// The next filled block, waiting for the reader (calling thread).
  func nextFilled() -> Slot {
    Self.wait(filled)
    ready.subtract(1, ordering: .relaxed)
    return slots[nextToEmpty]
  }

  /// Takes `semaphore`, spinning a while before sleeping: the other thread
  /// hands over within a read's preparation, and waking a sleeping thread
  /// costs more than that.
  private static func wait(_ semaphore: DispatchSemaphore) {
    for _ in 0..<20_000 where semaphore.wait(timeout: .now()) == .success { return }
    semaphore.wait()
  }

  /// Hands the block from `nextFilled` back to the reader.
  func release() {
    nextToEmpty = (nextToEmpty + 1) % slots.count
    free.signal()
  }
}
