import Synchronization

/// A live parameter (a gain, a level, a frequency) that any thread may set
/// and the audio thread follows in a straight line over a fixed number of
/// frames, then holds exactly: no zipper noise, no lock. It owns the whole
/// crossing: the requested value as an atomic bit pattern, a change counter
/// the audio thread compares with the last one it saw, and the ramp.
///
/// `set` and `requestedValue` may be called from any thread; `update`,
/// `next`, `scale` and `current` belong to the one thread that processes
/// audio (they never allocate).
public final class RampedParameter: @unchecked Sendable {
  private let requested: Atomic<UInt32>
  private let changes = Atomic<UInt32>(0)
  private var seenChanges: UInt32 = 0
  private var step: Float = 0
  private var remaining = 0
  /// The value applied to the most recent frame (audio thread).
  public private(set) var current: Float
  /// The value the ramp is heading to (audio thread).
  public private(set) var target: Float
  /// Frames a change takes; set it before the audio thread runs.
  public var rampFrames: Int {
    didSet { rampFrames = max(0, rampFrames) }
  }

  public init(value: Float, rampFrames: Int) {
    requested = Atomic(value.bitPattern)
    current = value
    target = value
    self.rampFrames = max(0, rampFrames)
  }

  /// Asks for a new value (any thread); the audio thread ramps to it.
  public func set(_ value: Float) {
    requested.store(value.bitPattern, ordering: .releasing)
    changes.add(1, ordering: .releasing)
  }

  /// The value last asked for (any thread).
  public var requestedValue: Float { Float(bitPattern: requested.load(ordering: .acquiring)) }

  /// Picks up a value set since the last call and starts its ramp (audio
  /// thread, once per block).
  @inline(__always)
  public func update() {
    let count = changes.load(ordering: .acquiring)
    guard count != seenChanges else { return }
    seenChanges = count
    let value = Float(bitPattern: requested.load(ordering: .acquiring))
    target = value
    if rampFrames == 0 || value == current {
      current = value
      remaining = 0
    } else {
      remaining = rampFrames
      step = (value - current) / Float(rampFrames)
    }
  }

  /// Whether a ramp is in progress.
  public var isRamping: Bool { remaining > 0 }

  /// The value for the next frame (audio thread).
  @inline(__always)
  public func next() -> Float {
    if remaining > 0 {
      remaining -= 1
      current = remaining == 0 ? target : current + step
    }
    return current
  }

  /// Multiplies each frame of interleaved `samples` by the parameter,
  /// ramping as it goes (audio thread; picks up changes first).
  public func scale(_ samples: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
    update()
    var frame = 0
    while remaining > 0 && frame < frameCount {
      let value = next()
      for channel in 0..<channelCount { samples[frame * channelCount + channel] *= value }
      frame += 1
    }
    let value = current
    if value == 1 { return }
    var index = frame * channelCount
    let end = frameCount * channelCount
    while index < end {
      samples[index] *= value
      index += 1
    }
  }
}
