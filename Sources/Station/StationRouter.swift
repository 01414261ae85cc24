import TextFormatting

/// Decides what each request gets: read-only (GET and HEAD), the token
/// checked when one is set, and only the fixed paths plus the recordings
/// the session's index lists (a request's path is never used as a path on
/// disk). Safe on any thread.
struct StationRouter: Sendable {
  let feed: StationFeed
  let token: String?
  /// The cookie `/?token=TOKEN` sets, so a browser needs the token once.
  static let cookieName = "micloop_station"
  static let recordingsPrefix = "/recordings/"

  func reply(to request: HTTPRequestHead) -> StationReply {
    guard request.method == "GET" || request.method == "HEAD" else {
      return .response(
        status: 405, headers: [("Allow", "GET, HEAD"), ("Content-Type", "text/plain")],
        body: Array("read-only: GET and HEAD only\n".utf8))
    }
    if let token {
      if request.path == "/", let offered = request.queryValue("token"),
        Self.matches(offered, token)
      {
        return .response(
          status: 303,
          headers: [
            ("Location", "/"),
            ("Set-Cookie", "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"),
          ], body: [])
      }
      guard isAuthorized(request, token: token) else {
        return .response(
          status: 401, headers: [("WWW-Authenticate", "Bearer"), ("Content-Type", "text/plain")],
          body: Array(
            "a token is needed: Authorization: Bearer TOKEN, or open /?token=TOKEN once\n".utf8))
      }
    }
    switch request.path {
    case "/", "/index.html":
      return .text(200, StationPage.html, type: "text/html; charset=utf-8")
    case "/events": return .events
    case "/metrics":
      return .text(200, feed.metrics.render(), type: "text/plain; version=0.0.4; charset=utf-8")
    case "/healthz": return .text(200, "ok\n")
    case "/recordings", "/recordings.json", "/recordings/":
      var listing = JSONObject()
      listing.add("recordings", json: JSONText.array(feed.recordings.reversed().map(\.indexLine)))
      return .text(200, listing.finished + "\n", type: "application/json")
    default:
      guard request.path.hasPrefix(Self.recordingsPrefix),
        let name = Self.recordingName(request.path), let entry = feed.recording(named: name)
      else { return .text(404, "not found\n") }
      return .recording(entry, range: request.headers["range"])
    }
  }

  /// The index name a `/recordings/NAME` path asks for, percent-decoded;
  /// nil when it could step out of the directory or is malformed (such a
  /// name is never in an index anyway).
  static func recordingName(_ path: String) -> String? {
    guard let name = PercentDecoding.decode(String(path.dropFirst(recordingsPrefix.count))),
      !name.isEmpty, !name.contains("\u{0}"), !name.contains("\\"), !name.hasPrefix("/")
    else { return nil }
    let segments = name.split(separator: "/", omittingEmptySubsequences: false)
    guard segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return nil }
    return name
  }

  private func isAuthorized(_ request: HTTPRequestHead, token: String) -> Bool {
    if let header = request.headers["authorization"], header.hasPrefix("Bearer "),
      Self.matches(String(header.dropFirst("Bearer ".count)), token)
    {
      return true
    }
    if let cookie = request.cookie(Self.cookieName), Self.matches(cookie, token) { return true }
    return false
  }

  /// Compares in time that depends only on the lengths.
  static func matches(_ offered: String, _ token: String) -> Bool {
    let a = Array(offered.utf8)
    let b = Array(token.utf8)
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
  }
}
