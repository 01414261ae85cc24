import Foundation
import Testing

@testable import Metering

@Suite struct LevelAccumulatorTests {
  /// One channel copied out of interleaved frames, for stereo (eight frames
  /// a step) and other counts, at lengths that leave a remainder.
  @Test(arguments: [1, 2, 3, 6])
  func extractingAChannelCopiesExactlyItsSamples(channels: Int) {
    let frames = 1003
    let samples = (0..<(frames * channels)).map { Float($0) }
    for channel in 0..<channels {
      var target = [Float](repeating: -1, count: frames)
      samples.withUnsafeBufferPointer { source in
        target.withUnsafeMutableBufferPointer {
          MeterLevelStage.extract(
            channel, of: channels, from: source.baseAddress!, frameCount: frames,
            into: $0.baseAddress!)
        }
      }
      #expect(target == (0..<frames).map { Float($0 * channels + channel) })
    }
  }

  func sine(amplitude: Double, frequency: Double, rate: Double, count: Int) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
  }

  @Test func fullScaleSineReadsZeroPeakAndMinus3RMS() {
    let samples = sine(amplitude: 1, frequency: 1000, rate: 48_000, count: 48_000)
    var levels = LevelAccumulator()
    samples.withUnsafeBufferPointer { levels.accumulate($0) }
    #expect(abs(levels.peakDecibels! - 0) < 0.005)
    #expect(abs(levels.rmsDecibels! - -3.0103) < 0.005)
  }

  @Test func blockSizeDoesNotChangeTheResult() {
    let samples = sine(amplitude: 0.3, frequency: 997, rate: 44_100, count: 10_007)
    var whole = LevelAccumulator()
    samples.withUnsafeBufferPointer { whole.accumulate($0) }
    var pieces = LevelAccumulator()
    samples.withUnsafeBufferPointer { buffer in
      var start = 0
      for size in [1, 7, 8, 9, 1000, 3] + Array(repeating: 1024, count: 9)
      where start < buffer.count {
        let end = min(buffer.count, start + size)
        pieces.accumulate(UnsafeBufferPointer(rebasing: buffer[start..<end]))
        start = end
      }
    }
    #expect(pieces.sampleCount == whole.sampleCount)
    #expect(pieces.peak == whole.peak)
    #expect(pieces.sumOfSquares == whole.sumOfSquares)
  }

  @Test func silenceHasNoLevel() {
    var levels = LevelAccumulator()
    [Float](repeating: 0, count: 100).withUnsafeBufferPointer { levels.accumulate($0) }
    #expect(levels.peakDecibels == nil)
    #expect(levels.rmsDecibels == nil)
  }

  @Test func negativePeakCounts() {
    var levels = LevelAccumulator()
    [0.1, -0.5, 0.2].map(Float.init).withUnsafeBufferPointer { levels.accumulate($0) }
    #expect(levels.peak == 0.5)
  }

  @Test func samplesNearFloatMaximumKeepAFiniteRMS() {
    // A float file may hold any finite value; squares beyond 1.8e19 overflow a Float.
    var levels = LevelAccumulator()
    let huge = [Float](repeating: 3.4e38, count: 2_000) + [-3.4e38, 3.4e38, 1]
    huge.withUnsafeBufferPointer { levels.accumulate($0) }
    let peak = try! #require(levels.peakDecibels)
    let rms = try! #require(levels.rmsDecibels)
    #expect(abs(peak - 770.63) < 0.01)
    #expect(abs(rms - peak) < 0.01, "a constant reads its peak as RMS: \(rms) vs \(peak)")
  }

  @Test func chunkPeaksAreThePeaksOfEachChunkFromTheSamePass() {
    let samples = (0..<1000).map { Float(sin(Double($0) * 0.37)) * Float($0 % 300) / 300 }
    var accumulator = LevelAccumulator()
    var peaks = [Float](
      repeating: -1, count: LevelAccumulator.chunkCount(forSamples: samples.count))
    samples.withUnsafeBufferPointer { buffer in
      peaks.withUnsafeMutableBufferPointer {
        let written = accumulator.accumulate(buffer, chunkPeaks: $0.baseAddress!)
        #expect(written == 3, "the fourth chunk stays open")
      }
    }
    #expect(accumulator.openChunkLength == 1000 - 3 * 256)
    #expect(accumulator.peak == samples.map { abs($0) }.max()!)
    peaks[3] = accumulator.endChunk()
    for (index, peak) in peaks.enumerated() {
      let chunk = samples[(index * 256)..<min(samples.count, (index + 1) * 256)]
      #expect(peak == chunk.map { abs($0) }.max()!)
    }
    #expect(accumulator.peak == peaks.max()!)
  }

  /// Chunks run on across blocks: the chunk peaks and the levels are the
  /// same bits for any cut.
  @Test func chunksRunOnAcrossBlocks() {
    let samples = sine(amplitude: 0.6, frequency: 1_234, rate: 48_000, count: 5_000)
      .enumerated().map { $0.element * Float(1 + $0.offset % 977) / 977 }
    func run(inBlocksOf size: Int) -> (peaks: [Float], accumulator: LevelAccumulator) {
      var accumulator = LevelAccumulator()
      var peaks = [Float]()
      var scratch = [Float](repeating: 0, count: LevelAccumulator.chunkCount(forSamples: size))
      samples.withUnsafeBufferPointer { buffer in
        var start = 0
        while start < buffer.count {
          let end = min(buffer.count, start + size)
          let written = scratch.withUnsafeMutableBufferPointer {
            accumulator.accumulate(
              UnsafeBufferPointer(rebasing: buffer[start..<end]), chunkPeaks: $0.baseAddress!)
          }
          peaks += scratch[0..<written]
          start = end
        }
      }
      return (peaks, accumulator)
    }
    let whole = run(inBlocksOf: samples.count)
    #expect(whole.peaks.count == samples.count / 256)
    for size in [1, 3, 7, 8, 100, 256, 257, 4_800] {
      let cut = run(inBlocksOf: size)
      #expect(cut.peaks == whole.peaks, "\(size)-sample blocks")
      #expect(cut.accumulator.sumOfSquares == whole.accumulator.sumOfSquares)
      #expect(cut.accumulator.peak == whole.accumulator.peak)
    }
  }
}
