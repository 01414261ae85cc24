import SignalDSP

/// Prepares a tone decoder's input on a thread of its own, a block at a
/// time: makes the streams the decoder's analyses listen to (decimation,
/// click blanking) and, while the decoder is busy, analyses frames ahead
/// for it and measures what they hold for each plan, choosing the frames
/// as the decoder does in silence (a frame that holds nothing for any
/// plan lets the next three be put off). The decoder takes what was
/// measured ahead and measures the rest itself, so its events are exactly
/// those of `ToneDecoder.process(_:emit:)` on the same input, however the
/// work was shared.
///
/// Made and used on the preparing thread; the decoder it serves must not
/// process anything else while blocks are in flight (the streams are
/// the decoder's own).
package final class ToneDecoderAhead {
  /// One of the decoder's analyses, seen from ahead: its frames in the
  /// same pairs.
  private final class Lookahead {
    let ring: FrameRing
    let analyzer: PairedSpectrumAnalyzer
    let stream: ToneStreams.Stream
    let classifiers: ClassifierSet
    var skip = FrameSkipRule()
    /// The first stream sample after the last stretch left to the decoder:
    /// frames that begin before it hold samples this ring never had.
    var validFrom = 0
    /// The first frame of the pair the analyser holds.
    var pair = -1

    init(_ analysis: ToneDecoder.Analysis) {
      ring = FrameRing(
        frameLength: analysis.ring.frameLength, hop: analysis.ring.hop,
        extraHops: ToneDecoder.framesHeld)
      analyzer = PairedSpectrumAnalyzer(
        frameLength: analysis.analyzer.frameLength, sampleRate: analysis.analyzer.sampleRate)
      analyzer.workedBins = analysis.analyzer.workedBins
      stream = analysis.stream
      classifiers = ClassifierSet(analysis.plans.map(\.classifier))
    }
  }

  private let streams: ToneStreams
  private let lookaheads: [Lookahead]
  /// Stands for the signalling samples of input left to the decoder.
  private let silence: UnsafeMutablePointer<Float>
  private let silenceCount: Int

  /// - Parameter decoder: the decoder whose blocks this prepares; from now
  ///   on it takes its input only as blocks from here.
  package init(for decoder: ToneDecoder) {
    streams = decoder.streams
    lookaheads = decoder.analyses.map(Lookahead.init)
    silenceCount = streams.maximumSignallingCount(forInput: ToneStreams.chunk)
    silence = .allocate(capacity: silenceCount)
    silence.initialize(repeating: 0, count: silenceCount)
  }

  deinit { silence.deallocate() }

  /// A block for up to `capacity` input samples at a time.
  package func makeBlock(capacity: Int) -> ToneBlock {
    // The block that ends the input also holds the decimator's tail.
    let signalling =
      streams.maximumSignallingCount(forInput: capacity) + streams.maximumTailCount
    // Signalling samples are kept apart when they are not the input itself;
    // blanked ones lag by up to the blanker's hold (a few ms).
    let streamCapacity =
      (streams.isSignallingHeard && streams.signallingRate != streams.sampleRate ? signalling : 0)
      + (streams.isBlankedHeard ? signalling + Int(0.05 * streams.signallingRate) + 64 : 0)
    return ToneBlock(
      capacity: capacity, streamCapacity: streamCapacity,
      decimatorStateSize: streams.decimatorCopy()?.stateSize ?? 0,
      frames: lookaheads.map { lookahead in
        let samples =
          lookahead.stream == .full
          ? capacity : signalling + Int(0.05 * streams.signallingRate) + 64
        return AheadFrames(
          planCount: lookahead.classifiers.count,
          capacity: samples / lookahead.ring.hop + 2 * ToneDecoder.framesHeld + 2)
      })
  }

  /// Makes the streams of the `count` samples written into `block.input`
  /// after those prepared so far, and analyses their frames ahead until
  /// `hurry` says the decoder is waiting; from then on the input that only
  /// the signalling stream hears is left to the decoder to decimate, too.
  /// The decoder then hears each call's samples as it would one call of
  /// `ToneDecoder.process(_:emit:)`.
  package func prepare(_ block: ToneBlock, count: Int, hurry: () -> Bool) {
    precondition(block.preparedCount + count <= block.capacity, "more input than the block holds")
    let samples = UnsafeBufferPointer(start: block.input + block.preparedCount, count: count)
    block.preparedCount += count
    // Pieces of one stream that follow each other in the block (the
    // blanked stream comes half a millisecond at a time) are heard
    // together: each ring takes them in the same order, its frames
    // falling due as they would.
    var pending: (stream: ToneStreams.Stream, samples: UnsafeBufferPointer<Float>)?
    func flush() {
      if let (stream, samples) = pending { hear(stream, samples, block, hurry) }
      pending = nil
    }
    streams.prepare(
      samples,
      leave: { chunk in
        guard hurry() else { return false }
        flush()
        block.appendUndecimated(chunk)
        skip(chunk.outputs)
        return true
      }
    ) { stream, piece in
      let stored = block.append(stream, piece)
      guard let start = stored.baseAddress, stored.count > 0 else { return }  // nothing to hear
      if let (last, held) = pending, last == stream, held.baseAddress! + held.count == start {
        pending = (
          stream, UnsafeBufferPointer(start: held.baseAddress, count: held.count + stored.count)
        )
      } else {
        flush()
        pending = (stream, stored)
      }
    }
    flush()
  }

  /// Moves the signalling analyses' rings past `count` samples they never
  /// see (left to the decoder), measuring none of the frames they touch.
  private func skip(_ count: Int) {
    precondition(count <= silenceCount, "more signalling samples than a chunk makes")
    for lookahead in lookaheads where lookahead.stream == .signalling {
      lookahead.ring.write(UnsafeBufferPointer(start: silence, count: count)) {}
      lookahead.skip.reset()
      lookahead.validFrom = lookahead.ring.written
    }
  }

  /// Adds the streams' ends to `block`, for `ToneDecoder.finish(_:emit:)`.
  package func prepareEnd(_ block: ToneBlock, hurry: () -> Bool) {
    streams.finish { hear($0, block.append($0, $1), block, hurry) }
  }

  private func hear(
    _ stream: ToneStreams.Stream, _ samples: UnsafeBufferPointer<Float>, _ block: ToneBlock,
    _ hurry: () -> Bool
  ) {
    for (index, lookahead) in lookaheads.enumerated() where lookahead.stream == stream {
      let frames = block.frames[index]
      lookahead.ring.write(samples) {
        let newest = lookahead.ring.framesDue - 1
        guard newest & 1 == 1 else { return }
        if hurry() || (newest - 1) * lookahead.ring.hop < lookahead.validFrom {
          // The decoder analyses these; start afresh when it is busy again.
          lookahead.skip.reset()
        } else {
          decide(lookahead, frame: newest - 1, frames)
          decide(lookahead, frame: newest, frames)
        }
      }
    }
  }

  /// Puts off and analyses frames in silence by the decoder's own rule
  /// (`FrameSkipRule`), judging a frame by what it holds alone.
  private func decide(_ lookahead: Lookahead, frame number: Int, _ frames: AheadFrames) {
    if lookahead.skip.putsOff() { return }
    guard let measured = measure(lookahead, frame: number, into: frames) else { return }
    var isQuiet = true
    for index in 0..<lookahead.classifiers.count where !measured[index].isQuiet { isQuiet = false }
    for earlier in lookahead.skip.decided(frame: number, isQuiet: isQuiet).replay
    where (earlier & ~1) * lookahead.ring.hop >= lookahead.validFrom {
      _ = measure(lookahead, frame: earlier, into: frames)
    }
  }

  private func measure(
    _ lookahead: Lookahead, frame number: Int, into frames: AheadFrames
  ) -> UnsafeMutablePointer<FrameMeasurement>? {
    guard let slot = frames.add(number) else { return nil }
    let first = number & ~1
    if first != lookahead.pair {
      lookahead.analyzer.analyze(lookahead.ring.frame(first), lookahead.ring.frame(first + 1))
      lookahead.pair = first
    }
    let measured = frames.measurements(slot)
    lookahead.classifiers.measure(lookahead.analyzer.spectrum(number & 1), into: measured)
    return measured
  }
}
