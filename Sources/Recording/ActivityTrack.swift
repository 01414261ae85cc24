/// When something was active (talk, a level above its threshold, a
/// sub-tone, a starting call) as a sorted list of disjoint spans of
/// timeline frames, and how far that is known: `horizon`, before which no
/// later report will change it. An open span lasts until it is closed.
/// Control thread.
struct ActivityTrack {
  /// Disjoint, sorted spans; `end` is `Int64.max` while open.
  private(set) var spans: [(start: Int64, end: Int64)] = []
  /// Frames before this are final.
  var horizon: Int64 = 0

  /// Whether a span is open (active with no end reported yet).
  var isOpen: Bool { spans.last?.end == .max }

  /// Opens a span at `frame` (nothing when one is open already).
  mutating func open(at frame: Int64) {
    guard !isOpen else { return }
    add(start: frame, end: .max)
  }

  /// Closes the open span at `frame` (at its start when `frame` is earlier).
  mutating func close(at frame: Int64) {
    guard isOpen else { return }
    let last = spans.count - 1
    if frame <= spans[last].start {
      spans.removeLast()
    } else {
      spans[last].end = frame
    }
  }

  /// Adds `start..<end`, merged with the spans it touches.
  mutating func add(start: Int64, end: Int64) {
    guard end > start else { return }
    var merged = (start: start, end: end)
    var kept = [(start: Int64, end: Int64)]()
    kept.reserveCapacity(spans.count + 1)
    var inserted = false
    for span in spans {
      if span.end < merged.start {
        kept.append(span)
      } else if span.start > merged.end {
        if !inserted {
          kept.append(merged)
          inserted = true
        }
        kept.append(span)
      } else {
        merged = (min(merged.start, span.start), max(merged.end, span.end))
      }
    }
    if !inserted { kept.append(merged) }
    spans = kept
  }

  /// Whether `frame` lies in a span.
  func isActive(at frame: Int64) -> Bool {
    for span in spans where span.start <= frame {
      if frame < span.end { return true }
    }
    return false
  }

  /// The first frame after `frame` where activity starts or ends, if any.
  func nextChange(after frame: Int64) -> Int64? {
    for span in spans {
      if span.start > frame { return span.start }
      if span.end > frame { return span.end == .max ? nil : span.end }
    }
    return nil
  }

  /// The start of the span holding `frame`.
  func spanStart(holding frame: Int64) -> Int64? {
    spans.first { $0.start <= frame && frame < $0.end }?.start
  }

  /// Forgets spans that ended before `frame`.
  mutating func forget(before frame: Int64) {
    spans.removeAll { $0.end < frame }
  }
}
