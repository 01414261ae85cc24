/// What paces the control thread of a running unit, where a live job
/// drains its rings, learns the loop and decides: real time (a cycle every
/// `RealTimeCycles.interval`, sooner when the unit stops), or, for a
/// simulated device, one stepped a control cycle at a time as fast as the
/// processor allows. Control thread only.
public protocol ControlCycleClock {
  /// Waits until the next control cycle is due; true when the unit has
  /// stopped. `waitUntilStopped(seconds)` waits at most that long for the
  /// unit to stop and says whether it did.
  mutating func nextCycle(waitUntilStopped: (Double) -> Bool) -> Bool
}

/// Control cycles in real time: the control thread wakes every `interval`
/// seconds, or as soon as the unit stops. Control thread only.
public struct RealTimeCycles: ControlCycleClock {
  /// Seconds between two cycles: 20 ms keeps a meter's display and a
  /// recorder's decisions current without waking the control thread for
  /// every period.
  public static let defaultInterval = 0.02
  public var interval: Double

  public init(interval: Double = defaultInterval) { self.interval = interval }

  public mutating func nextCycle(waitUntilStopped: (Double) -> Bool) -> Bool {
    waitUntilStopped(interval)
  }
}
