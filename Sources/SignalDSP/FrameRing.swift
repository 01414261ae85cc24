/// The latest samples of one stream, kept for frames of one length taken
/// every `hop` samples: a ring that says when each frame is due and gives
/// any frame up to `extraHops` hops old. Owned by one thread.
package final class FrameRing {
  package let frameLength: Int
  package let hop: Int
  private let capacity: Int
  private let history: UnsafeMutablePointer<Float>
  private var writeIndex = 0
  private var untilFrame: Int
  /// Frames due so far: the newest is frame `framesDue - 1`, which began
  /// at stream sample `(framesDue - 1) × hop`.
  package var framesDue: Int { dueFrames }
  /// Samples written so far.
  package var written: Int { writtenSamples }
  // The two counts above, stored privately: when every access to them is
  // in this module the optimiser proves that none overlaps another, and
  // `write` and `frame` run without run-time exclusivity checks.
  private var dueFrames = 0
  private var writtenSamples = 0

  package init(frameLength: Int, hop: Int, extraHops: Int) {
    self.frameLength = frameLength
    self.hop = hop
    capacity = frameLength + extraHops * hop
    history = .allocate(capacity: capacity)
    history.initialize(repeating: 0, count: capacity)
    untilFrame = frameLength
  }

  deinit { history.deallocate() }

  /// Adds `samples`, calling `due` each time the next frame's last sample
  /// has been added.
  @inline(__always)
  package func write(_ samples: UnsafeBufferPointer<Float>, due: () -> Void) {
    guard let base = samples.baseAddress else { return }
    var offset = 0
    while offset < samples.count {
      let chunk = min(samples.count - offset, untilFrame, capacity - writeIndex)
      (history + writeIndex).update(from: base + offset, count: chunk)
      offset += chunk
      writtenSamples += chunk
      writeIndex = (writeIndex + chunk) % capacity
      untilFrame -= chunk
      if untilFrame == 0 {
        untilFrame = hop
        dueFrames += 1
        due()
      }
    }
  }

  /// Frame `number` (due, and still held), as the two contiguous pieces of
  /// the ring it lies in.
  package func frame(_ number: Int) -> (UnsafeBufferPointer<Float>, UnsafeBufferPointer<Float>) {
    let age = writtenSamples - (number * hop + frameLength)
    precondition(number < dueFrames && age + frameLength <= capacity, "frame no longer held")
    let start = (writeIndex - age - frameLength + 2 * capacity) % capacity
    let first = min(frameLength, capacity - start)
    return (
      UnsafeBufferPointer(start: history + start, count: first),
      UnsafeBufferPointer(start: history, count: frameLength - first)
    )
  }

  /// Copies stream samples `start ..< start + count` into `destination`
  /// if the ring still holds them all; returns whether it did.
  package func copy(from start: Int, count: Int, into destination: UnsafeMutablePointer<Float>)
    -> Bool
  {
    let age = writtenSamples - start
    guard start >= 0, count >= 0, age >= count, age <= capacity else { return false }
    let first = (writeIndex - age + capacity) % capacity
    let head = min(count, capacity - first)
    destination.update(from: history + first, count: head)
    (destination + head).update(from: history, count: count - head)
    return true
  }
}
