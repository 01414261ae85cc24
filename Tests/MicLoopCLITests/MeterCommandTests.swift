import AudioFiles
import Foundation
import TestSupport
import Testing

@Suite struct MeterCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }
  let tone: String

  init() throws {
    scratch = try ScratchDirectory("cli")
    tone = scratch.url.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-n", "-r", "48000", "-b", "16", tone, "synth", "1", "sine", "1000", "vol", "0.5",
    ])
  }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  @Test func jsonIsOneObjectPerLineEndingWithTheSummary() throws {
    let result = try MicLoopBinary.run(["meter", "--input", tone, "--json"])
    #expect(result.status == 0)
    let lines = result.output.split(separator: "\n")
    #expect(lines.count == 11)
    for line in lines {
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      #expect(object?["event"] != nil)
    }
    let summary = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
    #expect(summary?["event"] as? String == "summary")
    #expect(abs((summary?["peak_dbfs"] as? Double ?? 0) - -6.02) < 0.011)
    #expect(abs((summary?["rms_dbfs"] as? Double ?? 0) - -9.03) < 0.011)
  }

  @Test func humanOutputHasBarsAndTotals() throws {
    let result = try MicLoopBinary.run(["meter", "--input", tone, "--interval", "250ms"])
    #expect(result.status == 0)
    let lines = result.output.split(separator: "\n")
    #expect(lines.filter { $0.contains("[") && $0.contains("dBFS") }.count == 4)
    #expect(lines.contains { $0.hasPrefix("Duration 1.00 s, peak   -6.0 dBFS") })
  }

  @Test func standardInputIsReadWithDash() throws {
    let result = try MicLoopBinary.run(["meter", "--input", "-", "--json"], standardInput: tone)
    #expect(result.status == 0)
    #expect(result.output.split(separator: "\n").last?.contains("\"duration\":1.000") == true)
  }

  @Test func channelOptionPicksOneChannel() throws {
    let stereo = file("stereo.wav")
    try MicLoopBinary.shell([
      "sox", "-n", "-r", "48000", "-b", "16", "-c", "2", stereo, "synth", "1", "sine", "440",
      "sine", "440",
      "remix", "1v0.1", "2v0.5",
    ])
    let right = try MicLoopBinary.run(["meter", "--input", stereo, "--json", "--channel", "1"])
    #expect(right.output.split(separator: "\n").last?.contains("\"peak_dbfs\":-20.00") == true)
    let bad = try MicLoopBinary.run(["meter", "--input", stereo, "--channel", "3"])
    #expect(bad.status != 0)
    #expect(bad.errorLines.count == 1)
  }

  @Test(arguments: [["--help"], ["help", "meter"], ["meter", "-h"], ["loopback", "--help"]])
  func helpIsPrinted(arguments: [String]) throws {
    let result = try MicLoopBinary.run(arguments)
    #expect(result.status == 0)
    #expect(result.output.contains("USAGE: micloop"), "\(arguments): \(result.output)")
  }

  /// Each kind of bad input: one line on stderr naming it, a non-zero exit, no crash.
  @Test func badInputGetsOneLineAndNonZeroExit() throws {
    let text = file("notes.txt")
    try Data("not audio\n".utf8).write(to: URL(fileURLWithPath: text))
    let empty = file("empty.wav")
    _ = FileManager.default.createFile(atPath: empty, contents: Data())
    let truncated = file("truncated.wav")
    try Data(contentsOf: URL(fileURLWithPath: tone)).prefix(20_000)
      .write(to: URL(fileURLWithPath: truncated))
    let nan = file("nan.wav")
    try MicLoopBinary.writeFloatWAVWithNaN(nan)
    let cases: [(arguments: [String], mentions: String)] = [
      (["meter", "--input", file("missing.wav")], "no such file"),
      (["meter", "--input", directory.path], "directory"),
      (["meter", "--input", text], "not an audio file"),
      (["meter", "--input", empty], "empty"),
      (["meter", "--input", truncated], "truncated"),
      (["meter", "--input", nan, "--json"], "NaN"),
      (["meter", "--input", tone, "--interval", "soon"], "soon"),
      (["meter", "--input", tone, "--open", "3", "--close", "6"], "--close"),
      (["meter", "--input", tone, "--bogus"], "--bogus"),
      (["meter"], "--input"),
    ]
    for item in cases {
      let result = try MicLoopBinary.run(item.arguments)
      #expect(result.exitedNormally, "\(item.arguments) crashed")
      #expect(result.status != 0, "\(item.arguments) exited 0")
      #expect(result.errorLines.count == 1, "\(item.arguments): \(result.errorOutput)")
      #expect(
        result.errorOutput.contains(item.mentions), "\(item.arguments): \(result.errorOutput)")
    }
  }

  @Test func truncatedAndNaNFilesStillReportWhatWasRead() throws {
    let nan = file("nan2.wav")
    try MicLoopBinary.writeFloatWAVWithNaN(nan)
    let result = try MicLoopBinary.run(["meter", "--input", nan, "--json"])
    let summary = result.output.split(separator: "\n").last ?? ""
    #expect(summary.contains("\"invalid_samples\":2"))
    #expect(summary.contains("\"peak_dbfs\":-6.02"))
  }
}
