import Foundation
import TestSupport
import Testing
import TonePlans

/// Two-tone sequential paging: A then B, the long A of a group call, and
/// the pager told apart from another sharing a tone.
@Suite struct PagerTests {
  static func pages(_ signal: TestSignal, _ plans: [String]) throws -> [DecodedPage] {
    try signal.decode(plans.compactMap(TonePlan.named)).compactMap {
      if case .page(let page) = $0 { return page } else { return nil }
    }
  }

  @Test func aThenBIsAPageAtTenDecibelsSNR() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.5)
    signal.tone([1000], amplitudes: [0.3], duration: 1)
    signal.tone([1200], amplitudes: [0.3], duration: 3)
    signal.silence(0.5)
    signal.addNoise(snr: 10, relativeTo: 0.3)
    let pages = try Self.pages(signal, ["twotone:1000,1200", "twotone:1000,1500"])
    #expect(pages.count == 1)
    let page = try #require(pages.first)
    #expect(page.plan == "twotone:1000,1200")
    #expect(!page.isGroupCall)
    #expect(abs(page.time - 0.5) < 0.05 && abs(page.duration - 4) < 0.1)
    #expect(abs(page.frequencies[0] - 1000) < 5 && abs(page.frequencies[1] - 1200) < 5)
  }

  @Test func aLongAAloneIsTheGroupCall() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.tone([600], amplitudes: [0.3], duration: 8)
    signal.silence(0.5)
    let pages = try Self.pages(signal, ["twotone:600,1500:1000,3000"])
    #expect(pages.map(\.isGroupCall) == [true])
  }

  /// A note held on a pager's A tone for longer than the group call's
  /// 2.5 lengths of A but under the 5 s encoders never go below.
  @Test func aLoneAShorterThanFiveSecondsIsNoGroupCall() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.tone([600], amplitudes: [0.3], duration: 4)
    signal.silence(0.5)
    #expect(try Self.pages(signal, ["twotone:600,1500:1000,3000"]).isEmpty)
  }

  /// A note held 8 s whose level swells and fades by ±4 dB (a singer's,
  /// an organ's swell) is music: a transmitter holds its group call's level.
  @Test func aLoneAWhoseLevelSwellsAndFadesIsNoGroupCall() throws {
    for depth in [0.0, 4.0] {
      var signal = TestSignal(sampleRate: 8_000)
      for n in 0..<(8 * 8_000) {
        let t = Double(n) / 8_000
        let amplitude = 0.3 * pow(10, depth * sin(2 * .pi * 0.4 * t) / 20)
        signal.samples.append(Float(amplitude * sin(2 * .pi * 600 * t)))
      }
      signal.silence(0.5)
      signal.addNoise(snr: 20, relativeTo: 0.3)
      let pages = try Self.pages(signal, ["twotone:600,1500:1000,3000"])
      #expect(pages.map(\.isGroupCall) == (depth == 0 ? [true] : []), "±\(depth) dB")
    }
  }

  @Test func aShortAOrBAloneIsNothing() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.tone([1000], amplitudes: [0.3], duration: 1)
    signal.silence(1)
    signal.tone([1200], amplitudes: [0.3], duration: 3)
    signal.silence(0.5)
    #expect(try Self.pages(signal, ["twotone:1000,1200"]).isEmpty)
  }

  @Test func timingsAndBadSpellingsAreParsed() {
    guard case .pager(let a, let b) = TonePlan.named("twotone:600,1500:800,2500")?.kind else {
      Issue.record("not a pager")
      return
    }
    #expect(a == 0.8 && b == 2.5)
    for bad in ["twotone:1000", "twotone:1000,1000", "twotone:1000,x", "twotone:1000,1200:5,3000"] {
      #expect(TonePlan.named(bad) == nil, "\(bad)")
    }
  }
}
