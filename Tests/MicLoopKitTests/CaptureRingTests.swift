import MicLoopKit
import Testing

/// The capture ring between the audio thread and the control thread:
/// blocks in stream order with their frames, and a drain that ends.
@Suite struct CaptureRingTests {
  /// Pushes `frames` frames of one channel, each sample its stream frame.
  static func push(_ ring: CaptureRing, frames: Int, at streamFrame: Int64) {
    let samples = (0..<frames).map { Float(streamFrame + Int64($0)) }
    samples.withUnsafeBufferPointer {
      ring.push($0.baseAddress!, frames: frames, at: streamFrame)
    }
  }

  /// Blocks come out in order, each at its stream frame, a block that
  /// wraps round the ring as two runs that continue each other.
  @Test func blocksComeOutInOrderAtTheirStreamFrames() {
    let ring = CaptureRing(frames: 100, channelCount: 1)
    var next: Int64 = 0
    for _ in 0..<7 {
      Self.push(ring, frames: 30, at: next)
      Self.push(ring, frames: 30, at: next + 30)
      var expected = next
      ring.drain { block in
        #expect(block.streamFrame == expected)
        #expect(block.samples.first == Float(expected))
        expected += Int64(block.frameCount)
      }
      #expect(expected == next + 60)
      next += 60
    }
    #expect(ring.droppedFrames.load(ordering: .relaxed) == 0)
  }

  /// A drain hands on what was there when it began: blocks pushed while
  /// it runs (an audio thread as fast as the disk) wait for the next one,
  /// so a control cycle always ends.
  @Test func aDrainEndsWhileTheProducerKeepsPushing() {
    let ring = CaptureRing(frames: 1_000, channelCount: 1)
    Self.push(ring, frames: 10, at: 0)
    Self.push(ring, frames: 10, at: 10)
    var next: Int64 = 20
    var taken = [Int64]()
    ring.drain { block in
      taken.append(block.streamFrame)
      Self.push(ring, frames: 10, at: next)
      next += 10
    }
    #expect(taken == [0, 10])
    var later = [Int64]()
    ring.drain { later.append($0.streamFrame) }
    #expect(later == [20, 30])
  }
}
