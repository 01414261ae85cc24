import Testing
import ToneDecoding
import TonePlans

@Suite struct RepeatSuppressorTests {
  let zvei = TonePlan.named("zvei1")!
  let dtmf = TonePlan.named("dtmf")!

  func call(_ symbols: String, at time: Double) -> [ToneDecoderEvent] {
    let tones = symbols.enumerated().map { index, symbol in
      ToneDecoderEvent.tone(
        DecodedTone(
          plan: "zvei1", time: time + 0.07 * Double(index), duration: 0.07, symbol: symbol,
          frequencies: [1060], levels: [-10]))
    }
    return tones + [
      .sequence(
        DecodedSequence(
          plan: "zvei1", time: time, duration: 0.07 * Double(symbols.count), text: symbols,
          symbols: symbols))
    ]
  }

  func digit(at time: Double) -> ToneDecoderEvent {
    .tone(
      DecodedTone(
        plan: "dtmf", time: time, duration: 0.07, symbol: "1", frequencies: [697, 1209],
        levels: [-10, -10]))
  }

  func passed(_ events: [ToneDecoderEvent], window: Double) -> [ToneDecoderEvent] {
    var suppressor = RepeatSuppressor(plans: [zvei, dtmf], window: window)
    var out = [ToneDecoderEvent]()
    for event in events { suppressor.filter(event) { out.append($0) } }
    suppressor.finish { out.append($0) }
    return out
  }

  @Test func aCallRepeatedWithinTheWindowIsReportedOnceWithItsTones() {
    // Sent three times, 0.5 s apart: each repeat within 3 s of the one before.
    let events = call("12345", at: 0) + call("12345", at: 0.85) + call("12345", at: 1.7)
    let out = passed(events, window: 3)
    #expect(out == call("12345", at: 0))
  }

  @Test func anotherCallOrTheSameOneLaterIsReported() {
    let events = call("12345", at: 0) + call("54321", at: 1) + call("12345", at: 10)
    #expect(passed(events, window: 3) == events)
  }

  @Test func digitsAndAZeroWindowAlwaysPass() {
    let digits = [digit(at: 0), digit(at: 0.2), digit(at: 0.4)]
    #expect(passed(digits, window: 3) == digits)
    let repeats = call("12345", at: 0) + call("12345", at: 0.85)
    #expect(passed(repeats, window: 0) == repeats)
  }
}
