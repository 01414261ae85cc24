import SignalDSP

/// The streams the tone decoder's analyses listen to, made from its input:
/// the input as it is (Handshake, whose tones need the full rate, and
/// CTCSS), the signalling stream (the input at `signallingRate`, the lowest
/// whole fraction of its rate that keeps the signalling band, through a
/// FIR decimator) and that stream with clicks taken out (`ImpulseBlanker`).
///
/// `prepare` hands on each stretch of each stream in the order the
/// analyses hear them; the order decides the order of the events. Owned by
/// one thread at a time; nothing allocates after `init`.
final class ToneStreams {
  enum Stream: UInt8 { case full, signalling, blanked }

  let sampleRate: Double
  /// The rate signalling tones are analysed at.
  let signallingRate: Double
  /// Which streams anything listens to.
  let isFullHeard: Bool
  let isSignallingHeard: Bool
  let isBlankedHeard: Bool
  /// Input samples taken at a time, so `decimated` stays small.
  static let chunk = 4096
  private var decimator: FIRDecimator?
  private var decimated: UnsafeMutablePointer<Float>?
  private var blanker: ImpulseBlanker

  /// - Parameters:
  ///   - bandTop: the highest frequency the signalling analyses look at
  ///     (0 when none listens to the signalling stream).
  init(
    sampleRate: Double, bandTop: Double, isFullHeard: Bool, isSignallingHeard: Bool,
    isBlankedHeard: Bool
  ) {
    self.sampleRate = sampleRate
    self.isFullHeard = isFullHeard
    self.isSignallingHeard = isSignallingHeard
    self.isBlankedHeard = isBlankedHeard
    let factor = bandTop > 0 ? max(1, Int(sampleRate / (2.4 * bandTop))) : 1
    if factor > 1 {
      let decimator = FIRDecimator(factor: factor, sampleRate: sampleRate, passBand: bandTop)
      decimated = .allocate(capacity: decimator.maximumOutputCount(forInput: Self.chunk))
      self.decimator = decimator
    }
    signallingRate = sampleRate / Double(factor)
    blanker = ImpulseBlanker(sampleRate: signallingRate)
  }

  deinit { decimated?.deallocate() }

  /// The signalling stream's delay behind the input, in seconds.
  var signallingDelay: Double { decimator?.delay ?? 0 }

  /// The most signalling samples one call of `prepare` makes of `count` input samples.
  func maximumSignallingCount(forInput count: Int) -> Int {
    guard let decimator else { return count }
    return decimator.maximumOutputCount(forInput: Self.chunk) * (count / Self.chunk + 1)
  }

  /// The most signalling samples `finish` makes (the filter's tail).
  var maximumTailCount: Int {
    guard let decimator else { return 0 }
    let tail = Int(decimator.delay * sampleRate) * 2 + 1
    return decimator.maximumOutputCount(forInput: Self.chunk) * (tail / Self.chunk + 1)
  }

  /// Clicks blanked so far, in blocks of about 0.5 ms.
  var blankedClicks: Int { blanker.blankedBlocks }

  /// Whether another filter may decimate some of the input for these
  /// streams (`prepare`'s `leave`): when decimated input feeds nothing but
  /// the signalling stream (the blanker must see all of it, in order).
  var canLeaveDecimation: Bool { decimator != nil && !isBlankedHeard }

  /// A filter of the decimator's design, for decimating what `prepare`
  /// leaves (restored to where the decimator stood, `FIRDecimator.restore`).
  func decimatorCopy() -> FIRDecimator? { decimator }

  /// A chunk of input `prepare` offers to have decimated elsewhere: its
  /// samples, how many signalling samples it makes, and where the
  /// decimator stands before it (`save` writes that, see `FIRDecimator.save`).
  struct Chunk {
    let samples: UnsafeBufferPointer<Float>
    let outputs: Int
    let save: (UnsafeMutablePointer<Float>) -> (held: Int, phase: Int)
  }

  /// Makes the streams' part of `samples`, handing each stretch to `body`.
  /// When `canLeaveDecimation`, `leave` is offered each chunk of input:
  /// taking it (true), it has the chunk decimated elsewhere, and the
  /// streams go on past it.
  func prepare(
    _ samples: UnsafeBufferPointer<Float>, leave: (Chunk) -> Bool = { _ in false },
    _ body: (Stream, UnsafeBufferPointer<Float>) -> Void
  ) {
    if isFullHeard { body(.full, samples) }
    guard isSignallingHeard || isBlankedHeard else { return }
    guard var decimator, let decimated else { return signalling(samples, body) }
    var offset = 0
    while offset < samples.count {
      let count = min(Self.chunk, samples.count - offset)
      let chunk = UnsafeBufferPointer(rebasing: samples[offset..<offset + count])
      if canLeaveDecimation
        && leave(
          Chunk(
            samples: chunk, outputs: decimator.outputCount(forNext: count),
            save: { decimator.save(into: $0) }))
      {
        _ = decimator.skip(chunk)
      } else {
        let produced = decimator.process(chunk, into: decimated)
        signalling(UnsafeBufferPointer(start: decimated, count: produced), body)
      }
      offset += count
    }
    self.decimator = decimator
  }

  /// Ends the streams: the filter's last outputs, then what the blanker holds.
  func finish(_ body: (Stream, UnsafeBufferPointer<Float>) -> Void) {
    guard isSignallingHeard || isBlankedHeard else { return }
    if var decimator, let decimated {
      // The filter's tail, a chunk at a time as `decimated` is sized (at
      // megahertz rates the filter is longer than a chunk).
      let silence = [Float](repeating: 0, count: Self.chunk)
      var remaining = Int(decimator.delay * sampleRate) * 2 + 1  // as `maximumTailCount` counts
      while remaining > 0 {
        let count = min(Self.chunk, remaining)
        let produced = silence.withUnsafeBufferPointer {
          decimator.process(UnsafeBufferPointer(rebasing: $0[..<count]), into: decimated)
        }
        signalling(UnsafeBufferPointer(start: decimated, count: produced), body)
        remaining -= count
      }
      self.decimator = decimator
    }
    if isBlankedHeard { blanker.flush { body(.blanked, $0) } }
  }

  /// Hands on `samples` of the signalling stream, and through the blanker
  /// its blanked stream.
  private func signalling(
    _ samples: UnsafeBufferPointer<Float>, _ body: (Stream, UnsafeBufferPointer<Float>) -> Void
  ) {
    if isSignallingHeard { body(.signalling, samples) }
    if isBlankedHeard { blanker.process(samples) { body(.blanked, $0) } }
  }
}
