#if canImport(Glibc)
  import Glibc
#endif

/// The background a talk threshold sits on: the level of the room without
/// the talker, and how far the room dips below it by itself, followed one
/// 10 ms frame at a time.
///
/// The level is a slow average of frame power (`TalkDetectorSettings.backgroundTime`)
/// that talk cannot drag up:
/// - while talk is open, only frames less than `backgroundMargin` dB above
///   the background count, so a voice that goes on for a minute never
///   becomes its own background, however evenly it speaks — its pauses and
///   the dips between its syllables are what the background hears;
/// - while talk is closed, every frame counts, but none for more than
///   `backgroundMargin` dB above the background, so a room that gets louder
///   is followed within seconds while the onset of a word moves it by a
///   fraction of a decibel;
/// - the background falls more slowly than it rises
///   (`backgroundFallFactor`), so a music's quiet bar or a voice's pause
///   does not empty it;
/// - during the first `learningTime` of a stream every frame counts at once
///   (`learningTimeConstant`): the room is learned before talk may open.
///   Talk that opened meanwhile (a stream that began in digital silence)
///   is kept out as it is later: a file that starts with a word must not
///   learn that word as its room. But when that talk did not come back
///   near the background for the last `learnedRoomTime` of learning, it
///   was no word but the room (babble after a gated start): its mean
///   level in dB is the background. Babble holds within a few dB of that
///   mean; a voice, whose syllables come and go by 20 dB, stands well above
///   it and stays talk;
/// - when talk has stayed open for `escapeTime` without one frame within
///   the margin, the room itself got louder (a fan or a crowd came in
///   during talk): the background rises by `escapeRate` dB a second until
///   frames within the margin are heard again.
///
/// A level that held steady for seconds (`TalkDetector` tells) is
/// background at once: `raise(to:)`.
///
/// The spread is the mean depth of the frames below the background (each
/// counted to at most `spreadLimit` dB), over `spreadTime`: about 1 dB for
/// hiss or a fan, 2–4 dB for babble and music. Talk, which lies above the
/// background, cannot widen it.
///
/// Works on powers, so the one logarithm per frame is the caller's.
/// No allocation; real-time safe, one caller at a time.
struct HeldBackground: Sendable {
  /// Frame power of the background (linear, mean square).
  private(set) var power: Double = -1
  /// Mean depth in dB of the frames below the background.
  private(set) var depth: Double
  /// Frames since a frame was last counted while talk is open.
  private var uncountedFrames = 0
  /// The sum of those frames' levels in dB.
  private var uncountedSum = 0.0
  /// Uncounted frames at the end of learning that make their mean level
  /// the room (`TalkDetectorSettings.learnedRoomTime`).
  private let learnedRoomFrames: Int
  /// Frames left to learn the room in.
  private(set) var learningFrames: Int
  private let rate: Double
  private let learningRate: Double
  private let fallFactor: Double
  private let quietRatio: Double
  private let quietRate: Double
  /// Whether talk has opened since the room was learned (then the quiet
  /// fall is over).
  private var hasTalked = false
  private let marginRatio: Double
  private let depthRate: Double
  private let depthLimit: Double
  private let escapeFrames: Int
  private let escapeRatio: Double

  /// The mean depth below the background of a level that fluctuates by one
  /// standard deviation of a normal distribution (√(2/π)): the spread is
  /// the depth divided by it.
  static let depthPerSpread = 0.8
  /// The lowest frame power considered (−140 dBFS): digital silence.
  static let silentPower = 1e-14

  init(settings: TalkDetectorSettings, frameDuration: Double) {
    func coefficient(_ time: Double) -> Double { 1 - exp(-frameDuration / max(time, 1e-9)) }
    rate = coefficient(settings.backgroundTime)
    learningRate = coefficient(settings.learningTimeConstant)
    fallFactor = settings.backgroundFallFactor
    quietRatio = pow(10, -settings.quietFallDepth / 10)
    quietRate = coefficient(settings.quietFallTime)
    marginRatio = pow(10, settings.backgroundMargin / 10)
    depthRate = coefficient(settings.spreadTime)
    depthLimit = settings.spreadLimit
    depth = settings.initialSpread * Self.depthPerSpread
    learningFrames = Int((settings.learningTime / frameDuration).rounded())
    escapeFrames = Int((settings.escapeTime / frameDuration).rounded())
    learnedRoomFrames = Int((settings.learnedRoomTime / frameDuration).rounded())
    escapeRatio = pow(10, settings.escapeRate * frameDuration / 10)
  }

  /// Whether the room is still being learned (talk may not open yet).
  var isLearning: Bool { learningFrames > 0 }

  /// How much the background fluctuates, in dB (one standard deviation).
  var spread: Double { depth / Self.depthPerSpread }

  /// Ends learning now: the room is known (it held steady).
  mutating func finishLearning() { learningFrames = 0 }

  /// Takes `level` (a frame power) for the background if it is louder.
  mutating func raise(to level: Double) { power = max(power, level) }

  /// Follows one frame.
  /// - Parameters:
  ///   - power: the frame's click-free power (linear).
  ///   - decibels: the same in dB.
  ///   - background: the background before this frame, in dB (the
  ///     caller's logarithm of `power`, passed to save computing it twice).
  ///   - isTalking: whether talk is open.
  mutating func update(
    power framePower: Double, decibels: Double, background: Double, isTalking: Bool
  ) {
    let frame = max(framePower, Self.silentPower)
    if power < 0 { power = frame }
    let ceiling = power * marginRatio
    let learning = learningFrames > 0
    if learning { learningFrames -= 1 }
    if isTalking && !learning { hasTalked = true }
    guard !isTalking || frame < ceiling else {
      uncountedFrames += 1
      uncountedSum += decibels
      if uncountedFrames > escapeFrames { power *= escapeRatio }
      // Talk that opened on a stream's digital silence and never came
      // back near it while the room was learned: that was the room.
      if learning, learningFrames == 0, uncountedFrames >= learnedRoomFrames {
        power = max(power, pow(10, uncountedSum / Double(uncountedFrames) / 10))
      }
      return
    }
    uncountedFrames = 0
    uncountedSum = 0
    if decibels < background {
      depth += depthRate * (min(background - decibels, depthLimit) - depth)
    }
    let target = min(frame, ceiling)
    var step = learning ? learningRate : rate
    if !hasTalked && target < power * quietRatio {
      step = max(step, quietRate)
    } else if target < power {
      step *= fallFactor
    }
    power += step * (target - power)
  }
}
