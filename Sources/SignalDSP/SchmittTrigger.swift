/// A change of a Schmitt trigger's state (open or closed), at an exact
/// sample position.
public struct TriggerTransition: Sendable, Equatable {
  /// True when the trigger opens, false when it closes.
  public var isStart: Bool
  /// Position (in the trigger's samples) where the change really happened:
  /// for a start, where the envelope last rose above the close threshold
  /// before reaching the open threshold; for an end, where it last fell
  /// below the close threshold (so segments are not padded by the hold).
  public var position: Int64
  /// Position where the trigger decided (the end of the hold, for an end).
  public var decisionPosition: Int64

  public init(isStart: Bool, position: Int64, decisionPosition: Int64) {
    self.isStart = isStart
    self.position = position
    self.decisionPosition = decisionPosition
  }
}

/// A Schmitt trigger with hold: opens when the envelope reaches the open
/// threshold, closes only after it has stayed below the close threshold for
/// `holdSamples` samples in a row. A level between the thresholds never
/// changes the state. Envelope and thresholds may be on any scale that
/// keeps their order (linear, or dB as the talk detector feeds it).
/// No allocation; real-time safe.
public struct SchmittTrigger: Sendable {
  /// Level at or above which a closed trigger opens.
  public var openThreshold: Float
  /// Level below which an open trigger starts its hold.
  public var closeThreshold: Float
  /// Samples the envelope must stay below `closeThreshold` before closing.
  public var holdSamples: Int64
  /// Whether talk is in progress.
  public private(set) var isOpen = false
  /// Samples processed so far.
  public private(set) var position: Int64 = 0
  private var wasAboveClose = false
  private var lastRise: Int64 = 0
  private var lastFall: Int64 = 0

  public init(openThreshold: Float, closeThreshold: Float, holdSamples: Int64) {
    self.openThreshold = openThreshold
    self.closeThreshold = min(closeThreshold, openThreshold)
    self.holdSamples = max(0, holdSamples)
  }

  /// Feeds one envelope sample; returns a transition when the state changes.
  public mutating func process(_ envelope: Float) -> TriggerTransition? {
    defer { position += 1 }
    return step(envelope)
  }

  private mutating func step(_ envelope: Float) -> TriggerTransition? {
    let aboveClose = envelope >= closeThreshold
    if aboveClose && !wasAboveClose { lastRise = position }
    if !aboveClose && wasAboveClose { lastFall = position }
    wasAboveClose = aboveClose
    if isOpen {
      if !aboveClose && position - lastFall + 1 >= holdSamples {
        isOpen = false
        return TriggerTransition(isStart: false, position: lastFall, decisionPosition: position)
      }
    } else if envelope >= openThreshold {
      isOpen = true
      return TriggerTransition(isStart: true, position: lastRise, decisionPosition: position)
    }
    return nil
  }

  /// Feeds a block of envelope samples, calling `onTransition` for each
  /// change. Same results as calling `process(_:)` per sample, faster.
  public mutating func process(
    _ envelope: UnsafeBufferPointer<Float>, onTransition: (TriggerTransition) -> Void
  ) {
    let base = position
    let count = envelope.count
    var index = 0
    while index < count {
      // The values that change nothing in the present state, and the
      // sample where a running hold expires: scan past the rest at once.
      var stop = count
      let low: Float
      let high: Float
      if wasAboveClose {
        low = closeThreshold
        high = isOpen ? .infinity : openThreshold
      } else {
        low = -.infinity
        high = closeThreshold
        if isOpen {
          let expiry = lastFall + holdSamples - 1 - base
          stop = Int(min(Int64(count), max(Int64(index), expiry)))
        }
      }
      index = Self.firstOutside(envelope, from: index, to: stop, low: low, high: high)
      guard index < count else { break }
      position = base + Int64(index)
      if let transition = step(envelope[index]) { onTransition(transition) }
      index += 1
    }
    position = base + Int64(count)
  }

  /// Ends an open segment at the end of the stream.
  /// - Returns: the closing transition, if talk was in progress.
  /// The first index in `from..<to` whose value is below `low` or at or
  /// above `high`; `to` when there is none.
  private static func firstOutside(
    _ values: UnsafeBufferPointer<Float>, from start: Int, to end: Int, low: Float, high: Float
  ) -> Int {
    guard let base = values.baseAddress else { return end }
    var index = start
    let lows = SIMD8<Float>(repeating: low)
    let highs = SIMD8<Float>(repeating: high)
    while index + 8 <= end {
      let v = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD8<Float>.self)
      if any((v .< lows) .| (v .>= highs)) { break }
      index += 8
    }
    while index < end {
      let value = base[index]
      if value < low || value >= high { return index }
      index += 1
    }
    return end
  }

  public mutating func finish() -> TriggerTransition? {
    guard isOpen else { return nil }
    isOpen = false
    let end = wasAboveClose ? position : lastFall
    return TriggerTransition(isStart: false, position: end, decisionPosition: position)
  }
}
