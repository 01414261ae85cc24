import Foundation
import TestSupport
import Testing

/// `micloop send` into files, decoded by multimon-ng as an independent oracle.
@Suite struct SendCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  @Test func dtmfIsDecodedByMultimon() throws {
    let path = file("dtmf.wav")
    let result = try MicLoopBinary.run(["send", "--plan", "dtmf", "123#*0ABCD", "--output", path])
    #expect(result.status == 0, "\(result.errorOutput)")
    let digits = try MicLoopBinary.multimon("DTMF", path).compactMap {
      $0.hasPrefix("DTMF: ") ? $0.dropFirst(6) : nil
    }
    #expect(digits.joined() == "123#*0ABCD")
  }

  /// multimon-ng prints the raw tones of a 5-tone call (the repeat tone as E).
  @Test(arguments: [
    ("ccir", "CCIR"), ("zvei1", "ZVEI1"), ("zvei2", "ZVEI2"), ("zvei3", "ZVEI3"),
    ("dzvei", "DZVEI"),
    ("pzvei", "PZVEI"), ("eea", "EEA"), ("eia", "EIA"),
  ])
  func fiveToneCallsAreDecodedByMultimon(plan: String, demodulator: String) throws {
    let path = file("\(plan).wav")
    let result = try MicLoopBinary.run(["send", "--plan", plan, "12335", "--output", path])
    #expect(result.status == 0, "\(result.errorOutput)")
    // Silence around the call so the decoder sees its start and end.
    let padded = file("\(plan)-padded.wav")
    try MicLoopBinary.shell(["sox", path, padded, "pad", "0.2", "0.3"])
    let lines = try MicLoopBinary.multimon(demodulator, padded)
    if plan == "pzvei" {
      // multimon-ng's PZVEI table gives 0 and E the same tone and decodes neither.
      #expect(lines.joined() == "PZVEI: 123PZVEI: 5", "\(lines)")
    } else {
      #expect(lines.contains { $0.contains("123E5") }, "\(lines)")
    }
  }

  @Test func unsendableSymbolsAreRefusedAndNamed() throws {
    let dtmf = try MicLoopBinary.run(["send", "--plan", "dtmf", "12X", "--output", file("x.wav")])
    #expect(dtmf.status == 1)
    #expect(dtmf.errorLines.count == 1)
    #expect(dtmf.errorOutput.contains("'X'"), "\(dtmf.errorOutput)")
    let handshake = try MicLoopBinary.run([
      "send", "--plan", "handshake", "Hello", "--rate", "44100", "--output", file("h.wav"),
    ])
    #expect(handshake.status == 1)
    #expect(handshake.errorOutput.contains("22050 Hz"), "\(handshake.errorOutput)")
    #expect(handshake.errorOutput.contains("'e'"), "\(handshake.errorOutput)")
    let plan = try MicLoopBinary.run(["send", "--plan", "morse", "1", "--output", file("m.wav")])
    #expect(plan.status == 64)
    #expect(plan.errorOutput.contains("unknown plan 'morse'"), "\(plan.errorOutput)")
  }

  @Test func fileLengthFollowsThePlanTiming() throws {
    let path = file("eea.wav")
    let result = try MicLoopBinary.run(["send", "--plan", "eea", "12345", "--output", path])
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("9600 frames"), "\(result.output)")
    let custom = try MicLoopBinary.run([
      "send", "--plan", "dtmf", "12", "--tone-ms", "50", "--gap-ms", "30", "--output",
      file("d.wav"),
    ])
    #expect(custom.output.contains("7680 frames"), "\(custom.output)")
  }
}
