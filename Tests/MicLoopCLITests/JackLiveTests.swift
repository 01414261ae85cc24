import Foundation
import Testing

/// The live tests on JACK: micloop's ALSA devices through the `jack` plugin
/// on a private `jackd -d dummy`, loops closed with `jack_connect`.
@Suite(.serialized) struct JackLiveTests {
  func summary(_ result: MicLoopBinary.Result) throws -> [String: Any] {
    let last = result.output.split(separator: "\n").last ?? ""
    return try #require(
      try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(result.output)")
  }

  @Test func aToneComesOutOfJackAtTheRequestedLevel() throws {
    let jack = try JackServer()
    let meter = try jack.startMicloop(["meter", "-D", "jackin", "--duration", "3", "--json"])
    let tone = try jack.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "20", "-D", "jackout",
    ])
    defer { tone.signal(SIGKILL) }
    #expect(try jack.connect(from: tone, to: meter))
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let peak = try #require(try summary(result)["peak_dbfs"] as? Double)
    #expect(abs(peak - -10) < 0.05, "peak \(peak) dBFS")
  }

  @Test func loopbackOnJackPassesTheMicrophoneAtItsGain() throws {
    let jack = try JackServer()
    let meter = try jack.startMicloop(["meter", "-D", "jackin", "--duration", "4", "--json"])
    let loop = try jack.startMicloop([
      "loopback", "-D", "jackthrough", "--gain-db", "-6", "--period", "256", "--periods", "2",
      "--duration", "30",
    ])
    defer { loop.signal(SIGKILL) }
    let tone = try jack.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "30", "-D", "jackout",
    ])
    defer { tone.signal(SIGKILL) }
    #expect(try jack.connect(from: tone, to: loop))
    #expect(try jack.connect(from: loop, to: meter))
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let peak = try #require(try summary(result)["peak_dbfs"] as? Double)
    #expect(abs(peak - -16) < 0.05, "peak \(peak) dBFS")
    loop.signal(SIGINT)
    let looped = loop.result()
    #expect(looped.status == 0, "\(looped.errorOutput)")
    #expect(looped.output.contains("0 xruns"), "\(looped.output)")
  }
}
