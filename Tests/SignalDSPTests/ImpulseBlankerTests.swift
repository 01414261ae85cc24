import Foundation
import SignalDSP
import TestSupport
import Testing
import TonePlans

/// The click blanker: clicks out, everything else through untouched.
@Suite struct ImpulseBlankerTests {
  /// Runs `samples` through a blanker in blocks of varying size.
  static func blank(_ samples: [Float], rate: Double) -> (output: [Float], blocks: Int) {
    var blanker = ImpulseBlanker(sampleRate: rate)
    var output = [Float]()
    var offset = 0
    var block = 23
    samples.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(block, all.count - offset)
        blanker.process(UnsafeBufferPointer(rebasing: all[offset..<offset + count])) {
          output.append(contentsOf: $0)
        }
        offset += count
        block = block * 5 % 997 + 1
      }
    }
    blanker.flush { output.append(contentsOf: $0) }
    return (output, blanker.blankedBlocks)
  }

  /// `frequencies` for `duration` seconds at `amplitude` each, with the
  /// 2 ms raised-cosine fades an encoder puts at each end (an abrupt start
  /// or stop is itself a click).
  static func burst(_ frequencies: [Double], _ duration: Double, rate: Double) -> [Float] {
    let count = Int(duration * rate)
    let fade = Int(0.002 * rate)
    return (0..<count).map { n in
      let edge = min(n, count - 1 - n)
      let gain = edge >= fade ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(fade))
      let value = frequencies.reduce(0.0) { $0 + 0.2 * sin(2 * .pi * $1 * Double(n) / rate) }
      return Float(gain * value)
    }
  }

  /// Tones that start and stop, back to back and from silence, two at once
  /// (beating), over a sub-tone louder than they are: nothing is touched.
  @Test(arguments: [8_000.0, 22_050, 48_000])
  func signallingPassesBitForBit(rate: Double) throws {
    var samples = [Float](repeating: 0, count: Int(0.2 * rate))
    for segment in try TonePlan.zvei1.schedule(for: "12345", sampleRate: rate) {
      samples += Self.burst(segment.frequencies, segment.duration, rate: rate)
    }
    samples += [Float](repeating: 0, count: Int(0.1 * rate))
    for key in "1470*#D" {
      samples += Self.burst(TonePlan.dtmf.frequencies(of: key)!, 0.04, rate: rate)
      samples += [Float](repeating: 0, count: Int(0.04 * rate))
    }
    for index in samples.indices {
      samples[index] += Float(0.3 * sin(2 * Double.pi * 250 * Double(index) / rate))
    }
    let (output, blocks) = Self.blank(samples, rate: rate)
    #expect(output.count == samples.count)
    #expect(blocks == 0)
    let changed = samples.indices.filter { index in
      index < output.count && output[index] != samples[index]
    }
    #expect(changed.isEmpty, "changed at \(changed.prefix(10).map { Double($0) / rate }) s")
  }

  /// A tone with a click every 23 ms (a doublet of 0.4 ms at three times
  /// its amplitude, as a filtered FM click looks): each click is set to
  /// zero, about a millisecond around it, and the tone elsewhere is not.
  @Test(arguments: [8_000.0, 48_000])
  func clicksAreSetToZero(rate: Double) {
    var signal = TestSignal(sampleRate: rate)
    signal.tone([1_400], amplitudes: [0.1], duration: 1)
    var samples = signal.samples
    let clickLength = max(2, Int(0.0004 * rate))
    var clicks = [Int]()
    var position = Int(0.05 * rate)
    while position + clickLength < samples.count - Int(0.05 * rate) {
      for offset in 0..<clickLength {
        samples[position + offset] += offset < clickLength / 2 ? 0.3 : -0.3
      }
      clicks.append(position)
      position += Int(0.023 * rate)
    }
    let (output, blocks) = Self.blank(samples, rate: rate)
    #expect(output.count == samples.count)
    for click in clicks {
      #expect(output[click..<(click + clickLength)].allSatisfy { $0 == 0 }, "click at \(click)")
    }
    // Each click costs at most three blocks of the tone.
    let blockLength = ImpulseBlanker(sampleRate: rate).blockLength
    #expect(blocks >= clicks.count && blocks <= 3 * clicks.count)
    let zeroed = output.indices.filter { output[$0] == 0 && samples[$0] != 0 }.count
    #expect(zeroed <= 3 * blockLength * clicks.count)
  }
}
