import Metering
import Testing

@Suite struct TalkSegmentsTests {
  /// Starts and ends pair in order, levels pass by, an end without a start
  /// is an empty segment at its time, and an open segment closes at the end.
  @Test func startsAndEndsPairIntoSegments() {
    var segments = TalkSegments()
    let events: [MeterEvent] = [
      .talkEnd(time: 0.5), .talkStart(time: 1), .talkEnd(time: 2.5), .talkStart(time: 4),
    ]
    for event in events { segments.take(event) }
    #expect(segments.closed.map(\.start) == [0.5, 1])
    #expect(segments.closed.map(\.end) == [0.5, 2.5])
    #expect(segments.openStart == 4)
    let all = segments.closing(at: 6)
    #expect(all.count == 3)
    #expect(all.last?.start == 4 && all.last?.end == 6)
    #expect(TalkSegments().closing(at: 3).isEmpty)
  }
}
