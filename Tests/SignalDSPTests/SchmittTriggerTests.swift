import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct SchmittTriggerTests {
  /// The block path scans past samples that change nothing; it must give
  /// exactly the transitions of feeding every sample, over random levels
  /// and random block lengths, with holds from none to long.
  @Test(arguments: [0, 1, 7, 480] as [Int64])
  func blocksGiveTheTransitionsOfSingleSamples(hold: Int64) {
    var random = SplitMix(seed: 7 + UInt64(hold))
    // Runs of levels that dwell below, between and above the thresholds.
    var levels = [Float]()
    while levels.count < 200_000 {
      let level = Float.random(in: 0...1, using: &random)
      levels += Array(repeating: level, count: Int.random(in: 1...300, using: &random))
    }
    var single = SchmittTrigger(openThreshold: 0.6, closeThreshold: 0.3, holdSamples: hold)
    var expected = [TriggerTransition]()
    for level in levels { if let t = single.process(level) { expected.append(t) } }
    var block = SchmittTrigger(openThreshold: 0.6, closeThreshold: 0.3, holdSamples: hold)
    var got = [TriggerTransition]()
    var start = 0
    while start < levels.count {
      let end = min(levels.count, start + Int.random(in: 1...2000, using: &random))
      levels[start..<end].withUnsafeBufferPointer { block.process($0) { got.append($0) } }
      start = end
    }
    #expect(expected.count > 20)
    #expect(got == expected)
    #expect(block.position == single.position && block.isOpen == single.isOpen)
  }

  @Test func levelBetweenThresholdsNeverToggles() {
    var closed = SchmittTrigger(openThreshold: 0.5, closeThreshold: 0.2, holdSamples: 10)
    for i in 0..<10_000 {
      // Wanders between the thresholds, touching both edges.
      let level = 0.2 + 0.2999 * Float(i % 97) / 96
      #expect(closed.process(level) == nil)
    }
    #expect(!closed.isOpen)

    var open = SchmittTrigger(openThreshold: 0.5, closeThreshold: 0.2, holdSamples: 10)
    #expect(open.process(0.6)?.isStart == true)
    for i in 0..<10_000 {
      let level = 0.2 + 0.2999 * Float(i % 89) / 88
      #expect(open.process(level) == nil)
    }
    #expect(open.isOpen)
  }

  @Test func holdIsHonouredToTheSample() {
    let hold: Int64 = 480
    var trigger = SchmittTrigger(openThreshold: 0.5, closeThreshold: 0.2, holdSamples: hold)
    _ = trigger.process(1)
    // One sample short of the hold, then back up: stays open.
    for _ in 0..<(hold - 1) { #expect(trigger.process(0.1) == nil) }
    #expect(trigger.process(0.3) == nil)
    #expect(trigger.isOpen)
    // Below from position `fall` on: closes on exactly the hold-th sample.
    let fall = trigger.position
    var closing: TriggerTransition?
    var samplesBelow: Int64 = 0
    while closing == nil {
      closing = trigger.process(0.1)
      samplesBelow += 1
    }
    #expect(samplesBelow == hold)
    #expect(closing?.isStart == false)
    #expect(closing?.position == fall)
    #expect(closing?.decisionPosition == fall + hold - 1)
  }

  @Test func startIsDatedWhereTheEnvelopeRoseAboveClose() {
    var trigger = SchmittTrigger(openThreshold: 0.5, closeThreshold: 0.2, holdSamples: 1)
    for _ in 0..<100 { _ = trigger.process(0.1) }
    for _ in 0..<20 { _ = trigger.process(0.3) }
    let start = trigger.process(0.6)
    #expect(start == TriggerTransition(isStart: true, position: 100, decisionPosition: 120))
  }

  @Test func finishClosesOpenSegment() {
    var trigger = SchmittTrigger(openThreshold: 0.5, closeThreshold: 0.2, holdSamples: 1000)
    _ = trigger.process(0.9)
    for _ in 0..<10 { _ = trigger.process(0.1) }
    #expect(trigger.finish()?.position == 1)
    #expect(!trigger.isOpen)
  }
}
