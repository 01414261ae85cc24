import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct ConvolutionTests {
  @Test func partitionedConvolutionIsTheDirectOne() {
    var random = SplitMix(seed: 4)
    let response = (0..<1000).map { _ in Float.random(in: -0.2...0.2, using: &random) }
    let input = (0..<2048).map { _ in Float.random(in: -1...1, using: &random) }
    let convolver = PartitionedConvolver(impulseResponse: response, blockSize: 64)
    var output = [Float](repeating: 0, count: input.count)
    for block in 0..<(input.count / 64) {
      input.withUnsafeBufferPointer { source in
        output.withUnsafeMutableBufferPointer { target in
          convolver.process(
            source.baseAddress! + block * 64, into: target.baseAddress! + block * 64)
        }
      }
    }
    var largest: Float = 0
    for n in 0..<input.count {
      var direct: Float = 0
      for k in 0..<min(n + 1, response.count) { direct += response[k] * input[n - k] }
      largest = max(largest, abs(direct - output[n]))
    }
    #expect(largest < 1e-4)
  }

  @Test func aRealTransformComesBackScaledBySize() {
    let transform = RealFourierTransform(size: 512)
    for n in 0..<512 { transform.real[n] = Float(sin(Double(n) * 0.3) + 0.1 * Double(n % 7)) }
    let original = (0..<512).map { transform.real[$0] }
    transform.forward()
    transform.inverse()
    let largest = (0..<512).map { abs(transform.real[$0] / 512 - original[$0]) }.max() ?? 1
    #expect(largest < 1e-5)
  }
}
