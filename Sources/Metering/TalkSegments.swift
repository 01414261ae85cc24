/// Pairs a meter's talk starts and ends into segments, in stream time: a
/// talk end closes the segment the last start opened (or an empty one at
/// its own time when no start came before it, as after a stop mid-talk).
/// Used wherever events become a list of segments (the meter's summary
/// lines, the live printer, plots). One thread at a time.
public struct TalkSegments: Sendable {
  /// The segments closed so far, in order.
  public private(set) var closed = [(start: Double, end: Double)]()
  /// The start of a segment still open.
  public private(set) var openStart: Double?

  public init() {}

  /// Takes talk starts and ends; other events pass by.
  public mutating func take(_ event: MeterEvent) {
    switch event {
    case .talkStart(let time): openStart = time
    case .talkEnd(let time):
      closed.append((openStart ?? time, time))
      openStart = nil
    case .level, .summary: break
    }
  }

  /// The segments with one still open ended at `end` (the stream's end).
  public func closing(at end: Double) -> [(start: Double, end: Double)] {
    guard let openStart else { return closed }
    return closed + [(openStart, end)]
  }
}
