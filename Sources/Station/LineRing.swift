/// The last `capacity` lines published, each with its sequence number
/// (0 for the first line ever). Readers keep their own cursor (the number
/// of the next line they want). Not thread-safe: `StationFeed` guards it.
struct LineRing {
  private var slots: [String] = []
  let capacity: Int
  /// The sequence number the next line will get (lines published so far).
  private(set) var next = 0

  init(capacity: Int) {
    self.capacity = max(1, capacity)
    slots.reserveCapacity(self.capacity)
  }

  mutating func append(_ line: String) {
    if slots.count < capacity {
      slots.append(line)
    } else {
      slots[next % capacity] = line
    }
    next += 1
  }

  /// The oldest sequence number still held.
  var oldest: Int { max(0, next - capacity) }

  /// Lines from `cursor` on (at most `limit`), and the cursor after them;
  /// nil when `cursor` is older than what the ring still holds.
  func lines(from cursor: Int, limit: Int) -> (lines: [String], next: Int)? {
    guard cursor >= oldest else { return nil }
    let end = min(next, cursor + limit)
    guard cursor < end else { return ([], cursor) }
    var result = [String]()
    result.reserveCapacity(end - cursor)
    for sequence in cursor..<end { result.append(slots[sequence % capacity]) }
    return (result, end)
  }
}
