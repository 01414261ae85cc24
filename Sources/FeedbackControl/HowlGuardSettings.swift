import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Every tuning number of the howl guard, with the reason for its value.
/// Durations in seconds, levels and depths in dB, frequencies in Hz.
public struct HowlGuardSettings: Sendable, Equatable {
  // MARK: Notches

  /// Notches the bank holds; past them the guard ducks.
  public var notchCount = 8
  /// Centre frequency over bandwidth (between the −3 dB points of a deep
  /// notch): 7 is about 1/5 octave. Wider notches also calm the loop's
  /// neighbouring peaks (a room's loop peaks lie 1/(loop delay) apart,
  /// about 50 Hz); partials a third of an octave away lose 0.4 dB at most.
  public var notchQuality = 7.0
  /// The shallowest first cut.
  public var minimumDepth = 9.0
  /// Extra first cut per dB/s of growth: a howl growing fast is far past
  /// the loop's limit (150 dB/s after a 6 dB step over it, 60 after 3).
  public var depthPerGrowth = 0.035
  /// Depths move in steps of this much (placing, deepening, lifting).
  public var depthStep = 3.0
  /// The deepest a notch goes; a howl still growing through it is ducked.
  public var maximumDepth = 24.0
  /// Seconds a notch's depth change takes (no click, no audible sweep).
  public var depthRampDuration = 0.005
  /// A howl found within this fraction of a notch's bandwidth from its
  /// centre deepens that notch instead of taking a new one.
  public var sameNotchDistance = 0.75

  // MARK: Duck

  /// Broadband cut per duck step.
  public var duckStep = 6.0
  /// The deepest the duck goes.
  public var maximumDuck = 18.0
  /// Least time between two duck steps (a loop round trip or two must
  /// pass before the first one shows).
  public var duckInterval = 0.1
  /// Howls found within `simultaneousWindow` of each other that count as
  /// "several at once", which notches alone may not stop in time.
  public var simultaneousHowls = 2
  public var simultaneousWindow = 0.2
  /// A howl found at this output level (dBFS) or louder is also ducked:
  /// it is about to clip, and a clipped howl grows harmonics that hide it.
  public var duckLevel = -12.0
  /// Time the duck holds after its last step before it starts to come back.
  public var duckHold = 2.0
  /// The duck comes back up by this much every `duckReleaseInterval`.
  public var duckReleaseStep = 3.0
  public var duckReleaseInterval = 0.5
  /// Seconds a duck step takes.
  public var duckRampDuration = 0.01

  // MARK: Lifting

  /// A notch that has not acted for this long starts to lift.
  public var liftDelay = 60.0
  /// It comes up by this much every `liftInterval`, and leaves at 0 dB;
  /// a howl that grows again on the way is found and deepened.
  public var liftStep = 3.0
  public var liftInterval = 2.0

  // MARK: Ring-out (with the loop's impulse response known)

  /// Planned notches keep every frequency where the loop can ring at
  /// least this far under its limit (dB): a loop this far under it rings
  /// 1/(1 − 10^(−margin/20)) over its no-loop level at worst (7.2 dB at
  /// 5 dB), and the plan starts acting only this close to the loop's
  /// maximum stable gain, so a loop 6 dB under it is left untouched.
  public var ringOutMargin = 5.0
  /// The plan covers gains up to this far over the maximum stable gain (dB).
  public var ringOutRange = 12.0
  /// The plan is made for gains this far apart (dB).
  public var ringOutGainStep = 0.5
  /// A crossing within this fraction of a planned notch's half-width from
  /// its centre deepens it; one farther out (on its flank, where the
  /// notch's phase moved it) gets a notch of its own while the bank has room.
  public var ringOutCentre = 0.5

  // MARK: The loop learned while it runs (`LoopLearner`, `LearnedLoop`)

  /// Seconds of the loop's response learned (its delay and the room's response).
  public var learnedDuration = 0.1
  /// Seconds of played signal the learner must have heard before it plans.
  public var learnedSeconds = 1.0
  /// A learned plan keeps every crossing this far under its limit (dB):
  /// less than a measured one, since what a talker leaves predictable makes
  /// the learned loop look stronger than it is.
  public var learnedMargin = 2.0
  /// A learned crossing closer than this (dB) to its limit at the gain the
  /// loop is running at is not believed (a loop that close would ring):
  /// it is a held note or a voice the learner took for the loop.
  public var learnedPlausibility = 2.0
  /// Learned crossings are read between these frequencies (Hz): under the
  /// lowest a voice's and the mains' low harmonics bias the learner most;
  /// over the highest a room's loop is weak (the air and the speaker's
  /// beaming take it) and what the learner finds there is mostly its own
  /// error.
  public var learnedLowest = 300.0
  public var learnedHighest = 8_000.0
  /// The first lag learned (s): past what the whitening predictor reaches.
  public var learnedFirstLag = 0.001
  /// A learned plan acts only after the gain jumps: rises more than this
  /// (dB) faster than `learnedRise` per `learnedRiseTime` seconds. A slow
  /// rise makes a slowly growing howl, which detection catches; a jump
  /// makes a fast one, which the plan is for — and a learned plan's errors
  /// (a held note taken for the loop) then cost no notch as the gain is
  /// eased up.
  public var learnedRise = 2.0
  public var learnedRiseTime = 1.0
  /// Seconds of heard signal between the starts of two solutions of the
  /// learned response (each costs the control thread tens of milliseconds).
  public var learnedInterval = 1.0

  // MARK: Detection

  /// Length of the analysed frame (about 4096 samples at 48 kHz: 12 Hz
  /// bins resolve a howl from the loop's other peaks 50 Hz away, and a
  /// growing howl is the newest part of the frame, so a long frame delays
  /// it little).
  public var frameDuration = 0.085
  /// A frame is analysed every hop (256 samples at 48 kHz).
  public var hopDuration = 0.0053
  /// The band searched: howls live between about 200 Hz and 5 kHz.
  public var lowestFrequency = 150.0
  public var highestFrequency = 10_000.0
  /// Peaks quieter than this at the output (dBFS) are ignored.
  public var levelFloor = -80.0
  /// A candidate stands this far above the mean power of the bins around it.
  public var peakToNeighbours = 10.0
  /// Neighbours: this far from the peak, in Hz (beyond its main lobe).
  public var neighbourNear = 60.0
  public var neighbourFar = 200.0
  /// A candidate stands this far above its octave below and its second
  /// and third harmonics (a note's partials come in families; a howl is alone).
  public var peakToHarmonics = 6.0
  /// A candidate that is the n-th partial of a series (n up to
  /// `seriesHarmonics`, fundamental at least `lowestFundamental`), with
  /// partials n − 1 and n + 1 standing `seriesProminence` over the bins
  /// just outside their main lobes and no more than `seriesRange` under
  /// it, is a note or a voice, not a howl.
  public var seriesHarmonics = 6
  public var lowestFundamental = 60.0
  public var seriesProminence = 6.0
  public var seriesRange = 12.0
  /// The span of level history a growth is judged over.
  public var growthSpan = 0.1
  /// For `alertDuration` after the gain rose by more than `alertRise`
  /// (the commonest way a loop goes past its limit), a steep howl is
  /// caught sooner, over the shorter `fastGrowthSpan`: growing at least
  /// `fastGrowth` dB/s on a straight line (within `fastDeviation`) while
  /// standing `fastProminence` over its neighbours. (At other times a
  /// voice's onset through the long frame rises just as steeply for as
  /// long.)
  public var alertRise = 0.5
  public var alertDuration = 1.0
  public var fastGrowthSpan = 0.04
  public var fastGrowth = 100.0
  public var fastDeviation = 0.5
  public var fastProminence = 10.0
  /// A loop goes past its limit when its gain rises or the room changes.
  /// Once the gain has not risen for `settleTime` seconds (and from the
  /// start), and the guard has held nothing down for as long, music's
  /// notes are far likelier than a howl: a peak must then
  /// grow steadily over the long `steadyGrowthSpan` — at least
  /// `steadyMinimumGrowth` dB/s on a straight line within `steadyDeviation`,
  /// over its neighbours, on one frequency, a peak in all but
  /// `steadyMissedHops` of its hops. A note's attack settles and a swell
  /// bends within the span; a howl keeps growing until it is stopped. The
  /// span is a second: a resonant filter sweeping a synthesizer's partial
  /// through a loop's peak lifted it steadily at 17-18 dB/s for up to 0.85
  /// s in the real-music corpus, where 0.8 s acted on it.
  public var settleTime = 3.0
  public var steadyGrowthSpan = 1.0
  public var steadyMinimumGrowth = 15.0
  public var steadyDeviation = 1.0
  public var steadyMissedHops = 2.0
  /// Settled, a peak is a note swelling when a partial of a note it could
  /// belong to (the fundamentals f/n, n up to `coRisingPartials`, and their
  /// partials up to `coRisingPartials`; at least `lowestFundamental`),
  /// standing `seriesProminence` over its surroundings and no more than
  /// `coRisingRange` dB under it, rose over the span by at least
  /// `coRisingShare` of its rise: a swell or a crescendo lifts the whole
  /// note, a howl rises alone.
  public var coRisingPartials = 8
  public var coRisingRange = 50.0
  public var coRisingShare = 0.3
  /// Settled, a peak must stand `subharmonicMargin` dB over any peak at a
  /// fundamental it could be a partial of (f/n, n from 2 to
  /// `coRisingPartials`, at least `lowestFundamental`): a resonant filter
  /// or a formant lifts one partial of a note out of it; a howl grows on
  /// until it stands clear of whatever the program holds.
  public var subharmonicMargin = 10.0
  /// Least growth over that span, dB/s (a howl 1 dB past the loop's limit
  /// grows about 15 dB/s).
  public var minimumGrowth = 15.0
  /// A lone peak (`isolatedProminence`) at this output level (dBFS) or
  /// louder, never more than `saturatedSwing` under it for
  /// `slowGrowthSpan`, is a howl that grew to full scale before it was
  /// caught (or while the guard was off): the limiter holds it steady, and
  /// its distortion may have given it harmonics. Music seldom holds a lone
  /// sine that loud; a test tone at full scale would be notched.
  public var saturatedLevel = -6.0
  public var saturatedSwing = 3.0
  /// A growth slower than this (dB/s) must also hold over `slowGrowthSpan`,
  /// within a factor of `slowGrowthRatio`: a loop's resonance that a note
  /// or a voice builds up grows fast and then settles; a howl a little past
  /// the loop's limit grows slowly and steadily.
  public var slowGrowth = 60.0
  public var slowGrowthSpan = 0.3
  public var slowGrowthRatio = 3.0
  /// Most growth a howl shows, dB/s: faster is an onset (a loop 12 dB past
  /// its limit, with 20 ms round trips, grows 400 dB/s at most).
  public var maximumGrowth = 400.0
  /// The peak rises over its neighbours by at least this share of its own
  /// rise: a voice's partials, a note's, or a stable loop's ringing rise
  /// with the sound around them; a howl rises alone.
  public var prominenceShare = 0.8
  /// A peak this far over its neighbours has nothing around it but its own
  /// sidelobes, which rise with it: it need not rise over them.
  public var isolatedProminence = 30.0
  /// Largest root-mean-square distance of the levels from their straight
  /// line, dB: a howl's level in dB rises on a straight line.
  public var maximumDeviation = 0.5
  /// Least change of slope from the span's first half to its second,
  /// dB/s: a note's onset slows down as it settles, a howl does not.
  public var minimumCurvature = -30.0
  /// Largest spread of the peak's frequency over the span, Hz: a howl
  /// sits on one frequency, a partial with vibrato does not.
  public var maximumFrequencySpread = 2.0

  public init() {}

  // MARK: Widths that follow from the settings (octaves)

  /// From a notch's centre to its −3 dB points.
  public var notchHalfWidth: Double { 1 / (2 * notchQuality * log(2.0)) }
  /// How far from a notch a howl found deepens it instead of taking a new one.
  public var sameNotchReach: Double { 2 * sameNotchDistance * notchHalfWidth }
  /// How far from a planned notch's centre a crossing (or a notch already
  /// set) counts as that notch's; the plan's own notches lie farther apart.
  public var ringOutReach: Double { ringOutCentre * notchHalfWidth }
}
