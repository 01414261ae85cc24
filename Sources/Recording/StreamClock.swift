/// Maps the recorder's timeline frames to wall-clock time (seconds since
/// 1970). A file's frames sit at fixed times from a known start; a live
/// stream's are estimated from when they arrive: each observation says
/// "frame F had arrived by time T", so T − F / rate is the start of the
/// stream plus the delivery delay, and the smallest recent value is the
/// closest to the capture itself. Recent observations win, so a device
/// clock that drifts from the system's is followed. Control thread.
public final class StreamClock {
  public let sampleRate: Double
  /// Seconds of observations one estimate is taken from (the smallest
  /// offset in the last two such windows).
  static let window = 8.0
  private var fixedStart: Double?
  private var current: (start: Double, offset: Double)?
  private var previousOffset: Double?

  /// A stream whose frame 0 was at `epochSeconds` (a file).
  public init(sampleRate: Double, startingAt epochSeconds: Double) {
    self.sampleRate = sampleRate
    fixedStart = epochSeconds
  }

  /// A live stream, placed by `observe`.
  public init(sampleRate: Double) {
    self.sampleRate = sampleRate
  }

  /// Notes that `frame` frames had arrived at `epochSeconds` (live).
  public func observe(frame: Int64, at epochSeconds: Double) {
    guard fixedStart == nil else { return }
    let offset = epochSeconds - Double(frame) / sampleRate
    guard var window = current else {
      current = (epochSeconds, offset)
      return
    }
    if epochSeconds - window.start >= Self.window {
      previousOffset = window.offset
      window = (epochSeconds, offset)
    } else {
      window.offset = min(window.offset, offset)
    }
    current = window
  }

  /// The wall-clock time of `frame`.
  public func time(ofFrame frame: Int64) -> Double {
    let base =
      fixedStart ?? min(current?.offset ?? SystemClock.now, previousOffset ?? .infinity)
    return base + Double(frame) / sampleRate
  }
}
