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
  /// `channel`), calling `emit` for each tone and sequence.
  public static func run(
    _ reader: AudioFileReader, decoder: ToneDecoder, channel: Int? = nil,
    blockFrames: Int = 8192, emit: (ToneDecoderEvent) -> Void
  ) throws(AudioFileError) -> Outcome {
    let channels = reader.channelCount
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
    defer { buffer.deallocate() }
    let mono = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    defer { mono.deallocate() }
    var invalid = 0
    while true {
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
    do { try reader.checkComplete() } catch { problem = error }
    return Outcome(
      duration: Double(reader.framesRead) / reader.sampleRate, invalidSamples: invalid,
      problem: problem)
  }
}

/// Folds interleaved frames to one channel for analysis. Any thread; never allocates.
public enum MonoMix {
  /// Writes the average of all channels (or only `channel`) of each frame
  /// to `output`; NaN and infinite samples count as silence.
  /// - Returns: how many non-finite samples were replaced.
  @discardableResult
  public static func mix(
    _ input: UnsafePointer<Float>, frameCount: Int, channelCount: Int, channel: Int?,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    var invalid = 0
    if channelCount == 1 || channel != nil {
      let offset = channel ?? 0
      for frame in 0..<frameCount {
        let value = input[frame * channelCount + offset]
        if value.isFinite {
          output[frame] = value
        } else {
          output[frame] = 0
          invalid += 1
        }
      }
      return invalid
    }
    let scale = 1 / Float(channelCount)
    for frame in 0..<frameCount {
      var sum: Float = 0
      for index in 0..<channelCount {
        let value = input[frame * channelCount + index]
        if value.isFinite { sum += value } else { invalid += 1 }
      }
      output[frame] = sum * scale
    }
    return invalid
  }
}
