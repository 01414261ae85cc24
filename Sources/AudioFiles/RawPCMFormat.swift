/// What headerless PCM holds, since nothing in it says so: the input of
/// radio pipelines (`rtl_fm … | decoder`), little-endian interleaved frames.
public struct RawPCMFormat: Sendable, Equatable {
  public var sampleRate: Int
  public var channelCount: Int
  /// How each sample is stored (`.pcm24` is packed in three bytes).
  public var encoding: AudioFileEncoding

  /// Mono 16-bit, the format multimon-ng's raw input expects, at `sampleRate`.
  public init(sampleRate: Int, channelCount: Int = 1, encoding: AudioFileEncoding = .pcm16) {
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.encoding = encoding
  }
}
