import Foundation

/// Fetches from a station with curl (a real HTTP client in its own
/// process), so the tests see exactly what a browser or Prometheus would.
public struct HTTPFetch: Sendable {
  public var status: Int
  public var headers: String
  public var body: Data
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// `curl` with `arguments` on `url`; `maxTime` bounds the whole transfer.
  public static func get(_ url: String, _ arguments: [String] = [], maxTime: Double = 10) throws
    -> HTTPFetch
  {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "station-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let headerFile = directory.appendingPathComponent("headers").path
    let bodyFile = directory.appendingPathComponent("body").path
    // posix_spawn and waitpid rather than Foundation's Process, whose exit
    // notice waits for a dispatch thread that a busy parallel test run may
    // not have to spare.
    let pid = try TestServerProcess.spawn(
      ["curl", "-s", "--path-as-is", "-m", String(maxTime), "-D", headerFile, "-o", bodyFile]
        + arguments + [url], environment: [:], output: "/dev/null")
    var exit: Int32 = 0
    while waitpid(pid, &exit, 0) < 0 && errno == EINTR {}
    let headers = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
    let body = FileManager.default.contents(atPath: bodyFile) ?? Data()
    let statusLine = headers.split(separator: "\r\n").first ?? ""
    let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return HTTPFetch(status: status, headers: headers, body: body)
  }

  /// The value of response header `name` (case-insensitive).
  public func header(_ name: String) -> String? {
    for line in headers.split(separator: "\r\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      if parts.count == 2, parts[0].lowercased() == name.lowercased() {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }
}

/// Parses Prometheus text exposition: each sample's value by its series
/// (`name{label="value"}` as written), checking every line has the form.
public enum PrometheusText {
  public struct Malformed: Error { public var line: String }

  public static func samples(_ text: String) throws -> [String: Double] {
    var samples = [String: Double]()
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
      guard let space = line.lastIndex(of: " ") else { throw Malformed(line: String(line)) }
      let series = String(line[..<space])
      let valueText = line[line.index(after: space)...]
      let value: Double? =
        switch valueText.lowercased() {
        case "-inf": -.infinity
        case "+inf", "inf": .infinity
        default: Double(valueText)
        }
      guard let value,
        series.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?$"#, options: .regularExpression)
          != nil
      else { throw Malformed(line: String(line)) }
      samples[series] = value
    }
    return samples
  }
}
