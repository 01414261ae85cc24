import AudioFiles
import SignalDSP
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
    /// Damaged samples (NaN, infinite or beyond +60 dBFS), decoded as silence.
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
    let filler = ToneBlockFiller(
      reader: reader, ahead: ToneDecoderAhead(for: decoder), channel: channel,
      readFrames: readFrames)
    let blocks = (0..<Self.blocksInFlight).map { _ in filler.makeBlock() }
    let read = try ReadAhead.run(
      reader, blocks: blocks, spinsBeforeSleeping: Self.spinsBeforeSleeping,
      shouldStop: shouldStop,
      fill: { block, stopRequested, ring in
        filler.fill(block, stopRequested: stopRequested, hurry: { ring.consumerIsWaiting })
      },
      consume: { block, ending in
        switch ending {
        case nil, .failed?: decoder.process(block, emit: emit)
        case .finished? where reader.framesRead > 0: decoder.finish(block, emit: emit)
        case .finished?: break
        }
      })
    return Outcome(
      duration: Double(reader.framesRead) / reader.sampleRate,
      invalidSamples: filler.invalidSamples, problem: read.problem)
  }

  /// Blocks read ahead at most.
  static let blocksInFlight = 8
  /// The decoder's tries at the next filled block before sleeping: the
  /// reader hands one over within a read's preparation, and waking a
  /// sleeping thread costs more than that. (The reader, when ahead,
  /// sleeps at once.)
  static let spinsBeforeSleeping = 20_000
}

/// Fills `ToneBlock`s on the reader thread: reads, mixes to mono and
/// prepares each block with `ToneDecoderAhead`. While the calling thread
/// has no block waiting (`hurry`), the reader leaves the frames still to
/// measure to it and hands over what it has; else it fills a block up to
/// `readsPerBlock` reads and measures ahead. Reader thread only, once the
/// blocks are made.
final class ToneBlockFiller: @unchecked Sendable {
  private let reader: AudioFileReader
  private let ahead: ToneDecoderAhead
  private let channel: Int?
  private let readFrames: Int
  private static let readsPerBlock = 2
  /// Mono is read straight into the block; more channels are mixed into it from here.
  private let buffer: UnsafeMutablePointer<Float>?
  /// Damaged samples met (read once the reader thread has ended).
  private(set) var invalidSamples = 0

  init(reader: AudioFileReader, ahead: ToneDecoderAhead, channel: Int?, readFrames: Int) {
    self.reader = reader
    self.ahead = ahead
    self.channel = channel
    self.readFrames = readFrames
    buffer =
      reader.channelCount > 1
      ? UnsafeMutablePointer<Float>.allocate(capacity: readFrames * reader.channelCount) : nil
  }

  deinit { buffer?.deallocate() }

  func makeBlock() -> ToneBlock { ahead.makeBlock(capacity: readFrames * Self.readsPerBlock) }

  /// Fills `block`; returns the stream's ending when it is the last.
  func fill(_ block: ToneBlock, stopRequested: Bool, hurry: () -> Bool) -> ReadAhead.Ending? {
    let channels = reader.channelCount
    block.removeAll()
    for _ in 0..<Self.readsPerBlock {
      let input = block.input + block.preparedCount
      var frames = 0
      if !stopRequested {
        do throws(AudioFileError) {
          frames = try reader.read(into: buffer ?? input, frameCount: readFrames)
        } catch {
          return .failed(error)
        }
      }
      if frames == 0 {
        ahead.prepareEnd(block, hurry: hurry)
        return .finished
      }
      if buffer != nil || reader.canHoldNonFiniteSamples {
        invalidSamples += MonoMix.mix(
          buffer ?? input, frameCount: frames, channelCount: channels, channel: channel,
          into: input)
      }
      ahead.prepare(block, count: frames, hurry: hurry)
      if hurry() { break }
    }
    return nil
  }
}
