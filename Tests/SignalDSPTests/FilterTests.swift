import Foundation
import SignalDSP
import Testing

@Suite struct FilterTests {
  @Test func speechBandHighPassRejectsMainsHum() {
    let rate = 8_000.0
    let h1 = Biquad.highPass(frequency: 200, q: 0.541_196_1, sampleRate: rate)
    let h2 = Biquad.highPass(frequency: 200, q: 1.306_563, sampleRate: rate)
    let at50 =
      20 * log10(h1.magnitude(at: 50, sampleRate: rate) * h2.magnitude(at: 50, sampleRate: rate))
    let at1k =
      20
      * log10(h1.magnitude(at: 1000, sampleRate: rate) * h2.magnitude(at: 1000, sampleRate: rate))
    let at200 =
      20 * log10(h1.magnitude(at: 200, sampleRate: rate) * h2.magnitude(at: 200, sampleRate: rate))
    #expect(at50 < -45)
    #expect(abs(at1k) < 0.1)
    #expect(abs(at200 - -3.01) < 0.1)
  }

  @Test func filteredSineMatchesMagnitude() {
    let rate = 16_000.0
    var filter = Biquad.lowPass(frequency: 1000, q: 0.707, sampleRate: rate)
    var peak: Float = 0
    for n in 0..<16_000 {
      let y = filter.process(Float(sin(2 * Double.pi * 2000 * Double(n) / rate)))
      if n > 8_000 { peak = max(peak, abs(y)) }
    }
    #expect(abs(Double(peak) - filter.magnitude(at: 2000, sampleRate: rate)) < 0.01)
  }

  @Test func boxcarDecimatorIsIndependentOfBlockSize() {
    let input = (0..<1000).map { Float($0 % 17) }
    var whole = BoxcarDecimator(factor: 6)
    var out1 = [Float](repeating: 0, count: 200)
    let n1 = input.withUnsafeBufferPointer { whole.process($0, into: &out1) }
    var pieces = BoxcarDecimator(factor: 6)
    var out2 = [Float]()
    var start = 0
    for size in [5, 1, 13, 300, 7, 674] {
      var block = [Float](repeating: 0, count: 200)
      let n = input.withUnsafeBufferPointer {
        pieces.process(UnsafeBufferPointer(rebasing: $0[start..<start + size]), into: &block)
      }
      out2 += block.prefix(n)
      start += size
    }
    #expect(n1 == 166)
    #expect(Array(out1.prefix(n1)) == out2)
    #expect(out1[0] == Float(0 + 1 + 2 + 3 + 4 + 5) / 6)
  }
}
