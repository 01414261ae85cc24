import SignalDSP

/// What the howl guard did, as it crosses from the audio thread to the
/// control thread (a plain value: no references, no allocation).
public struct HowlGuardEvent: BitwiseCopyable, Sendable, Equatable {
  public enum Action: UInt8, Sendable, BitwiseCopyable, CaseIterable {
    /// A notch was placed at a howl's frequency.
    case notch
    /// A notch was made deeper: the howl went on growing through it.
    case deepen
    /// The whole output was turned down (or further down): the bank was
    /// full, a notch could go no deeper, several howls grew at once, or
    /// one was already loud.
    case duck
    /// A notch was made shallower after a quiet time (removed at 0 dB), or
    /// the duck came back up a step (gone at 0 dB).
    case lift

    /// The action's name in JSON and on screen.
    public var name: String {
      switch self {
      case .notch: return "notch"
      case .deepen: return "deepen"
      case .duck: return "duck"
      case .lift: return "lift"
      }
    }
  }

  public var action: Action
  /// Stream time in seconds.
  public var time: Double
  /// The notch's centre in Hz; NaN for the duck.
  public var frequency: Double
  /// Gain at the notch's centre (or of the duck) after the action, in dB
  /// (0 or below).
  public var depth: Double
  /// How fast the howl grew when it was found, dB per second (NaN for
  /// lifts and planned actions).
  public var growth: Double
  /// Whether the action was set ahead by the ring-out plan (the gain rose
  /// to where the measured loop needs it) rather than for a howl found.
  public var isPlanned: Bool
  /// Whether that plan was learned while the loop ran (not measured).
  public var isLearned: Bool

  public init(
    action: Action, time: Double, frequency: Double, depth: Double, growth: Double,
    isPlanned: Bool = false, isLearned: Bool = false
  ) {
    self.action = action
    self.time = time
    self.frequency = frequency
    self.depth = depth
    self.growth = growth
    self.isPlanned = isPlanned
    self.isLearned = isLearned
  }

  /// Whether the event is about the broadband duck rather than a notch.
  public var isDuck: Bool { frequency.isNaN }
}
