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
}
