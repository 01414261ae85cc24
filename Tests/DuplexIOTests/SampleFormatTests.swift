import DuplexIO
import Testing

@Suite struct SampleFormatTests {
  @Test(arguments: SampleFormat.allCases)
  func roundTripKeepsSamplesWithinOneStep(format: SampleFormat) {
    let input: [Float] = [0, 0.5, -0.5, 0.999, -1, 0.123_456, -0.000_01]
    var raw = [UInt8](repeating: 0, count: input.count * format.byteCount)
    var output = [Float](repeating: 9, count: input.count)
    raw.withUnsafeMutableBytes { bytes in
      format.encode(input, into: bytes.baseAddress!, count: input.count)
      format.decode(bytes.baseAddress!, into: &output, count: input.count)
    }
    let step: Float = format == .s16 ? 1 / 32_768 : format == .float ? 0 : 1 / 8_388_608
    for (a, b) in zip(input, output) { #expect(abs(a - b) <= step) }
  }

  @Test(arguments: SampleFormat.allCases)
  func encodingClipsInsteadOfWrapping(format: SampleFormat) {
    let input: [Float] = [1.5, -3, .nan, .infinity]
    var raw = [UInt8](repeating: 0, count: input.count * format.byteCount)
    var output = [Float](repeating: 9, count: input.count)
    raw.withUnsafeMutableBytes { bytes in
      format.encode(input, into: bytes.baseAddress!, count: input.count)
      format.decode(bytes.baseAddress!, into: &output, count: input.count)
    }
    #expect(output[0] > 0.999)
    #expect(output[1] == -1)
    #expect(output[2] == 0)
    #expect(output[3] > 0.999)
  }
}
