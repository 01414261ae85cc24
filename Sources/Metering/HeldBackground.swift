/// The background a talk threshold sits on, and its spread, as talk in
/// progress is allowed to move them.
///
/// A sliding-window percentile cannot tell a long stretch of talk from a
/// louder room: someone reading without a pause for longer than the window
/// would become their own background and end their talk. So while talk is
/// open, the background and spread may rise only `freeRise` dB above their
/// values when it opened for `heldSeconds`, then by `riseRate` (the spread
/// `spreadRiseRate`) dB a second more: a room that really got louder still
/// wins, later. A level known to be
/// background — a steady new noise — passes at once.
///
/// Real-time safe; one per level scale the detector keeps.
struct HeldBackground: Sendable {
  /// Seconds of talk during which the background may not rise.
  static let heldSeconds = 4.0
  /// dB a second the background may rise after that.
  static let riseRate = 2.0
  /// dB the background may rise at any time during talk: what a few
  /// seconds of talk in the window lift it by in a fluctuating room.
  static let freeRise = 2.0
  /// dB a second the spread may rise after `heldSeconds`: slower than the
  /// background, because the thresholds move by a multiple of it and talk
  /// in the window widens it most.
  static let spreadRiseRate = 0.5

  private var last = (background: -140.0, spread: 1.0)
  private var atOpen = (background: -140.0, spread: 1.0)

  /// The background and spread to use for this frame.
  /// - Parameters:
  ///   - window: what the window's percentiles say.
  ///   - talkSeconds: how long talk has been open (`nil` while closed; the
  ///     first frame of talk passes 0).
  ///   - steadyLevel: the level of a steady new noise, the least the
  ///     background may be (`nil` when the recent past is not steady).
  mutating func update(
    window: (background: Double, spread: Double), talkSeconds: Double?, steadyLevel: Double?
  ) -> (background: Double, spread: Double) {
    var result = window
    if let talkSeconds {
      if talkSeconds == 0 { atOpen = last }
      let late = max(0, talkSeconds - Self.heldSeconds)
      result.background = min(
        result.background, atOpen.background + Self.freeRise + late * Self.riseRate)
      result.spread = min(result.spread, atOpen.spread + Self.freeRise + late * Self.spreadRiseRate)
    }
    if let steadyLevel { result.background = max(result.background, steadyLevel) }
    last = result
    return result
  }
}
