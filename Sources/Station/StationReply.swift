/// What the station answers one request with, decided by `StationRouter`
/// and sent by `StationConnection`. Safe on any thread.
enum StationReply: Sendable, Equatable {
  /// A whole response held in memory.
  case response(status: Int, headers: [(String, String)], body: [UInt8])
  /// A recording the session listed, whole or a byte range of it.
  case recording(RecordingEntry, range: String?)
  /// The Server-Sent Events stream of the feed's lines.
  case events

  static func text(_ status: Int, _ body: String, type: String = "text/plain; charset=utf-8")
    -> StationReply
  {
    .response(status: status, headers: [("Content-Type", type)], body: Array(body.utf8))
  }

  static func == (lhs: StationReply, rhs: StationReply) -> Bool {
    switch (lhs, rhs) {
    case (.response(let a, let ah, let ab), .response(let b, let bh, let bb)):
      a == b && ab == bb && ah.map { $0.0 + ":" + $0.1 } == bh.map { $0.0 + ":" + $0.1 }
    case (.recording(let a, let ar), .recording(let b, let br)): a == b && ar == br
    case (.events, .events): true
    default: false
    }
  }

  /// The reason phrase of the statuses the station uses.
  static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 206: "Partial Content"
    case 303: "See Other"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 416: "Range Not Satisfiable"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }
}
