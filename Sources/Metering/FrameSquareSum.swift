/// The sum of the squares of one frame's samples (the talk stage's 10 ms
/// frames), fed in pieces of any size.
///
/// The first `frameLength` rounded down to 8 samples go to eight Float
/// lanes by their place in the frame, summed across at that place; the
/// rest are added one by one. Every piece's sample lands in the same lane
/// however the frame is cut, so the sum is the same bits: the sum the
/// whole frame would give in one piece. No allocation; real-time safe; one
/// caller at a time (the thread that runs the talk stage).
struct FrameSquareSum: Sendable {
  /// Samples in a frame.
  let frameLength: Int
  /// Samples of a frame summed in lanes.
  private let laneLength: Int
  private var lanes = SIMD8<Float>(repeating: 0)
  /// The lanes summed across, then each later sample's square added.
  private var total: Float = 0
  /// Samples of the frame so far.
  private(set) var filled = 0

  init(frameLength: Int) {
    precondition(frameLength > 0)
    self.frameLength = frameLength
    laneLength = frameLength & ~7
  }

  /// Adds `count` samples, at most the rest of the frame.
  @inline(__always)
  mutating func add(_ samples: UnsafePointer<Float>, count: Int) {
    precondition(count <= frameLength - filled)
    var index = 0
    if filled < laneLength {
      let laneEnd = min(count, laneLength - filled)
      while index < laneEnd && (filled + index) & 7 != 0 {
        lanes[(filled + index) & 7] += samples[index] * samples[index]
        index += 1
      }
      let raw = UnsafeRawPointer(samples)
      while index + 8 <= laneEnd {
        let v = raw.loadUnaligned(
          fromByteOffset: index * MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
        lanes += v * v
        index += 8
      }
      while index < laneEnd {
        lanes[(filled + index) & 7] += samples[index] * samples[index]
        index += 1
      }
      if filled + index == laneLength { total = lanes.sum() }
    }
    while index < count {
      total += samples[index] * samples[index]
      index += 1
    }
    filled += count
  }

  /// The sum of the frame's squares, once it is full; starts the next frame.
  mutating func take() -> Float {
    precondition(filled == frameLength)
    let sum = total
    lanes = SIMD8(repeating: 0)
    total = 0
    filled = 0
    return sum
  }
}
