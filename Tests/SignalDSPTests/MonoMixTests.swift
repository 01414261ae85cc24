import SignalDSP
import Testing

/// The mono fold the tone decoder analyses, and its screening of damaged samples.
@Suite struct MonoMixTests {
  func mix(_ input: [Float], channels: Int, channel: Int? = nil) -> ([Float], Int) {
    var output = [Float](repeating: -1, count: input.count / channels)
    let damaged = input.withUnsafeBufferPointer { source in
      output.withUnsafeMutableBufferPointer {
        MonoMix.mix(
          source.baseAddress!, frameCount: input.count / channels, channelCount: channels,
          channel: channel, into: $0.baseAddress!)
      }
    }
    return (output, damaged)
  }

  @Test func soundPassesUnchangedUpToSixtyDecibelsOverFullScale() {
    let input: [Float] = [0, 0.5, -1, 999, -1_000, Float.leastNonzeroMagnitude]
    let (output, damaged) = mix(input, channels: 1)
    #expect(output == input)
    #expect(damaged == 0)
  }

  @Test(arguments: [1, 2])
  func damagedSamplesAreSilenceAndCounted(channels: Int) {
    let bad: [Float] = [.nan, .infinity, -.infinity, 1_001, -3.4e38]
    var input = [Float]()
    for value in bad { input += [Float](repeating: value, count: channels) }
    input += [Float](repeating: 0.25, count: channels)
    let (output, damaged) = mix(input, channels: channels)
    #expect(damaged == bad.count * channels)
    #expect(Array(output.prefix(bad.count)) == [Float](repeating: 0, count: bad.count))
    #expect(output.last == 0.25)
  }

  @Test func oneChosenChannelIsScreenedAlone() {
    // Channel 1 is damaged where channel 0 is sound, and the other way round.
    let input: [Float] = [0.5, .nan, 2_000, 0.25]
    let (output, damaged) = mix(input, channels: 2, channel: 1)
    #expect(output == [0, 0.25])
    #expect(damaged == 1)
  }
}
