/// A one-pole envelope follower on |x| with separate attack and release.
///
/// Each sample moves the envelope toward |x| by `1 − c`, with
/// `c = exp(-1 / (time × sampleRate))` taken from the attack time while
/// |x| is above the envelope and from the release time otherwise, so a step
/// reaches 63.2 % after one attack time and decays to 36.8 % after one
/// release time. No allocation; real-time safe.
public struct EnvelopeFollower: Sendable {
  /// Coefficient used while the input rises above the envelope.
  public let attackCoefficient: Float
  /// Coefficient used while the input is below the envelope.
  public let releaseCoefficient: Float
  /// Current envelope value (linear).
  public var value: Float

  public init(attackTime: Double, releaseTime: Double, sampleRate: Double, initialValue: Float = 0)
  {
    attackCoefficient = onePoleCoefficient(time: attackTime, sampleRate: sampleRate)
    releaseCoefficient = onePoleCoefficient(time: releaseTime, sampleRate: sampleRate)
    value = initialValue
  }

  /// Feeds one sample and returns the new envelope.
  @inlinable @inline(__always)
  public mutating func process(_ sample: Float) -> Float {
    let rectified = abs(sample)
    let coefficient = rectified > value ? attackCoefficient : releaseCoefficient
    value = rectified + coefficient * (value - rectified)
    return value
  }

  /// Replaces each sample of `buffer` by the envelope after it.
  public mutating func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
    for index in buffer.indices { buffer[index] = process(buffer[index]) }
  }
}
