import Foundation
import TestSupport
import Testing

/// `micloop meter --ballistics`: the reading each standard gives, in the
/// JSON contract, on files made with sox.
@Suite struct BallisticsCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  /// The level events of `meter --json` with `options`, on 2 s of a 1 kHz
  /// sine at −12 dBFS then 3 s of silence.
  func levels(_ options: [String]) throws -> [[String: Any]] {
    let tone = directory.appendingPathComponent("tone.wav").path
    let path = directory.appendingPathComponent("tone-then-silence.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "24", tone, "synth", "2", "sine", "1000", "vol",
      "-12dB",
    ])
    try MicLoopBinary.shell(["sox", "-V1", tone, path, "pad", "0", "3"])
    let result = try MicLoopBinary.run(["meter", "--json", "--input", path] + options)
    #expect(result.status == 0, "\(result.errorOutput)")
    return result.output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }.filter { $0["event"] as? String == "level" }
  }

  func reading(_ events: [[String: Any]], at time: Double) -> Double? {
    events.first { abs(($0["time"] as? Double ?? -1) - time) < 0.001 }?["meter_dbfs"] as? Double
  }

  @Test func digitalIsTheDefaultAndHoldsThePeakForASecond() throws {
    let events = try levels([])
    #expect(abs((reading(events, at: 1.9) ?? 0) - -12) < 0.05)
    // A second after the tone the reading still holds; then it falls.
    #expect(abs((reading(events, at: 2.9) ?? 0) - -12) < 0.05)
    let falling = try #require(reading(events, at: 3.9))
    #expect(falling < -20 && falling > -12 - 20, "\(falling)")
  }

  @Test func vuReadsTheRMSOfASineAndFallsToNothingInASecond() throws {
    let events = try levels(["--ballistics", "vu"])
    #expect(abs((reading(events, at: 1.9) ?? 0) - (-12 - 3.01)) < 0.1)
    #expect((reading(events, at: 3.0) ?? -.infinity) < -60)
  }

  @Test func ppmTypeTwoReadsThePeakAndFallsTwentyFourDecibelsInTwoPointEightSeconds() throws {
    let events = try levels(["--ballistics", "ppm2"])
    #expect(abs((reading(events, at: 1.9) ?? 0) - -12) < 0.2)
    let fallen = try #require(reading(events, at: 4.8))
    #expect(abs(fallen - (-12 - 24)) < 1.5, "\(fallen)")
  }

  @Test func lufsBallisticsReadTheMomentaryLoudness() throws {
    let events = try levels(["--ballistics", "lufs"])
    let event = try #require(events.first { abs(($0["time"] as? Double ?? -1) - 1.9) < 0.001 })
    let momentary = try #require(event["momentary_lufs"] as? Double)
    #expect(event["meter_dbfs"] as? Double == momentary)
    // A mono 1 kHz sine at −12 dBFS: −12 − 3.01 + 0.69 (K-weighting at 1 kHz) − 0.691.
    #expect(abs(momentary - -15.0) < 0.2, "\(momentary)")
  }

  @Test func anUnknownStandardIsRefusedInOneLine() throws {
    let result = try MicLoopBinary.run(["meter", "--input", "x.wav", "--ballistics", "bbc"])
    #expect(result.status != 0)
    #expect(result.errorOutput.contains("ballistics"))
  }
}
