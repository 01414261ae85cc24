import ArgumentParser
import Console
import Foundation
import Station
import TextFormatting

/// `--http HOST:PORT` and `--http-token-file F`, shared by the live
/// commands: a monitoring station served while the job runs. Checked in
/// `validate()` (before any device opens); started by the runner. Control
/// thread.
struct StationOptions: ParsableArguments {
  @Option(
    name: .customLong("http"), parsing: .unconditional,
    help: ArgumentHelp(
      "Serve a monitoring station while the job runs: a live page, /events, /metrics, /recordings (HOST:PORT, or PORT for 127.0.0.1; 0 picks a free port).",
      valueName: "host:port"))
  var http: String?
  @Option(
    name: .customLong("http-token-file"), parsing: .unconditional,
    help: ArgumentHelp(
      "File whose first line is the token every station request must carry (Authorization: Bearer TOKEN, or open /?token=TOKEN once); needed for any address but loopback.",
      valueName: "file"))
  var tokenFile: String?

  /// Characters a token may not have: they would break the cookie or header it travels in.
  static let forbiddenTokenCharacters = Set(" \t;,\"\\")

  /// The parsed address, once `validate()` has passed.
  var address: StationAddress? { http.flatMap(StationAddress.init(parsing:)) }

  func validate() throws {
    guard let http else {
      if tokenFile != nil {
        throw ValidationError("--http-token-file protects a station; give --http HOST:PORT too")
      }
      return
    }
    guard let address = StationAddress(parsing: http) else {
      throw ValidationError(
        "--http \(http) is not HOST:PORT; use for example --http 8080 (this machine only) or --http 0.0.0.0:8080 with --http-token-file"
      )
    }
    if let tokenFile {
      _ = try Self.readToken(tokenFile)
    } else if !address.isLoopback {
      throw ValidationError(
        "--http \(http) would open the station to other machines without a token; add --http-token-file FILE (its first line is the token) or listen on 127.0.0.1"
      )
    }
  }

  /// The token: the file's first line, without surrounding spaces.
  static func readToken(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ValidationError(
        "--http-token-file \(path) cannot be read; give a file whose first line is the token")
    }
    let text = String(decoding: data, as: UTF8.self)
    let first = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
    let token = first.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !token.isEmpty else {
      throw ValidationError("--http-token-file \(path) is empty; write the token on its first line")
    }
    guard token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 }),
      !token.contains(where: { forbiddenTokenCharacters.contains($0) })
    else {
      throw ValidationError(
        "--http-token-file \(path): the token must be printable ASCII without spaces, quotes, commas, semicolons or backslashes"
      )
    }
    return token
  }

  /// Starts the station when `--http` was given and says where it
  /// listens: a `{"event":"http","url":…}` line with `json`, else one
  /// line on standard error. Nil without `--http`.
  func start(json: Bool) throws -> StationServer? {
    guard let address else { return nil }
    let token = try tokenFile.map(Self.readToken)
    let feed = StationFeed(version: MicLoop.configuration.version)
    let server = StationServer(address: address, token: token, feed: feed)
    let url: String
    do {
      url = try server.start()
    } catch {
      throw CommandFailure(message: "--http \(address): \(error.message)")
    }
    if json {
      var object = JSONObject(event: "http", capacity: 64)
      object.add("url", url)
      StandardOutput.write(object.finished, flush: true)
    } else {
      StandardOutput.writeError("micloop: station at \(url)")
    }
    return server
  }
}
