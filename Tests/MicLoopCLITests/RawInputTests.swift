import Foundation
import TestSupport
import Testing

/// Headerless PCM, as radio pipelines deliver it (`rtl_fm … | decoder`).
@Suite struct RawInputTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  @Test func aFiveToneCallThroughARawPipeAt22050HzDecodes() throws {
    let call = file("call.wav")
    let sent = try MicLoopBinary.run([
      "send", "--plan", "zvei1", "--rate", "22050", "--output", call, "12345",
    ])
    #expect(sent.status == 0, "\(sent.errorOutput)")
    let result = try MicLoopBinary.script(
      "sox '\(call)' -t raw - | \"$M\" tones --input - --raw --rate 22050 --plan zvei1 --json",
      directory: directory)
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains(#""symbols":"12345""#), "\(result.output)")
    // multimon-ng reads the same bytes the same way.
    let peer = try MicLoopBinary.script(
      "sox '\(call)' -t raw - | multimon-ng -q -t raw -a ZVEI1 - 2>/dev/null",
      directory: directory)
    #expect(peer.output.contains("ZVEI1: 12345"), "\(peer.output)")
  }

  @Test(arguments: [
    ("s16", "signed-integer", 16), ("s32", "signed-integer", 32), ("float", "floating-point", 32),
    ("s24_3", "signed-integer", 24),
  ])
  func everyRawFormatMetersTheSameLevels(_ format: String, _ encoding: String, _ bits: Int) throws {
    let result = try MicLoopBinary.script(
      "sox -n -r 8000 -c 2 -e \(encoding) -b \(bits) -t raw - synth 1 sine 1000 vol 0.5 | \"$M\" meter --input - --raw --rate 8000 --channels 2 --format \(format) --json | tail -1",
      directory: directory)
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains(#""duration":1.000"#), "\(result.output)")
    // A sine at half scale: −9.03 dB RMS in every sample format.
    #expect(result.output.contains(#""rms_dbfs":-9.03"#), "\(result.output)")
  }

  @Test func rawNeedsARateAndAnInput() throws {
    let noRate = try MicLoopBinary.run(["meter", "--input", "-", "--raw"])
    #expect(noRate.status == 64 && noRate.errorLines.count == 1)
    #expect(noRate.errorOutput.contains("--raw needs --rate"), "\(noRate.errorOutput)")
    let noInput = try MicLoopBinary.run(["tones", "--plan", "dtmf", "--raw", "--rate", "8000"])
    #expect(noInput.status == 64 && noInput.errorOutput.contains("--input"))
    let packed = try MicLoopBinary.run([
      "meter", "--input", "-", "--raw", "--rate", "8000", "--format", "s24",
    ])
    #expect(packed.status == 64 && packed.errorOutput.contains("s24_3"))
  }

  @Test func aCallSentTwiceHalfASecondApartIsOneEvent() throws {
    let call = file("call.wav")
    _ = try MicLoopBinary.run(["send", "--plan", "zvei1", "--output", call, "12345"])
    let twice = file("twice.wav")
    try MicLoopBinary.shell(["sox", call, twice, "pad", "0", "0.5", "repeat", "1"])
    let once = try MicLoopBinary.run([
      "tones", "--plan", "zvei1", "--input", twice, "--repeat-window", "3", "--json",
    ])
    #expect(
      once.output.components(separatedBy: #""event":"sequence""#).count - 1 == 1, "\(once.output)")
    let both = try MicLoopBinary.run([
      "tones", "--plan", "zvei1", "--input", twice, "--repeat-window", "0", "--json",
    ])
    #expect(
      both.output.components(separatedBy: #""event":"sequence""#).count - 1 == 2, "\(both.output)")
  }
}
