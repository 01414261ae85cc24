import DuplexIO

/// Drives a hand-stepped `SimulatedDevicePair` a control cycle at a time,
/// as fast as the processor allows: each cycle makes `periodsPerCycle`
/// periods due, waits until the audio thread has run them, then the
/// caller does its work between cycles (learning the loop, draining
/// rings), as a live session's control cycle does between real periods.
/// The one stepped loop of the simulated room, its evaluation and its
/// tests; a live job's cycle clock (`ControlCycleClock`) in a simulated
/// room. Used from the thread that steps (one at a time).
public struct SteppedCycles: ControlCycleClock {
  /// Four periods: a 20 ms control cycle at 256-frame periods and 48 kHz.
  public static let defaultPeriodsPerCycle = 4
  /// Seconds between looks at a unit that may stop while its periods run.
  static let stopCheckInterval = 0.05

  public let device: SimulatedDevicePair
  public let periodsPerCycle: Int
  /// Periods made due so far.
  public private(set) var stepped = 0

  public init(_ device: SimulatedDevicePair, periodsPerCycle: Int = defaultPeriodsPerCycle) {
    self.device = device
    self.periodsPerCycle = max(1, periodsPerCycle)
  }

  /// Runs one cycle, then `between`; false when the audio thread did not
  /// finish the cycle's periods within `timeout` seconds (then `between`
  /// is not called).
  @discardableResult
  public mutating func step(timeout: Double = 60, between: () -> Void = {}) -> Bool {
    stepped += periodsPerCycle
    device.advance(periods: periodsPerCycle)
    guard device.waitUntilCompleted(stepped, timeout: timeout) else { return false }
    between()
    return true
  }

  /// Runs one cycle for a live session; true when the unit stopped (its
  /// duration reached, a fault) before or while the cycle ran.
  public mutating func nextCycle(waitUntilStopped: (Double) -> Bool) -> Bool {
    if waitUntilStopped(0) { return true }
    stepped += periodsPerCycle
    device.advance(periods: periodsPerCycle)
    while !device.waitUntilCompleted(stepped, timeout: Self.stopCheckInterval) {
      if waitUntilStopped(0) { return true }
    }
    return waitUntilStopped(0)
  }
}
