/// What the station answers to a request's raw head (the bytes a client
/// sent up to and including the blank line), decided without a socket:
/// parsing, the token, routing and a byte range, as a connection decides
/// them. For the request fuzzer and tests. Safe on any thread.
public enum StationRequestCheck {
  /// A status, and for a recording the bytes of it that would be sent.
  public struct Answer: Sendable, Equatable {
    public var status: Int
    public var bytes: ClosedRange<Int64>?
  }

  /// The answer the station would give, with `feed`'s recordings each
  /// taken to be `fileSize` bytes long.
  public static func answer(
    toHead head: [UInt8], feed: StationFeed, token: String?, fileSize: Int64
  ) -> Answer {
    guard let request = HTTPRequestHead(head) else { return Answer(status: 400) }
    switch StationRouter(feed: feed, token: token).reply(to: request) {
    case .response(let status, _, _): return Answer(status: status)
    case .events: return Answer(status: 200)
    case .recording(_, let range):
      switch ByteRange.resolve(range, size: fileSize) {
      case .whole: return Answer(status: 200, bytes: fileSize > 0 ? 0...(fileSize - 1) : nil)
      case .part(let part):
        return Answer(status: 206, bytes: part.first <= part.last ? part.first...part.last : nil)
      case .unsatisfiable: return Answer(status: 416)
      }
    }
  }
}

extension StationRequestCheck.Answer {
  init(status: Int) { self.init(status: status, bytes: nil) }
}
