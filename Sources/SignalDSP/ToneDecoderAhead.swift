/// Prepares a tone decoder's input on a thread of its own, a block at a
/// time: makes the streams the decoder's analyses listen to (decimation,
/// click blanking) and, while the decoder is busy, analyses frames ahead
/// for it, choosing them as the decoder does in silence (a frame that
/// holds nothing for any plan lets the next three be put off). The
/// decoder uses what was analysed ahead and analyses the rest itself, so
/// its events are exactly those of `ToneDecoder.process(_:emit:)` on the
/// same input, however the work was shared.
///
/// Made and used on the preparing thread; the decoder it serves must not
/// process anything else while blocks are in flight (the streams are
/// the decoder's own).
public final class ToneDecoderAhead {
  /// One of the decoder's analyses, seen from ahead.
  private final class Lookahead {
    let ring: FrameRing
    let analyzer: SpectrumAnalyzer
    let stream: ToneStreams.Stream
    let classifiers: [ToneFrameClassifier]
    var isQuiet = false
    var skipped = 0

    init(_ analysis: ToneDecoder.Analysis) {
      ring = FrameRing(
        frameLength: analysis.ring.frameLength, hop: analysis.ring.hop,
        extraHops: ToneDecoder.maximumSkip)
      analyzer = SpectrumAnalyzer(
        frameLength: analysis.analyzer.frameLength, sampleRate: analysis.analyzer.sampleRate)
      stream = analysis.stream
      classifiers = analysis.plans.map(\.classifier)
    }
  }

  private let streams: ToneStreams
  private let lookaheads: [Lookahead]

  /// - Parameter decoder: the decoder whose blocks this prepares; from now
  ///   on it takes its input only as blocks from here.
  public init(for decoder: ToneDecoder) {
    streams = decoder.streams
    lookaheads = decoder.analyses.map(Lookahead.init)
  }

  /// A block for up to `capacity` input samples at a time.
  public func makeBlock(capacity: Int) -> ToneBlock {
    let signalling = streams.maximumSignallingCount(forInput: capacity)
    // Blanked samples lag by up to the blanker's hold (a few ms).
    let streamCapacity = 2 * signalling + Int(0.05 * streams.signallingRate) + 64
    return ToneBlock(
      capacity: capacity, streamCapacity: streamCapacity,
      frames: lookaheads.map { lookahead in
        let samples = lookahead.stream == .full ? capacity : signalling + streamCapacity / 2
        return AheadFrames(
          binCount: lookahead.analyzer.binCount,
          capacity: samples / lookahead.ring.hop + 2 * ToneDecoder.maximumSkip + 2)
      })
  }

  /// Makes the streams of the `count` samples in `block.input` and
  /// analyses frames ahead until `hurry` says the decoder is waiting.
  public func prepare(_ block: ToneBlock, count: Int, hurry: () -> Bool) {
    precondition(count <= block.capacity, "more input than the block holds")
    block.reset()
    streams.prepare(UnsafeBufferPointer(start: block.input, count: count)) {
      hear($0, block.append($0, $1), block, hurry)
    }
  }

  /// Fills `block` with the streams' ends, for `ToneDecoder.finish(_:emit:)`.
  public func prepareEnd(_ block: ToneBlock, hurry: () -> Bool) {
    block.reset()
    streams.finish { hear($0, block.append($0, $1), block, hurry) }
  }

  private func hear(
    _ stream: ToneStreams.Stream, _ samples: UnsafeBufferPointer<Float>, _ block: ToneBlock,
    _ hurry: () -> Bool
  ) {
    for (index, lookahead) in lookaheads.enumerated() where lookahead.stream == stream {
      let frames = block.frames[index]
      lookahead.ring.write(samples) {
        if hurry() {
          // The decoder analyses from here on; start afresh when it is busy again.
          lookahead.isQuiet = false
          lookahead.skipped = 0
        } else {
          frameDue(lookahead, frames)
        }
      }
    }
  }

  /// As `ToneDecoder.frameDue` puts off and analyses frames in silence.
  private func frameDue(_ lookahead: Lookahead, _ frames: AheadFrames) {
    if lookahead.isQuiet && lookahead.skipped < ToneDecoder.maximumSkip {
      lookahead.skipped += 1
      return
    }
    let newest = lookahead.ring.framesDue - 1
    guard let spectrum = analyze(lookahead, hopsBefore: 0, number: newest, into: frames) else {
      return
    }
    let isQuiet = lookahead.classifiers.allSatisfy { $0.isQuiet(spectrum) }
    if !isQuiet {
      for hops in stride(from: lookahead.skipped, through: 1, by: -1) {
        _ = analyze(lookahead, hopsBefore: hops, number: newest - hops, into: frames)
      }
    }
    lookahead.skipped = 0
    lookahead.isQuiet = isQuiet
  }

  private func analyze(
    _ lookahead: Lookahead, hopsBefore hops: Int, number: Int, into frames: AheadFrames
  ) -> Spectrum? {
    guard let slot = frames.add(number) else { return nil }
    let (first, second) = lookahead.ring.frame(hopsBefore: hops)
    lookahead.analyzer.analyze(
      first, second, power: frames.power(slot), values: frames.values(slot))
    return lookahead.analyzer.spectrum(power: frames.power(slot), values: frames.values(slot))
  }
}
