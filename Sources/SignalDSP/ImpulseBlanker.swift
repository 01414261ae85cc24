/// Silences clicks before single tones are looked for: the discriminator
/// clicks of FM below its threshold, static crashes, switching transients.
///
/// The stream is cut into blocks of half a millisecond (8 samples at
/// least). Each block's power is measured above 400 Hz (a fourth-order
/// high-pass: a loud CTCSS sub-tone or hum would otherwise swing the power
/// of such short blocks as much as a click does). A block is a click when
/// its power exceeds `ratio`² times the level around it: the mean power of
/// the eight blocks before it or of the eight after it, whichever is
/// higher. So a click is short by definition: a tone or a word that starts
/// or stops keeps its level on one side, and a tone's own swing (two tones
/// beat) is measured against the whole tone. A click's block is set to zero, and so are its direct
/// neighbours when their power is above 0.6 of the threshold (a filtered
/// click spreads over a millisecond). A few missing milliseconds cost a
/// tone a little energy; a click in its frame would have buried it in
/// broadband power.
///
/// Pairs of tones (DTMF) are looked for in the stream as it came: two
/// tones beat, and their power in half a millisecond swings too; and a
/// voice, whose glottal pulses look like clicks, blanked between them
/// rings at its formants, which can look like a pair of tones.
///
/// Samples come out in order and complete, eight blocks later than they
/// went in; `flush` lets out the rest at the end of the stream. Owned by
/// one thread; nothing allocates after `init`.
public struct ImpulseBlanker {
  /// Samples per block.
  public let blockLength: Int
  /// Blocks compared on each side of the one decided.
  public let neighbours = 8
  /// A block's RMS over its neighbours' that makes it a click.
  public let ratio: Float
  /// Blocks set to zero so far.
  public private(set) var blankedBlocks = 0

  /// Seconds per block (at least `minimumBlockLength` samples).
  public static let blockSeconds = 0.0005
  public static let minimumBlockLength = 8
  /// The corner (Hz) above which a block's power is measured.
  public static let highPassCorner = 400.0
  /// The share of the threshold above which a click's direct neighbour
  /// is set to zero with it (a filtered click spreads over a millisecond).
  static let neighbourShare: Float = 0.6

  private let slots: Int
  /// The last `slots` blocks' samples, and their mean powers above 400 Hz.
  private var samples: [Float]
  private var powers: [Float]
  /// Whether each held block is to be set to zero.
  private var isClick: [Bool]
  /// Samples of the block being filled, and their energy above 400 Hz so far.
  private var filled = 0
  private var blockEnergy: Float = 0
  private var highPass: (Biquad, Biquad)
  /// Blocks completed; block `n` lives in slot `n % slots`.
  private var completed = 0
  /// Blocks already let out.
  private var emitted = 0

  public init(sampleRate: Double, ratio: Float = 1.8) {
    blockLength = max(Self.minimumBlockLength, Int((Self.blockSeconds * sampleRate).rounded()))
    self.ratio = ratio
    slots = 2 * neighbours + 2
    samples = [Float](repeating: 0, count: slots * blockLength)
    powers = [Float](repeating: 0, count: slots)
    isClick = [Bool](repeating: false, count: slots)
    // Fourth-order Butterworth: two sections with the Q of its pole pairs.
    highPass = (
      .highPass(
        frequency: Self.highPassCorner, q: Butterworth.fourthOrderQ.0, sampleRate: sampleRate),
      .highPass(
        frequency: Self.highPassCorner, q: Butterworth.fourthOrderQ.1, sampleRate: sampleRate)
    )
  }

  /// Takes `input`; calls `emit` with every stretch of samples let out.
  public mutating func process(
    _ input: UnsafeBufferPointer<Float>, emit: (UnsafeBufferPointer<Float>) -> Void
  ) {
    var offset = 0
    while offset < input.count {
      let slot = completed % slots
      let take = min(blockLength - filled, input.count - offset)
      var energy = blockEnergy
      var filter = highPass
      samples.withUnsafeMutableBufferPointer { held in
        for index in 0..<take {
          let value = input[offset + index]
          held[slot * blockLength + filled + index] = value
          let high = filter.1.process(filter.0.process(value))
          energy += high * high
        }
      }
      highPass = filter
      blockEnergy = energy
      filled += take
      offset += take
      guard filled == blockLength else { break }
      powers[slot] = blockEnergy / Float(blockLength)
      isClick[slot] = false
      blockEnergy = 0
      filled = 0
      completed += 1
      if completed > neighbours {
        decide(completed - 1 - neighbours)
        if completed - emitted > neighbours + 1 { letOut(emitted, emit: emit) }
      }
    }
  }

  /// Lets out everything held, deciding the last blocks on the neighbours
  /// they have, then the unfinished block as it is.
  public mutating func flush(emit: (UnsafeBufferPointer<Float>) -> Void) {
    for block in max(0, completed - neighbours)..<completed { decide(block) }
    while emitted < completed { letOut(emitted, emit: emit) }
    if filled > 0 {
      let start = (completed % slots) * blockLength
      samples.withUnsafeBufferPointer { held in
        emit(UnsafeBufferPointer(rebasing: held[start..<(start + filled)]))
      }
      filled = 0
    }
  }

  /// Decides block `block`, whose neighbours up to `neighbours` on each
  /// side (as many as exist) have been measured.
  private mutating func decide(_ block: Int) {
    let before = sideLevel(from: max(0, block - neighbours), to: block - 1)
    let after = sideLevel(from: block + 1, to: min(completed - 1, block + neighbours))
    guard before != nil || after != nil else { return }
    let reference = max(before ?? 0, after ?? 0)
    let threshold = ratio * ratio * reference
    let slot = block % slots
    guard powers[slot] > threshold, powers[slot] > 1e-12 else { return }
    isClick[slot] = true
    if block - 1 >= emitted, powers[(block - 1) % slots] > Self.neighbourShare * threshold {
      isClick[(block - 1) % slots] = true
    }
    if block + 1 < completed, powers[(block + 1) % slots] > Self.neighbourShare * threshold {
      isClick[(block + 1) % slots] = true
    }
  }

  /// The mean power of blocks `first...last`; `nil` for fewer than half
  /// of `neighbours`.
  private func sideLevel(from first: Int, to last: Int) -> Float? {
    guard last - first + 1 >= neighbours / 2 else { return nil }
    var sum: Float = 0
    for other in first...last { sum += powers[other % slots] }
    return sum / Float(last - first + 1)
  }

  private mutating func letOut(_ block: Int, emit: (UnsafeBufferPointer<Float>) -> Void) {
    let slot = block % slots
    let range = (slot * blockLength)..<((slot + 1) * blockLength)
    if isClick[slot] {
      blankedBlocks += 1
      samples.withUnsafeMutableBufferPointer { held in
        for index in range { held[index] = 0 }
      }
    }
    samples.withUnsafeBufferPointer { held in emit(UnsafeBufferPointer(rebasing: held[range])) }
    emitted += 1
  }
}
