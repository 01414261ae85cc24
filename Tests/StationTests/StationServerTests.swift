import Foundation
import Glibc
import TestSupport
import Testing

@testable import Station

/// A station on 127.0.0.1:0 with a feed the test fills, fetched over real
/// HTTP: what each path serves, what it refuses, and that a client that
/// stops reading never holds up the feeder.
@Suite(.serialized) struct StationServerTests {
  let feed: StationFeed
  let server: StationServer
  let base: String

  init(token: String?, limits: StationLimits = StationLimits()) throws {
    feed = StationFeed(limits: limits, version: "9.9.9")
    server = StationServer(
      address: StationAddress(host: "127.0.0.1", port: 0), token: token, feed: feed)
    base = try server.start()
  }

  init() throws { try self.init(token: nil) }

  @Test func metricsCarryTheValuesFed() throws {
    defer { server.stop() }
    feed.metrics.setLevel(channel: 1, rms: -23.01, peak: -20.0)
    feed.metrics.setLevel(channel: 2, rms: nil, peak: nil)
    feed.metrics.countTone(plan: "dtmf")
    feed.metrics.countTone(plan: "dtmf")
    feed.metrics.countCall(plan: "zvei1")
    feed.metrics.countXrun(bus: "input")
    feed.metrics.countGap(reason: "pause")
    feed.metrics.countRecording(bytes: 4096)
    feed.metrics.addTalk(seconds: 1.5)
    feed.metrics.setTalking(true)
    feed.metrics.setDeviceUp(false)
    let before = try PrometheusText.samples(try HTTPFetch.get(base + "metrics").text)
    #expect(
      before["micloop_disk_free_bytes"] == nil, "storage is shown only once a recorder sets it")
    feed.metrics.setStorage(usedBytes: 1_000, budgetBytes: 2_000, freeBytes: 3_000)
    let reply = try HTTPFetch.get(base + "metrics")
    #expect(reply.status == 200)
    #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
    let samples = try PrometheusText.samples(reply.text)
    #expect(samples[#"micloop_level_rms_dbfs{channel="1"}"#] == -23.01)
    #expect(samples[#"micloop_level_peak_dbfs{channel="1"}"#] == -20.0)
    #expect(samples[#"micloop_level_rms_dbfs{channel="2"}"#] == -.infinity)
    #expect(samples[#"micloop_tones_total{plan="dtmf"}"#] == 2)
    #expect(samples[#"micloop_calls_total{plan="zvei1"}"#] == 1)
    #expect(samples[#"micloop_xruns_total{bus="input"}"#] == 1)
    #expect(samples[#"micloop_gaps_total{reason="pause"}"#] == 1)
    #expect(samples["micloop_recordings_total"] == 1)
    #expect(samples["micloop_recorded_bytes_total"] == 4096)
    #expect(samples["micloop_talk_seconds_total"] == 1.5)
    #expect(samples["micloop_talking"] == 1)
    #expect(samples["micloop_device_up"] == 0)
    #expect(samples[#"micloop_build_info{version="9.9.9"}"#] == 1)
    #expect(samples["micloop_recordings_bytes"] == 1_000)
    #expect(samples["micloop_recordings_budget_bytes"] == 2_000)
    #expect(samples["micloop_disk_free_bytes"] == 3_000)
    #expect(reply.text.contains("# TYPE micloop_tones_total counter"))
  }

  @Test func eventsDeliverTheLinesFedAsServerSentEvents() throws {
    defer { server.stop() }
    let lines = (0..<5).map { #"{"event":"level","time":\#($0).100,"rms_dbfs":-20.00}"# }
    // Fed from a thread of its own (as the job's control thread would),
    // after the client has connected: a stream starts at the present.
    let feeder = Thread { [feed] in
      Thread.sleep(forTimeInterval: 1)
      for line in lines { feed.publish(line) }
    }
    feeder.start()
    let reply = try HTTPFetch.get(base + "events", maxTime: 4)
    #expect(reply.status == 200)
    #expect(reply.header("Content-Type")?.hasPrefix("text/event-stream") == true)
    let data = reply.text.components(separatedBy: "\n\n").filter { $0.hasPrefix("data: ") }
    #expect(data == lines.map { "data: " + $0 })
  }

  @Test func healthzAndPage() throws {
    defer { server.stop() }
    let health = try HTTPFetch.get(base + "healthz")
    #expect(health.status == 200)
    #expect(health.text == "ok\n")
    let page = try HTTPFetch.get(base)
    #expect(page.status == 200)
    #expect(page.text.contains("new EventSource(\"/events\")"))
    #expect(!page.text.contains("http://") && !page.text.contains("https://"))
  }

  /// Lists the file at `url` under `name`, as a session's index would.
  func listRecording(_ name: String, at url: URL) {
    feed.addRecording(
      RecordingEntry(
        name: name, path: url.path, indexLine: #"{"event":"recording","file":""# + name + #""}"#))
  }

  /// A listed file served whole and by ranges; nothing else is.
  @Test func rangesOfListedFilesAndNothingElse() throws {
    defer { server.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "station-files-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let bytes = Data((0..<10_000).map { UInt8($0 % 251) })
    let listed = directory.appendingPathComponent("20260101T000000Z-1.wav")
    try bytes.write(to: listed)
    try Data("secret".utf8).write(to: directory.appendingPathComponent("unlisted.wav"))
    listRecording("20260101T000000Z-1.wav", at: listed)

    let whole = try HTTPFetch.get(base + "recordings/20260101T000000Z-1.wav")
    #expect(whole.status == 200)
    #expect(whole.body == bytes)
    #expect(whole.header("Accept-Ranges") == "bytes")
    #expect(whole.header("Content-Type") == "audio/wav")

    let part = try HTTPFetch.get(
      base + "recordings/20260101T000000Z-1.wav", ["-H", "Range: bytes=100-199"])
    #expect(part.status == 206)
    #expect(part.header("Content-Range") == "bytes 100-199/10000")
    #expect(part.body == bytes[100..<200])

    let tail = try HTTPFetch.get(
      base + "recordings/20260101T000000Z-1.wav", ["-H", "Range: bytes=-10"])
    #expect(tail.status == 206)
    #expect(tail.body == bytes[9990..<10_000])

    let open = try HTTPFetch.get(
      base + "recordings/20260101T000000Z-1.wav", ["-H", "Range: bytes=9000-"])
    #expect(open.status == 206)
    #expect(open.body == bytes[9000...])

    let beyond = try HTTPFetch.get(
      base + "recordings/20260101T000000Z-1.wav", ["-H", "Range: bytes=20000-"])
    #expect(beyond.status == 416)

    let list = try HTTPFetch.get(base + "recordings.json")
    #expect(list.status == 200)
    let object = try JSONSerialization.jsonObject(with: list.body) as? [String: Any]
    let entries = object?["recordings"] as? [[String: Any]]
    #expect(entries?.first?["file"] as? String == "20260101T000000Z-1.wav")

    // A symbolic link in the folder, unlisted or put in a listed file's place: never followed.
    let linked = directory.appendingPathComponent("linked.wav")
    try FileManager.default.createSymbolicLink(
      atPath: linked.path,
      withDestinationPath: directory.appendingPathComponent("unlisted.wav").path)
    #expect(try HTTPFetch.get(base + "recordings/linked.wav").status == 404)
    let replaced = directory.appendingPathComponent("20260101T000001Z-2.wav")
    try FileManager.default.createSymbolicLink(
      atPath: replaced.path,
      withDestinationPath: directory.appendingPathComponent("unlisted.wav").path)
    listRecording("20260101T000001Z-2.wav", at: replaced)
    let followed = try HTTPFetch.get(base + "recordings/20260101T000001Z-2.wav")
    #expect(followed.status == 404)
    #expect(!followed.text.contains("secret"))

    for path in [
      "recordings/unlisted.wav", "recordings/../unlisted.wav", "recordings/%2e%2e/unlisted.wav",
      "recordings/%2E%2E%2Funlisted.wav", "recordings/..%2funlisted.wav",
      "recordings/" + directory.path + "/unlisted.wav", "recordings/", "nothing", "../etc/passwd",
      "recordings/%", "recordings/20260101T000000Z-1.wav%00",
    ] {
      let reply = try HTTPFetch.get(base + path)
      #expect(reply.status == (path == "recordings/" ? 200 : 404), "\(path)")
      #expect(!reply.text.contains("secret"), "\(path)")
    }

    feed.removeRecording(named: "20260101T000000Z-1.wav")
    #expect(try HTTPFetch.get(base + "recordings/20260101T000000Z-1.wav").status == 404)
  }

  @Test func readOnly() throws {
    defer { server.stop() }
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
      let reply = try HTTPFetch.get(base + "metrics", ["-X", method])
      #expect(reply.status == 405, "\(method)")
      #expect(reply.header("Allow") == "GET, HEAD")
    }
    let head = try HTTPFetch.get(base + "healthz", ["-I"])
    #expect(head.status == 200)
    // curl -I writes the headers as its output: nothing may follow them.
    #expect(head.text.hasSuffix("\r\n\r\n"))
    #expect(!head.text.contains("ok\n"))
  }

  @Test func oversizedHeadIsRefused() throws {
    defer { server.stop() }
    let big = String(repeating: "x", count: 20_000)
    let reply = try HTTPFetch.get(base + "healthz", ["-H", "X-Big: \(big)"])
    #expect(reply.status == 431)
  }

  @Test func tokenIsRequiredWhenSet() throws {
    let guarded = try StationServerTests(token: "s3cret-token")
    defer {
      guarded.server.stop()
      server.stop()
    }
    #expect(try HTTPFetch.get(guarded.base + "metrics").status == 401)
    #expect(
      try HTTPFetch.get(guarded.base + "metrics", ["-H", "Authorization: Bearer wrong"]).status
        == 401)
    #expect(
      try HTTPFetch.get(guarded.base + "metrics", ["-H", "Authorization: Bearer s3cret-token"])
        .status == 200)
    let visit = try HTTPFetch.get(guarded.base + "?token=s3cret-token")
    #expect(visit.status == 303)
    let cookie = try #require(visit.header("Set-Cookie")?.split(separator: ";").first)
    #expect(
      try HTTPFetch.get(guarded.base + "events", ["-H", "Cookie: \(cookie)", "-I"]).status == 200)
    #expect(try HTTPFetch.get(guarded.base + "?token=nope").status == 401)
  }

  /// A client that connects to /events and never reads: the feeder's
  /// calls return at once while it is stuck, and it is dropped once its
  /// queue is full.
  @Test func stuckClientIsDroppedWithoutBlockingTheFeeder() async throws {
    var limits = StationLimits()
    limits.clientQueueLines = 64
    let station = try StationServerTests(token: nil, limits: limits)
    defer {
      station.server.stop()
      server.stop()
    }
    let port = try #require(station.server.port)
    // A raw socket with a small receive buffer that sends the request and never reads.
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var size: Int32 = 4096
    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    #expect(connected == 0)
    let request = "GET /events HTTP/1.1\r\nHost: x\r\n\r\n"
    _ = request.withCString { send(socket, $0, strlen($0), 0) }
    try await Task.sleep(for: .milliseconds(300))

    // Lines far larger than the socket buffers: the client is stuck at once.
    let line = #"{"event":"level","pad":""# + String(repeating: "x", count: 4000) + #""}"#
    var slowest = Duration.zero
    let clock = ContinuousClock()
    for _ in 0..<2000 {
      let took = clock.measure { station.feed.publish(line) }
      slowest = max(slowest, took)
    }
    #expect(slowest < .milliseconds(50))

    // Dropped: the station counts it and its connection ends.
    var dropped = false
    for _ in 0..<100 {
      let samples = try PrometheusText.samples(station.feed.metrics.render())
      if samples["micloop_station_dropped_clients_total"] == 1 {
        dropped = true
        break
      }
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(dropped)
    // Other clients are still served.
    #expect(try HTTPFetch.get(station.base + "healthz").status == 200)
  }

  @Test func addressParsing() {
    #expect(StationAddress(parsing: "8080") == StationAddress(host: "127.0.0.1", port: 8080))
    #expect(StationAddress(parsing: ":0") == StationAddress(host: "127.0.0.1", port: 0))
    #expect(StationAddress(parsing: "localhost:9") == StationAddress(host: "127.0.0.1", port: 9))
    #expect(StationAddress(parsing: "0.0.0.0:80")?.isLoopback == false)
    #expect(StationAddress(parsing: "127.0.0.2:80")?.isLoopback == true)
    for bad in [
      "", "x", "1.2.3:80", "1.2.3.4:", "1.2.3.4:65536", "host:80", "1.2.3.4:8a", "::1:80",
    ] {
      #expect(StationAddress(parsing: bad) == nil, "\(bad)")
    }
  }

  @Test func byteRanges() {
    #expect(ByteRange.resolve(nil, size: 100) == .whole)
    #expect(ByteRange.resolve("bytes=0-9", size: 100) == .part(ByteRange(first: 0, last: 9)))
    #expect(ByteRange.resolve("bytes=90-200", size: 100) == .part(ByteRange(first: 90, last: 99)))
    #expect(ByteRange.resolve("bytes=-5", size: 100) == .part(ByteRange(first: 95, last: 99)))
    #expect(ByteRange.resolve("bytes=100-", size: 100) == .unsatisfiable)
    #expect(ByteRange.resolve("items=1-2", size: 100) == .whole)
  }
}
