/// The last seconds of captured audio, interleaved, addressed by timeline
/// frame: what a recording reaches back into for its pre-roll and for the
/// time its triggers take to decide. Appending past the capacity drops the
/// oldest frames. Allocated once, and again only when it is asked to grow
/// (`grow`); control thread.
final class LookbackRing {
  let channelCount: Int
  /// Frames held at most.
  private(set) var capacity: Int
  private var storage: UnsafeMutablePointer<Float>
  /// The timeline frame after the newest frame held.
  private(set) var endFrame: Int64 = 0
  /// Frames held.
  private var count = 0

  init(capacity: Int, channelCount: Int) {
    self.capacity = max(1, capacity)
    self.channelCount = channelCount
    storage = .allocate(capacity: self.capacity * channelCount)
    storage.initialize(repeating: 0, count: self.capacity * channelCount)
  }

  deinit { storage.deallocate() }

  /// The oldest frame held.
  var startFrame: Int64 { endFrame - Int64(count) }

  /// Makes room for at least `frames` frames, keeping every frame held.
  func grow(toHold frames: Int) {
    guard frames > capacity else { return }
    let held = (storage, capacity, startFrame, endFrame)
    storage = .allocate(capacity: frames * channelCount)
    storage.initialize(repeating: 0, count: frames * channelCount)
    capacity = frames
    endFrame = held.2
    count = 0
    var frame = held.2
    while frame < held.3 {
      let position = Int(frame % Int64(held.1))
      let run = Int(min(held.3 - frame, Int64(held.1 - position)))
      append(held.0 + position * channelCount, frameCount: run)
      frame += Int64(run)
    }
    held.0.deallocate()
  }

  /// Appends the next `frameCount` frames of the timeline.
  func append(_ samples: UnsafePointer<Float>, frameCount: Int) {
    var source = samples
    var left = frameCount
    // Only the newest `capacity` frames can stay.
    if left > capacity {
      source += (left - capacity) * channelCount
      endFrame += Int64(left - capacity)
      count = 0
      left = capacity
    }
    while left > 0 {
      let position = Int(endFrame % Int64(capacity))
      let run = min(left, capacity - position)
      (storage + position * channelCount).update(from: source, count: run * channelCount)
      source += run * channelCount
      left -= run
      endFrame += Int64(run)
      count = min(capacity, count + run)
    }
  }

  /// Moves the timeline on by `frames` frames no audio arrived for (a
  /// gap): what was held is dropped.
  func skip(frames: Int64) {
    endFrame += frames
    count = 0
  }

  /// Hands the frames `from..<to` (clipped to what is held) to `body` in
  /// at most two contiguous runs.
  func read(from start: Int64, to end: Int64, _ body: (UnsafePointer<Float>, Int) -> Void) {
    var frame = max(start, startFrame)
    let last = min(end, endFrame)
    while frame < last {
      let position = Int(frame % Int64(capacity))
      let run = Int(min(last - frame, Int64(capacity - position)))
      body(storage + position * channelCount, run)
      frame += Int64(run)
    }
  }
}
