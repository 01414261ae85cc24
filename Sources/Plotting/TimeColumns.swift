/// A value that summarises a stretch of time and can absorb the next stretch.
public protocol ColumnValue {
  /// Absorbs `next`, the value of the stretch that follows.
  mutating func merge(_ next: Self)
}

/// Values of a stream gathered into columns of equal length in time, at
/// most `capacity` of them however long the stream: when the next value
/// falls past the last column, neighbouring columns merge in pairs and
/// each covers twice as long. Memory is bounded; a plot `capacity / 2`
/// pixels wide or more has at least one column per pixel. One thread.
public struct TimeColumns<Value: ColumnValue> {
  /// Most columns held.
  public let capacity: Int
  /// Column positions from here on are not added.
  private static var farthestPosition: Double { 0x1p52 }
  /// Seconds each column covers.
  public private(set) var secondsPerColumn: Double
  /// The columns, the first starting at time 0; `nil` where nothing was added.
  public private(set) var columns: [Value?] = []

  /// - Parameters:
  ///   - capacity: most columns held (at least 2).
  ///   - secondsPerColumn: the starting column length (the stream length
  ///     divided by `capacity` when known, for no merging at all).
  public init(capacity: Int, secondsPerColumn: Double) {
    precondition(capacity >= 2 && secondsPerColumn > 0)
    self.capacity = capacity
    self.secondsPerColumn = secondsPerColumn
  }

  /// Adds the value of a stretch starting at `time` seconds (in time order).
  /// A time that is not finite, or past 2^52 columns, is not added.
  public mutating func add(_ value: Value, at time: Double) {
    guard time.isFinite else { return }
    var position = max(0, time) / secondsPerColumn
    guard position < Self.farthestPosition else { return }
    while position >= Double(capacity) {
      mergePairs()
      position = max(0, time) / secondsPerColumn
    }
    let index = Int(position)
    while columns.count <= index { columns.append(nil) }
    if columns[index] == nil {
      columns[index] = value
    } else {
      columns[index]!.merge(value)
    }
  }

  /// The merge of the columns that start in `start..<end` seconds.
  public func value(from start: Double, to end: Double) -> Value? {
    // Positions are clamped to the columns held before they become indices.
    func column(_ position: Double) -> Int {
      position > 0 ? Int(min(Double(columns.count), position)) : 0
    }
    let first = column(start / secondsPerColumn)
    let last = min(columns.count, max(first + 1, column((end / secondsPerColumn).rounded(.up))))
    var result: Value?
    var index = first
    while index < last {
      if let value = columns[index] {
        if result == nil { result = value } else { result!.merge(value) }
      }
      index += 1
    }
    return result
  }

  private mutating func mergePairs() {
    var merged = [Value?]()
    merged.reserveCapacity(capacity)
    var index = 0
    while index < columns.count {
      var value = columns[index]
      if index + 1 < columns.count, let next = columns[index + 1] {
        if value == nil { value = next } else { value!.merge(next) }
      }
      merged.append(value)
      index += 2
    }
    columns = merged
    secondsPerColumn *= 2
  }
}
