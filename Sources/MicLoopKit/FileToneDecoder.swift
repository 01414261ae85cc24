import AudioFiles
import SignalDSP

/// Decodes the tones in an audio file from start to end, streaming it in
/// blocks so memory stays flat for any length. Runs on the calling thread.
public enum FileToneDecoder {
  /// The outcome of decoding a file.
  public struct Outcome: Sendable {
    /// Seconds of audio read.
    public var duration: Double
    /// NaN or infinite samples, decoded as silence.
    public var invalidSamples: Int
    /// A problem found after reading everything present (a truncated file).
    public var problem: AudioFileError?
  }

  /// Decodes every frame of `reader` (the mix of all channels, or only
  /// `channel`), calling `emit` for each tone and sequence;
  /// `shouldStop`, asked before each block, ends it early.
  public static func run(
    _ reader: AudioFileReader, decoder: ToneDecoder, channel: Int? = nil,
    blockFrames: Int = 8192, shouldStop: () -> Bool = { false }, emit: (ToneDecoderEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let channels = reader.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
    defer { buffer.deallocate() }
    let mono = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    defer { mono.deallocate() }
    var invalid = 0
    var stopped = false
    while true {
      if shouldStop() {
        stopped = true
        break
      }
      let frames = try reader.read(into: buffer, frameCount: blockFrames)
      if frames == 0 { break }
      invalid += MonoMix.mix(
        buffer, frameCount: frames, channelCount: channels, channel: channel, into: mono)
      decoder.process(UnsafeBufferPointer(start: mono, count: frames), emit: emit)
    }
    if reader.framesRead == 0 {
      throw .empty(path: reader.path == "-" ? "standard input" : reader.path)
    }
    decoder.finish(emit: emit)
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(
      duration: Double(reader.framesRead) / reader.sampleRate, invalidSamples: invalid,
      problem: problem)
  }
}
