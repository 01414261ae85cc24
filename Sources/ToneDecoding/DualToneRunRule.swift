/// The numbers that decide whether a whole run of a pair of tones (a DTMF
/// key, a siren signal) is reported, beside the settings' own
/// (`ToneDetectionSettings`: tolerance, twist, run share). Each was placed
/// between what keys through noise, FM and GSM 06.10 measure and what the
/// talk-off speech that passed for keys measures. Pure data; any thread.
enum DualToneRunRule {
  /// A tone shorter than this (seconds) must keep within
  /// `shortToneTolerance`: speech that passes for a key does so briefly
  /// and off-key.
  static let shortTone = 0.045
  /// The frequency error a short tone may have: Q.24's 1.5 % that must be
  /// accepted, with room for the estimate's error at 6 dB SNR.
  static let shortToneTolerance = 0.018
  /// The frequency error any DTMF key may have: the 1.8 % ITU-T Q.23
  /// lets a keypad's generator be off, with room for the estimate's error
  /// (keys drawn up to Q.24's 1.5 % off in noise measured 1.59 % at most).
  /// A musical interval that lands near a key lies anywhere in the
  /// settings' wider tolerance.
  static let keyTolerance = 0.02

  /// The steadiness both tones' phases must advance with at least. A
  /// voice's harmonic pair glides: keys measure 0.95 or more in noise at
  /// 6 dB SNR and 0.89 through GSM 06.10, voices that passed for keys
  /// through FM 0.29 to 0.89. A key at −8 dB twist in noise at 6 dB SNR
  /// may advance as unsteadily (0.88): there the two overlap.
  static let minimumCoherence = 0.8
  /// The median share a siren signal's pair must hold (or the settings'
  /// run share, if lower): a signal held for seconds has proved itself by
  /// its length.
  static let alarmRunShare = 0.7

  /// A key whose two phases advance in lock-step, close to both nominal
  /// tones: speech or music 10 dB under it takes share away (keys measured
  /// 0.79 to 0.89 there), but no voice or music held a pair this steadily
  /// and this close (in the recorded talk-off speech and music the
  /// steadiest pair within the twist limits advanced at 0.976, the closest
  /// steady one was 0.75 % off).
  enum LockedKey {
    /// How long it must last, in seconds.
    static let minimumDuration = 0.05
    /// How close to both nominal frequencies it must stay, relative.
    static let maximumError = 0.005
    /// The steadiness both phases must advance with.
    static let coherence = 0.99
    /// The median share it needs.
    static let share = 0.78

    /// Whether `run`, within `errors` (relative, each tone) of its nominal
    /// frequencies, was held locked like a key.
    static func holds(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      run.duration >= minimumDuration && max(errors.0, errors.1) <= maximumError
        && run.coherence >= coherence && run.share >= share
    }
  }

  /// A key that speech 10-15 dB under it dented below every share above,
  /// held nearly as steadily and as close as a locked key: accepted by the
  /// run's own measures, it must then show no voice over its whole span
  /// (`VoiceSpan`, which a locked key skips). In the recorded talk-off
  /// speech and music (276 and 12 minutes at 8 and 16 kHz) a single run
  /// of a voice held a pair like this, for 50 ms (0.17 % off, at 0.992 and
  /// a share of 0.75); in the tune group's talk-off none lasted 45 ms
  /// with shares down to 0.5. Keys under a man talking 4-10 dB below them
  /// (the tune group's voice) that no other rule took held 0.98 to 0.9996
  /// and shares of 0.56 to 0.80 for 55 to 105 ms.
  enum DentedKey {
    /// How long it must last, in seconds: longer than the keys Q.24 lets
    /// a receiver refuse (40 ms) by half a frame hop or more.
    static let minimumDuration = 0.055
    /// How close to both nominal frequencies it must stay, relative
    /// (`HarmonicPair.maximumError`: closer than the voices' pairs).
    static let maximumError = HarmonicPair.maximumError
    /// The steadiness both phases must advance with: a caller 4-10 dB
    /// under a key shakes its phases to 0.96-0.98; in the tune group's
    /// talk-off no voice held a pair within `maximumError` for 40 ms or
    /// more steadier than 0.92.
    static let coherence = 0.96
    /// The median share it needs.
    static let share = 0.55

    /// Whether `run`, within `errors` (relative, each tone) of its nominal
    /// frequencies, was held like a key that something under it dented.
    static func holds(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      run.duration >= minimumDuration && max(errors.0, errors.1) <= maximumError
        && run.coherence >= coherence && run.share >= share
    }

    /// The series a dented key held as close and as steadily as a locked
    /// key may show: a man talking 4-10 dB under such keys (the tune
    /// group's) put up to 0.50 of their power on some pitch's multiples by
    /// chance; the voices' own pairs that reached a series like that
    /// glided (0.96 and less).
    static let lockedSeries = 0.6

    /// Whether a dented key's whole span (`evidence`) shows nothing of a
    /// voice: no power spread beside its tones (`VoiceSpan.beside`) and no
    /// harmonic series (`VoiceSpan.series`), or, for a run held as close
    /// and as steadily as a locked key, less than `lockedSeries`. A sung
    /// vowel holding two harmonics on a key's tones, or a pair gliding by
    /// 1 % over the key, holds as steadily as a dented key; a man talking
    /// loudly under a key puts power on some pitch's multiples by chance,
    /// whatever the key's steadiness.
    static func showsNoVoice(
      _ evidence: VoiceEvidence, run: ToneRun, errors: (Double, Double)
    ) -> Bool {
      let isLockedSteady =
        run.coherence >= LockedKey.coherence && max(errors.0, errors.1) <= LockedKey.maximumError
      let seriesHolds =
        evidence.series < VoiceSpan.series
        || (isLockedSteady && evidence.series < lockedSeries)
      return seriesHolds && evidence.beside < VoiceSpan.beside
    }
  }

  /// A key short of the run share that was held like a key through a noisy
  /// channel. An FM channel's clicks and limiter products dent some frames
  /// of a key (at 6 dB CNR) while those between them hold nearly the whole
  /// band; a voice that holds two keys' tones this long and this close
  /// glides or keeps its other harmonics in every frame (in the talk-off
  /// speech, through GSM too, no quarter of its frames reached 0.89 where
  /// it held a pair within 1 % for 55 ms).
  enum SteadyKey {
    /// How long it must last, in seconds.
    static let minimumDuration = 0.055
    /// How close to both nominal frequencies it must stay, relative.
    static let maximumError = 0.01
    /// The steadiness both phases must advance with.
    static let coherence = 0.97
    /// The median share it needs with `coherence`.
    static let share = 0.82
    /// The share a quarter of its frames reach in a *clean* key (the
    /// upper quartile): no decision asks more of a frame.
    static let cleanShare = 0.93
    /// The median share a clean key needs with `coherence`.
    static let cleanKeyShare = 0.7
    /// The steadiness a clean key with `share` needs: a click that dented
    /// it for two frames may have put its phase off a little.
    static let dentedCoherence = 0.955

    /// Whether `run`, within `errors` (relative, each tone) of its nominal
    /// frequencies, was held like a key.
    static func holds(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      guard run.duration >= minimumDuration, max(errors.0, errors.1) <= maximumError else {
        return false
      }
      let isClean = run.upperShare >= cleanShare
      return run.coherence >= coherence
        && (run.share >= share || (run.share >= cleanKeyShare && isClean))
        || run.coherence >= dentedCoherence && run.share >= share && isClean
    }
  }

  /// A pair of tones that may be two harmonics of one voice. A man's voice
  /// (80-180 Hz) has harmonics close enough together that two of them
  /// often lie on a key's row and column, each a percent or two off,
  /// formant-boosted and held as steadily as a key (the 4th and 7th of
  /// 172 Hz on key 1; the 7th and 15th of 99.7 Hz on key 3). Its other
  /// harmonics sound with them at the multiples of the pitch the pair
  /// implies, where a key has only what lies under it. Once the run's
  /// frequencies are measured finely, each pitch of which both are
  /// multiples (the low tone its `lowHarmonic`-th harmonic) is looked for
  /// in the run's frames: the power on the pitch's other multiples in the
  /// voice band less the power halfway between them, over the pair's
  /// power, the median over the frames. Where that reaches `evidence`, the
  /// pair must be held closer and steadier than the settings ask.
  ///
  /// Placed on the recorded corpus's tune group (`make
  /// real-talkoff-eval`, `make real-keys-eval`): keys under men's and
  /// women's speech and music 10-20 dB down that reached `evidence` were
  /// within 0.65 % of their tones, their phases at 0.97 or more, where the
  /// men's pairs that passed for keys lay 1.17 to 1.38 % off. It finds a
  /// voice near 170 Hz (the 4th and 7th harmonics on key 1); a voice near
  /// 100 Hz has its harmonics two bins apart in a 20 ms frame, and no more
  /// on its multiples than between them once the tones' main lobes are
  /// left out: such pairs (the 7th and 15th on key 3) still pass.
  enum HarmonicPair {
    /// The evidence from which a pair must be held like a key.
    static let evidence = 0.025
    /// How close to both nominal frequencies such a pair must stay,
    /// relative: between the keys' 0.65 % and the voices' 1.17 %.
    static let maximumError = 0.009
    /// The steadiness both its phases must advance with (a voice's pair
    /// glides: 0.83 to 0.99); keys there measured 0.97 or more.
    static let coherence = 0.97
    /// The lowest pitch looked for, in hertz: a man's voice rarely lies
    /// lower outside creak.
    static let lowestPitch = 70.0
    /// The highest harmonic number the low tone is taken for: with
    /// `lowestPitch`, up to 9 (a voice whose 10th harmonic is the low
    /// tone has harmonics too close together to tell in a frame).
    static let highestLowHarmonic = 9
    /// How far the two frequencies' ratio may lie from the ratio of their
    /// harmonic numbers, relative: a voice's harmonics are exact
    /// multiples, and their run estimates, pulled by the neighbouring
    /// harmonics, were within 0.55 %.
    static let ratioMatch = 0.006
    /// How far from either tone (in bins) a multiple or a halfway point
    /// must lie to be counted: nearer, it is the tone's own main lobe (a
    /// Hann window's is two bins wide each side; 1.5 took keys at 6 dB
    /// SNR and 1.5 % off for voices).
    static let clearOfTones = 2.0
    /// The frames of a run looked at (the first, within 6 dB of its level):
    /// a voice's pair passes for a key for 35-90 ms.
    static let framesLookedAt = 32

    /// Whether `run`, within `errors` (relative, each tone) of its nominal
    /// frequencies, is no voice's pair of harmonics or was held like a key.
    static func holds(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      run.harmonics < evidence || isHeldLikeAKey(run, errors: errors)
    }

    /// Whether `run` was held closer and steadier than the settings ask,
    /// as a key is: it holds whatever its harmonic evidence.
    static func isHeldLikeAKey(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      max(errors.0, errors.1) <= maximumError && run.coherence >= coherence
    }

    /// The pitch of which `low` is the `lowHarmonic`-th harmonic and `high`
    /// a harmonic too, within `ratioMatch`, as the pair's sum over the sum
    /// of their harmonic numbers; 0 when `high` is none; nil when the
    /// pitch would lie under `lowestPitch` or the harmonic number is past
    /// `highestLowHarmonic`.
    static func pitch(low: Double, high: Double, lowHarmonic: Int) -> Double? {
      guard lowHarmonic <= highestLowHarmonic, low > 0,
        low / Double(lowHarmonic) >= lowestPitch
      else { return nil }
      let ratio = high / low
      let highHarmonic = (ratio * Double(lowHarmonic)).rounded()
      let harmonicRatio = highHarmonic / Double(lowHarmonic)
      guard highHarmonic > Double(lowHarmonic),
        abs(ratio - harmonicRatio) <= ratioMatch * harmonicRatio
      else { return 0 }
      return (low + high) / (Double(lowHarmonic) + highHarmonic)
    }

    /// Calls `body` with each multiple of `pitch` in the voice band and the
    /// point halfway below it, for those both of which lie more than
    /// `clear` Hz from either tone: the places where a voice's other
    /// harmonics, and the gaps between them, are looked for.
    @inline(__always)
    static func forEachMultiple(
      of pitch: Double, clearOf tones: (Double, Double), by clear: Double,
      _ body: (_ at: Double, _ halfway: Double) -> Void
    ) {
      var multiple = 1.0
      while multiple * pitch <= SignallingBand.voiceHigh {
        let at = multiple * pitch
        let halfway = at - 0.5 * pitch
        multiple += 1
        guard halfway >= SignallingBand.voiceLow,
          min(abs(at - tones.0), abs(at - tones.1), abs(halfway - tones.0), abs(halfway - tones.1))
            > clear
        else { continue }
        body(at, halfway)
      }
    }

    /// In one frame: the power on the multiples of `pitch` in the voice
    /// band (those clear of the tones at `low` and `high` Hz, with their
    /// halfway points) less the power halfway below them, over the power
    /// of the tones' main lobes.
    /// (`frame` is read in place: it holds a few hundred bytes.)
    static func excess(
      in frame: UnsafePointer<FrameTone>, pitch: Double, low: Double, high: Double
    ) -> Double {
      let width = frame.pointee.binWidth
      let firstBin = frame.pointee.firstBin
      let stored = frame.pointee.bandPowers.count
      func power(_ frequency: Double) -> Double? {
        let bin = Int((frequency / width).rounded()) - firstBin
        return bin >= 0 && bin < stored ? Double(frame.pointee.bandPowers[bin]) : nil
      }
      func lobe(_ frequency: Double) -> Double {
        (power(frequency - width) ?? 0) + (power(frequency) ?? 0) + (power(frequency + width) ?? 0)
      }
      let pair = lobe(low) + lobe(high)
      guard pair > 0 else { return 0 }
      var series = 0.0
      var between = 0.0
      forEachMultiple(of: pitch, clearOf: (low, high), by: clearOfTones * width) { at, halfway in
        guard let onIt = power(at), let offIt = power(halfway) else { return }
        series += onIt
        between += offIt
      }
      return (series - between) / pair
    }
  }

  /// A pair that was sounding before its run began: a held note whose two
  /// partials lie on a key's tones passes for a key for a stretch (a
  /// sampled oboe held a pair 0.8 % and 1 % off key `#` for 80 ms at 0.997,
  /// its partials sounding within 4 dB of that level for 100 ms before),
  /// where a key rises out of the pause before it. Each tone's level in
  /// `windowsBefore` windows, the nearest ending `gap` before the run, is
  /// compared with its level in the run's first `window`
  /// (`ToneOnsetProbe`). A talker under a key can hold both of its tones
  /// within a few dB in one window before it, hardly in three.
  enum HeldNote {
    /// Seconds between the windows before the run and the run's start:
    /// past the first frame's smear, inside the 40 ms pause Q.24 lets
    /// keys have.
    static let gap = 0.015
    /// Seconds of each window: a frame's length.
    static let window = 0.02
    /// Back-to-back windows before the run in which both tones must have
    /// sounded (60 ms).
    static let windowsBefore = 3
    /// How far a tone must rise at the run's start, in dB, for the run to
    /// start as a key does.
    static let rise = 6.0

    /// Whether tones that rose by `low` and `high` dB from a window before
    /// the run to its start were both sounding in that window.
    static func bothSounding(low: Double, high: Double) -> Bool {
      low < rise && high < rise
    }
  }

  /// A pair that passed for a key, looked at over its whole run at once
  /// (`HarmonicSeriesProbe`): over 35-120 ms a 100 Hz voice's harmonics
  /// stand apart and a gliding one spreads beside its line, where a 20 ms
  /// frame blurs both (`HarmonicPair`). Placed on the recorded corpus's
  /// tune group and the Q.24 corpus of `make bench`.
  enum VoiceSpan {
    /// The longest span of a run looked at, in seconds: a voice's pair
    /// passes for a key for 35-90 ms.
    static let longestSpan = 0.12
    /// Hops from a run's last frame to the newest frame held when it is
    /// decided, beyond those the decoder holds anyway.
    static let decisionLagHops = 8
    /// How much finer than the longest span's own bins its spectrum is
    /// sampled (the transform's size is the next power of two).
    static let zeroPadding = 1
    /// The tones' main lobes, in bins of the span (a Hann window's).
    static let lobeBins = 2.0
    /// How far beside a tone its neighbourhood reaches, in bins of the span.
    static let besideBins = 5.0
    /// The series evidence from which a pair must be held like a key.
    static let series = 0.05
    /// The series evidence no key reaches: a voice whatever else it shows.
    static let sureSeries = 0.3
    /// The power beside the tones from which a pair must be steady: keys
    /// under speech and music measured up to 0.14, keys whose phase jumps
    /// at a codec's onset 0.25, the men's pairs that passed for keys 0.36
    /// and more.
    static let beside = 0.3
    /// The steadiness a pair with power beside it must advance with: keys
    /// off by Q.24's 1.5 % in noise at 6 dB SNR held 0.995 or more.
    static let coherence = 0.97

    /// Whether `run`, within `errors` of its nominal tones and with
    /// `evidence` from its span, is no voice.
    static func holds(_ run: ToneRun, errors: (Double, Double), evidence: VoiceEvidence) -> Bool {
      let heldLikeAKey =
        max(errors.0, errors.1) <= HarmonicPair.maximumError
        && run.coherence >= HarmonicPair.coherence
      let seriesHolds =
        evidence.series < series || (evidence.series < sureSeries && heldLikeAKey)
      return seriesHolds && (evidence.beside < beside || run.coherence >= coherence)
    }
  }

  /// Two notes that pass for a key: off their nominal tones, unsteady in
  /// phase, and swinging apart in level as two notes beat and swell each
  /// on its own, where one generator holds both tones' levels together.
  /// Placed on the game and electronic music of `planetblupi-music-ogg`
  /// and `nexuiz-music`: keys in noise at 6 dB SNR, through FM and phone
  /// codecs and under speech 4-20 dB down reached each of the three
  /// measures, never all three at once.
  enum TwoNotes {
    /// How far from nominal a tone must lie, relative.
    static let error = 0.006
    /// The steadiness both phases advance with less than.
    static let coherence = 0.97
    /// How far the frames' twists spread at least, in dB
    /// (`ToneRun.twistSpread`).
    static let twistSpread = 3.5

    /// Whether `run`, `errors` (relative, each tone) from its nominal
    /// frequencies, is two notes rather than a key.
    static func holds(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      max(errors.0, errors.1) > error && run.coherence < coherence
        && run.twistSpread >= twistSpread
    }
  }

  /// A pair sounding over a bass: music's bass notes and drums lie below
  /// the voice band, where a telephone line carries nothing and a radio
  /// at most one steady sub-tone (`LowBandProbe`). Over such a bass a pair
  /// must be held as a generator holds a key: its twist and level steady
  /// and its tones close to nominal. Placed on the game and electronic
  /// music of `planetblupi-music-ogg`, `nexuiz-music`, `ufoai-music` and
  /// `lincity-ng-data`: keys over a CTCSS sub-tone and FM clicks (up to
  /// 2 dB over the pair once the sub-tone is set aside) were held this
  /// steadily; speech 4-10 dB under keys put at most −11.7 dB below 250 Hz
  /// (with the bar at −17 dB one of its 400 keys would be lost).
  enum OverBass {
    /// The top of the band under the voice band, in Hz.
    static let lowBandTop = 250.0
    /// Where a radio's sub-tone may lie (CTCSS: 67.0-254.1 Hz), in Hz.
    static let subTones = 60.0...260.0
    /// The power under `lowBandTop`, the strongest sub-tone set aside,
    /// over the pair's, from which the pair must be held like a key, dB:
    /// most of the game music's false keys lay from −14.3 dB up (−10 dB
    /// left 23 of them per rate, −14 leaves 8).
    static let bass = -14.0
    /// How far the frames' twists may spread, in dB.
    static let twistSpread = 3.5
    /// How far the run's louder and softer frames may lie apart, in dB
    /// (`ToneRun.levelSpread`).
    static let levelSpread = 3.0
    /// How far from nominal its tones may lie, relative.
    static let maximumError = 0.007

    /// Whether `run`, `errors` from its nominal frequencies, was held
    /// like a key.
    static func isHeldLikeAKey(_ run: ToneRun, errors: (Double, Double)) -> Bool {
      run.twistSpread < twistSpread && run.levelSpread < levelSpread
        && max(errors.0, errors.1) <= maximumError
    }
  }
}
