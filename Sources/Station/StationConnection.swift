import FlyingSocks
import Foundation

/// Serves one client connection: reads one request's head (size and time
/// limited), answers it, and closes. `/events` streams until the client
/// goes, falls behind, or the station stops. One server task per connection.
struct StationConnection: Sendable {
  let socket: AsyncSocket
  let router: StationRouter
  let limits: StationLimits

  func serve() async {
    defer { try? socket.close() }
    do {
      let head: [UInt8]
      do {
        guard let read = try await readHead() else { return }
        head = read
      } catch HeadError.tooLarge {
        try await send(StationReply.text(431, "request head too large\n"), isHead: false)
        return
      } catch ClientDrop.timedOut {
        try await send(StationReply.text(408, "request timeout\n"), isHead: false)
        return
      }
      guard let request = HTTPRequestHead(head) else {
        try await send(StationReply.text(400, "bad request\n"), isHead: false)
        return
      }
      try await send(router.reply(to: request), isHead: request.method == "HEAD")
    } catch {
      // The client went, was too slow, or the station stops: nothing to tell it.
    }
  }

  private enum HeadError: Error { case tooLarge }

  /// The bytes up to and including the blank line; nil if the client closed first.
  private func readHead() async throws -> [UInt8]? {
    let limit = limits.maximumHeaderBytes
    let socket = self.socket
    return try await withDeadline(seconds: limits.headerTimeout) {
      var bytes = [UInt8]()
      while true {
        let chunk: [UInt8]
        do {
          chunk = try await socket.read(atMost: 4096)
        } catch SocketError.disconnected {
          return nil
        }
        if chunk.isEmpty { return nil }
        let searchFrom = max(0, bytes.count - 3)
        bytes += chunk
        if let end = Self.find(HTTPRequestHead.terminator, in: bytes, from: searchFrom) {
          guard end <= limit else { throw HeadError.tooLarge }
          return Array(bytes[..<end])
        }
        if bytes.count > limit { throw HeadError.tooLarge }
      }
    }
  }

  private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
    guard bytes.count >= needle.count else { return nil }
    var index = start
    while index + needle.count <= bytes.count {
      if bytes[index..<index + needle.count].elementsEqual(needle) { return index + needle.count }
      index += 1
    }
    return nil
  }

  private func write(_ bytes: [UInt8], abandon: @escaping @Sendable () -> Bool = { false })
    async throws
  {
    let socket = self.socket
    let data = Data(bytes)
    // Most writes go at once: only what the socket cannot take now waits,
    // under the deadline (a task group and its timer cost more than the write).
    var sent = data.startIndex
    do {
      while sent < data.endIndex { sent = try socket.socket.write(data, from: sent) }
      return
    } catch SocketError.blocked {}
    let rest = Data(data[sent...])
    try await withDeadline(seconds: limits.writeTimeout, abandon: abandon) {
      try await socket.write(rest)
    }
  }

  private func headBytes(_ status: Int, _ headers: [(String, String)]) -> [UInt8] {
    var text = "HTTP/1.1 \(status) \(StationReply.reason(status))\r\n"
    for (name, value) in headers + Self.commonHeaders { text += "\(name): \(value)\r\n" }
    return Array((text + "\r\n").utf8)
  }

  /// Sent with every response: one request per connection, nothing cached
  /// or sniffed, nothing loaded from elsewhere.
  static let commonHeaders = [
    ("Connection", "close"),
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    (
      "Content-Security-Policy",
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; media-src 'self'; img-src 'self' data:"
    ),
  ]

  private func send(_ reply: StationReply, isHead: Bool) async throws {
    switch reply {
    case .response(let status, let headers, let body):
      let all = headers + [("Content-Length", String(body.count))]
      try await write(headBytes(status, all) + (isHead ? [] : body))
    case .recording(let entry, let range):
      try await sendRecording(entry, range: range, isHead: isHead)
    case .events:
      try await streamEvents(isHead: isHead)
    }
  }

  /// The file at `path` if it is a regular file and not a symbolic link
  /// (a listed recording replaced by a link to elsewhere is not served).
  static func openRegularFile(_ path: String) -> FileHandle? {
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
      close(descriptor)
      return nil
    }
    return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
  }

  private static func contentType(_ name: String) -> String {
    switch name.split(separator: ".").last?.lowercased() {
    case "wav": "audio/wav"
    case "flac": "audio/flac"
    case "ogg", "oga": "audio/ogg"
    case "mp3": "audio/mpeg"
    case "json": "application/json"
    default: "application/octet-stream"
    }
  }

  private func sendRecording(_ entry: RecordingEntry, range: String?, isHead: Bool) async throws {
    guard let file = Self.openRegularFile(entry.path) else {
      try await send(StationReply.text(404, "not found\n"), isHead: isHead)
      return
    }
    defer { try? file.close() }
    let size = Int64(try file.seekToEnd())
    var headers = [("Content-Type", Self.contentType(entry.name)), ("Accept-Ranges", "bytes")]
    let span: ByteRange
    let status: Int
    switch ByteRange.resolve(range, size: size) {
    case .whole:
      status = 200
      span = ByteRange(first: 0, last: size - 1)
    case .part(let part):
      status = 206
      span = part
      headers.append(("Content-Range", "bytes \(part.first)-\(part.last)/\(size)"))
    case .unsatisfiable:
      try await send(
        .response(
          status: 416, headers: [("Content-Range", "bytes */\(size)")], body: []),
        isHead: isHead)
      return
    }
    headers.append(("Content-Length", String(max(0, span.count))))
    try await write(headBytes(status, headers))
    guard !isHead, span.count > 0 else { return }
    try file.seek(toOffset: UInt64(span.first))
    var remaining = span.count
    while remaining > 0 {
      let chunk =
        try file.read(upToCount: Int(min(remaining, Int64(limits.fileChunkBytes)))) ?? Data()
      if chunk.isEmpty { break }
      remaining -= Int64(chunk.count)
      try await write(Array(chunk))
    }
  }

  /// Server-Sent Events: each feed line as `data: LINE`, from the moment
  /// the client connects; a comment now and then keeps an idle stream open.
  private func streamEvents(isHead: Bool) async throws {
    let feed = router.feed
    try await write(
      headBytes(
        200, [("Content-Type", "text/event-stream; charset=utf-8"), ("X-Accel-Buffering", "no")]))
    guard !isHead else { return }
    try await write(Array("retry: 2000\n\n".utf8))
    var cursor = feed.head
    var lastWrite = ContinuousClock.now
    let keepAlive = Duration.seconds(limits.keepAliveInterval)
    while true {
      try Task.checkCancellation()
      guard let (lines, next) = feed.lines(from: cursor) else {
        feed.metrics.countDroppedClient()
        throw ClientDrop.queueFull
      }
      if lines.isEmpty {
        if ContinuousClock.now - lastWrite >= keepAlive {
          try await write(Array(": keep-alive\n\n".utf8))
          lastWrite = .now
        }
        await feed.waitForLine(after: cursor)
        continue
      }
      var chunk = ""
      for line in lines { chunk += "data: " + line + "\n\n" }
      let queued = cursor
      do {
        try await write(Array(chunk.utf8)) { feed.isOverflowing(queued) }
      } catch ClientDrop.queueFull {
        feed.metrics.countDroppedClient()
        throw ClientDrop.queueFull
      }
      cursor = next
      lastWrite = .now
    }
  }
}
