import Synchronization

/// A wait-free single-producer, single-consumer ring of trivially copyable
/// values: the audio thread pushes, the control thread pops (or the other
/// way round), with no locks and no allocation after `init`.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
  private let storage: UnsafeMutablePointer<Element>
  private let capacity: Int
  private let head = Atomic<Int>(0)  // next write position (producer)
  private let tail = Atomic<Int>(0)  // next read position (consumer)
  /// Elements the producer could not push because the ring was full.
  public let dropped = Atomic<Int>(0)

  /// - Parameter capacity: the most elements held at once.
  public init(capacity: Int) {
    self.capacity = capacity + 1
    storage = .allocate(capacity: capacity + 1)
    // Written once here, every page is resident before the audio thread
    // pushes: no page fault there, and memory that does not creep up as a
    // large ring is first filled.
    UnsafeMutableRawPointer(storage).initializeMemory(
      as: UInt8.self, repeating: 0, count: (capacity + 1) * MemoryLayout<Element>.stride)
  }

  deinit { storage.deallocate() }

  /// Elements ready to pop.
  public var count: Int {
    let h = head.load(ordering: .acquiring)
    let t = tail.load(ordering: .acquiring)
    return h >= t ? h - t : h + capacity - t
  }

  /// Producer: how many elements fit now (at least this many, as the
  /// consumer may free more meanwhile).
  public var freeCount: Int {
    let h = head.load(ordering: .relaxed)
    let t = tail.load(ordering: .acquiring)
    return (t > h ? t - h : t + capacity - h) - 1
  }

  /// Producer: adds one element; false (and counted) when full.
  @discardableResult
  public func push(_ element: Element) -> Bool {
    let h = head.load(ordering: .relaxed)
    let next = h + 1 == capacity ? 0 : h + 1
    guard next != tail.load(ordering: .acquiring) else {
      dropped.add(1, ordering: .relaxed)
      return false
    }
    storage[h] = element
    head.store(next, ordering: .releasing)
    return true
  }

  /// Producer: adds `count` elements; those that do not fit are counted as dropped.
  public func push(_ elements: UnsafePointer<Element>, count: Int) {
    let h = head.load(ordering: .relaxed)
    let t = tail.load(ordering: .acquiring)
    let free = (t > h ? t - h : t + capacity - h) - 1
    let n = min(count, free)
    let first = min(n, capacity - h)
    (storage + h).update(from: elements, count: first)
    if n > first { storage.update(from: elements + first, count: n - first) }
    head.store((h + n) % capacity, ordering: .releasing)
    if n < count { dropped.add(count - n, ordering: .relaxed) }
  }

  /// Consumer: takes one element, or `nil` when empty.
  public func pop() -> Element? {
    let t = tail.load(ordering: .relaxed)
    guard t != head.load(ordering: .acquiring) else { return nil }
    let element = storage[t]
    tail.store(t + 1 == capacity ? 0 : t + 1, ordering: .releasing)
    return element
  }

  /// Consumer: hands the next `count` elements (at most those ready) to
  /// `body` as at most two contiguous runs, then frees them.
  public func drain(count: Int, _ body: (UnsafeBufferPointer<Element>) -> Void) {
    let t = tail.load(ordering: .relaxed)
    let ready = self.count
    let n = min(count, ready)
    guard n > 0 else { return }
    let first = min(n, capacity - t)
    body(UnsafeBufferPointer(start: storage + t, count: first))
    if n > first { body(UnsafeBufferPointer(start: storage, count: n - first)) }
    tail.store((t + n) % capacity, ordering: .releasing)
  }

  /// Consumer: hands every ready element to `body` as at most two contiguous
  /// runs, then frees them.
  public func drain(_ body: (UnsafeBufferPointer<Element>) -> Void) {
    let t = tail.load(ordering: .relaxed)
    let h = head.load(ordering: .acquiring)
    guard t != h else { return }
    if h > t {
      body(UnsafeBufferPointer(start: storage + t, count: h - t))
    } else {
      body(UnsafeBufferPointer(start: storage + t, count: capacity - t))
      if h > 0 { body(UnsafeBufferPointer(start: storage, count: h)) }
    }
    tail.store(h, ordering: .releasing)
  }
}
