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
    if channelCount == 1 {
      // A plain copy while all are finite (a non-finite float has every
      // exponent bit set): one pass the compiler vectorises, then the
      // careful loop below only for a block that holds one.
      // Adding one to an all-ones exponent carries into the sign bit.
      var carries: UInt32 = 0
      for index in 0..<frameCount {
        let value = input[index]
        output[index] = value
        carries |= (value.bitPattern & 0x7f80_0000) &+ 0x0080_0000
      }
      if carries & 0x8000_0000 == 0 { return 0 }
    }
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
