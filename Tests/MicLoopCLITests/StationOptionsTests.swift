import Foundation
import MicLoopCLI
import TestSupport
import Testing

/// `--http` and `--http-token-file` are checked before anything runs: each
/// bad value is one line naming the option and what to do.
@Suite struct StationOptionsTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func tokenFile(_ text: String) throws -> String {
    let path = directory.appendingPathComponent("token-\(UUID().uuidString)").path
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func goodStationLinesPass() throws {
    let token = try tokenFile("s3cret-token\nignored second line\n")
    for command in ["meter", "tones", "record", "loopback"] {
      var arguments = [command, "-D", "null"]
      if command == "record" { arguments += ["--dir", directory.path] }
      if command == "tones" { arguments += ["--plan", "dtmf"] }
      let local = arguments + ["--http", "8080"]
      #expect(commandLineProblem(local) == nil, "\(local)")
      let open = arguments + ["--http", "0.0.0.0:0", "--http-token-file", token]
      #expect(commandLineProblem(open) == nil, "\(open)")
    }
    #expect(commandLineProblem(["meter", "--http", "localhost:0"]) == nil)
    #expect(commandLineProblem(["meter", "--http", "127.0.0.1:9100"]) == nil)
  }

  @Test func badStationLinesNameTheProblem() throws {
    let empty = try tokenFile("\n")
    let spaced = try tokenFile("two words\n")
    let cases: [([String], String)] = [
      (["meter", "--http", "nowhere"], "--http nowhere is not HOST:PORT"),
      (["meter", "--http", "127.0.0.1:70000"], "is not HOST:PORT"),
      (["meter", "--http", "example.org:80"], "is not HOST:PORT"),
      (["meter", "--http", "0.0.0.0:8080"], "--http-token-file"),
      (["tones", "--plan", "dtmf", "--http", "192.0.2.1:0"], "--http-token-file"),
      (["meter", "--http", "0.0.0.0:0", "--http-token-file", "/no/such/file"], "cannot be read"),
      (["meter", "--http", "0.0.0.0:0", "--http-token-file", empty], "is empty"),
      (["meter", "--http", "0.0.0.0:0", "--http-token-file", spaced], "printable ASCII"),
      (["meter", "--http-token-file", empty], "give --http"),
      (["meter", "--input", "x.wav", "--http", "0"], "--http serves a live job"),
      (["tones", "--plan", "dtmf", "--input", "x.wav", "--http", "0"], "--http serves a live job"),
      (["record", "--input", "x.wav", "--dir", "d", "--http", "0"], "--http serves a live"),
    ]
    for (arguments, mention) in cases {
      let problem = commandLineProblem(arguments)
      #expect(problem?.contains(mention) == true, "\(arguments): \(problem ?? "nil")")
      #expect(problem?.contains("\n") == false, "\(arguments)")
    }
  }
}
