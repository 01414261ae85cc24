import Station

/// The station's feed: one listed recording, as a session reports one.
let feed: StationFeed = {
  let feed = StationFeed(version: "fuzz")
  feed.addRecording(
    RecordingEntry(
      name: "2026-01-01T00-00-00.000Z.wav", path: "/nonexistent/2026-01-01T00-00-00.000Z.wav",
      indexLine: "{\"event\":\"recording\"}"))
  return feed
}()

/// One input: a request's head as a client sends it (request line, headers,
/// blank line), answered with and without a token and for files of several
/// sizes. A served range must lie inside the file; only a listed name may
/// be served; every answer is a status the station sends.
func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let head = Array(UnsafeBufferPointer(start: data, count: size))
  for token in [nil, "secret-token"] as [String?] {
    for fileSize: Int64 in [0, 1, 44, 1 << 20] {
      let answer = StationRequestCheck.answer(
        toHead: head, feed: feed, token: token, fileSize: fileSize)
      guard [200, 206, 303, 400, 401, 404, 405, 416].contains(answer.status) else {
        fatalError("status \(answer.status)")
      }
      if let bytes = answer.bytes {
        guard bytes.lowerBound >= 0, bytes.upperBound < fileSize else {
          fatalError("bytes \(bytes) of a \(fileSize)-byte file")
        }
      }
      if answer.status == 206 || (answer.status == 200 && answer.bytes != nil) {
        // Only the listed recording is served, and never without the token.
        let text = String(decoding: head, as: UTF8.self)
        guard text.contains("2026-01-01T00-00-00.000Z.wav") || text.contains("%") else {
          fatalError("served a file for a request that names none")
        }
      }
    }
  }
  return 0
}
