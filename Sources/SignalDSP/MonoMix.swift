/// Folds interleaved frames to one channel for analysis. Any thread; never allocates.
public enum MonoMix {
  /// Writes the average of all channels (or only `channel`) of each frame
  /// to `output`; damaged samples (NaN, infinite or beyond +60 dBFS:
  /// `DamagedSamples`) count as silence.
  /// - Returns: how many damaged samples were replaced.
  @discardableResult
  public static func mix(
    _ input: UnsafePointer<Float>, frameCount: Int, channelCount: Int, channel: Int?,
    into output: UnsafeMutablePointer<Float>
  ) -> Int {
    var invalid = 0
    if channelCount == 1 {
      // A plain copy while all are sound: one pass the compiler vectorises,
      // then the careful loop below only for a block that holds a damaged
      // one. Without the sign bit, a float's bits order as its magnitude
      // does, and NaN and infinity lie above every finite value.
      var largest: UInt32 = 0
      for index in 0..<frameCount {
        let value = input[index]
        output[index] = value
        largest = max(largest, value.bitPattern & 0x7fff_ffff)
      }
      if largest <= DamagedSamples.largestSound.bitPattern { return 0 }
    }
    if channelCount == 1 || channel != nil {
      let offset = channel ?? 0
      for frame in 0..<frameCount {
        let value = input[frame * channelCount + offset]
        if DamagedSamples.isSound(value) {
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
        if DamagedSamples.isSound(value) { sum += value } else { invalid += 1 }
      }
      output[frame] = sum * scale
    }
    return invalid
  }
}
