/// Tracks the noise floor of a level signal by minimum statistics.
///
/// Values arrive once per frame (typically the mean envelope over 10 ms).
/// The floor is the smallest value seen in the last `windowFrames` frames,
/// kept as minima of `subwindowCount` sub-windows, so it drops at once
/// when the input gets quieter and rises within one window when the noise
/// gets louder, while speech (which always pauses) never lifts it.
/// Storage is allocated in `init`; `add` is real-time safe.
public struct NoiseFloorTracker: Sendable {
  /// Frames per sub-window.
  public let subwindowFrames: Int
  private var minima: [Float]
  private var nextSubwindow = 0
  private var currentMinimum = Float.infinity
  private var framesInSubwindow = 0
  /// Current floor estimate (linear); `nil` before the first frame.
  public private(set) var floor: Float?

  /// - Parameters:
  ///   - windowFrames: frames the minimum is taken over.
  ///   - subwindowCount: how many sub-windows the window is split into.
  public init(windowFrames: Int, subwindowCount: Int = 8) {
    let count = max(1, subwindowCount)
    subwindowFrames = max(1, windowFrames / count)
    minima = [Float](repeating: .infinity, count: count)
  }

  /// Adds one frame value and updates `floor`.
  public mutating func add(_ value: Float) {
    currentMinimum = min(currentMinimum, value)
    framesInSubwindow += 1
    if framesInSubwindow == subwindowFrames {
      minima[nextSubwindow] = currentMinimum
      nextSubwindow = (nextSubwindow + 1) % minima.count
      currentMinimum = .infinity
      framesInSubwindow = 0
    }
    var smallest = currentMinimum
    for index in 0..<minima.count { smallest = min(smallest, minima[index]) }
    floor = smallest
  }
}
