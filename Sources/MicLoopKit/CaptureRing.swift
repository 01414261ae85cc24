import Synchronization

/// Captured audio on its way from the audio thread to the control thread,
/// block by block, each block with the stream frame where it begins: the
/// audio thread pushes whole periods (or drops them whole, counted, when
/// the control thread has fallen behind), the control thread drains them
/// in order. No locks, no allocation after `init`.
///
/// One producer (the audio thread) and one consumer (the control thread).
public final class CaptureRing: @unchecked Sendable {
  /// A run of captured frames, valid only inside `drain`'s body.
  public struct Block {
    /// The stream frame of the block's first frame (frames captured by the
    /// job before it, across reconnects; gaps are not counted).
    public var streamFrame: Int64
    /// `frameCount × channelCount` interleaved samples.
    public var samples: UnsafeBufferPointer<Float>
    public var channelCount: Int
    public var frameCount: Int { samples.count / channelCount }
  }

  /// Where a pushed block begins and how long it is.
  private struct Mark: BitwiseCopyable {
    var streamFrame: Int64
    var frames: Int
  }

  public let channelCount: Int
  /// Frames dropped because the ring was full (audio thread writes).
  public let droppedFrames = Atomic<Int>(0)
  private let samples: SPSCRing<Float>
  private let marks: SPSCRing<Mark>

  /// - Parameters:
  ///   - frames: the most frames held at once.
  ///   - channelCount: interleaved channels per frame.
  ///   - shortestBlock: the fewest frames the audio thread pushes at once
  ///     (its shortest period), which bounds the blocks held.
  public init(frames: Int, channelCount: Int, shortestBlock: Int = 16) {
    self.channelCount = channelCount
    // Room for whole frames only (the ring keeps one element free), so no
    // frame is ever split where the ring wraps.
    samples = SPSCRing(capacity: (frames + 1) * channelCount - 1)
    marks = SPSCRing(capacity: frames / max(1, shortestBlock) + 2)
  }

  /// Audio thread: adds `frames` interleaved frames captured at
  /// `streamFrame`, or drops them all (counted) when they do not fit.
  public func push(_ source: UnsafePointer<Float>, frames: Int, at streamFrame: Int64) {
    let count = frames * channelCount
    guard marks.freeCount >= 1, samples.freeCount >= count else {
      droppedFrames.add(frames, ordering: .relaxed)
      return
    }
    samples.push(source, count: count)
    marks.push(Mark(streamFrame: streamFrame, frames: frames))
  }

  /// Control thread: hands every block pushed before the call to `body`,
  /// in stream order; a block that wraps round the ring comes as two.
  /// Blocks pushed meanwhile wait for the next call, so a cycle ends even
  /// when the audio thread captures as fast as `body` writes (a slow disk).
  public func drain(_ body: (Block) -> Void) {
    var remaining = marks.count
    while remaining > 0, let mark = marks.pop() {
      remaining -= 1
      var frame = mark.streamFrame
      samples.drain(count: mark.frames * channelCount) { run in
        body(Block(streamFrame: frame, samples: run, channelCount: channelCount))
        frame += Int64(run.count / channelCount)
      }
    }
  }
}
