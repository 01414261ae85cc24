/// What counts as damaged data rather than sound in a float sample: NaN,
/// ±infinity and values beyond `largestSound` (+60 dBFS). Float audio may
/// exceed full scale before a gain stage, but not by a million times in
/// power. The meter, the plot and the tone decoder share this rule.
/// Stateless; any thread.
public enum DamagedSamples {
  /// Largest amplitude taken as sound: +60 dBFS.
  public static let largestSound: Float = 1_000

  /// Whether `sample` is sound (finite and within `largestSound`).
  @inline(__always)
  public static func isSound(_ sample: Float) -> Bool {
    sample.isFinite && abs(sample) <= largestSound
  }
}
