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
    var start = 0
    if channelCount == 1 {
      // Eight at a time while all are finite (NaN fails every comparison).
      let limit = SIMD8<Float>(repeating: .greatestFiniteMagnitude)
      let raw = UnsafeRawPointer(input)
      let destination = UnsafeMutableRawPointer(output)
      while start + 8 <= frameCount {
        let values = raw.loadUnaligned(fromByteOffset: start * 4, as: SIMD8<Float>.self)
        let magnitudes = values.replacing(with: -values, where: values .< 0)
        guard all(magnitudes .<= limit) else { break }
        destination.storeBytes(of: values, toByteOffset: start * 4, as: SIMD8<Float>.self)
        start += 8
      }
    }
    if channelCount == 1 || channel != nil {
      let offset = channel ?? 0
      for frame in start..<frameCount {
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
