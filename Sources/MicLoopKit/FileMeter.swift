import AudioFiles
import SignalDSP

/// Meters an audio file from start to end, streaming it block by block so
/// memory stays flat for any length. Runs on the calling thread.
public enum FileMeter {
  /// The outcome of metering a file.
  public struct Outcome: Sendable {
    /// Totals of what was read.
    public var summary: MeterSummary
    /// A problem found after reading everything present (a truncated file),
    /// reported after the results.
    public var problem: AudioFileError?
  }

  /// Meters every frame of `reader`, calling `emit` for each event in
  /// stream order (ending with the summary); `shouldStop`, asked before each
  /// block, ends it early with the summary of what was read.
  public static func run(
    _ reader: AudioFileReader, settings: MeterSettings, blockFrames: Int = 4096,
    shouldStop: () -> Bool = { false }, emit: (MeterEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let processor = MeterProcessor(
      sampleRate: reader.sampleRate, channelCount: reader.channelCount, settings: settings,
      maximumBlock: blockFrames, screensNonFinite: reader.canHoldNonFiniteSamples)
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * reader.channelCount)
    defer { buffer.deallocate() }
    var stopped = false
    while true {
      if shouldStop() {
        stopped = true
        break
      }
      let frames = try reader.read(into: buffer, frameCount: blockFrames)
      if frames == 0 { break }
      processor.process(buffer, frameCount: frames, emit: emit)
    }
    if reader.framesRead == 0 {
      throw .empty(path: reader.path == "-" ? "standard input" : reader.path)
    }
    var summary: MeterSummary?
    processor.finish { event in
      if case .summary(let totals) = event { summary = totals }
      emit(event)
    }
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(summary: summary!, problem: problem)
  }
}
