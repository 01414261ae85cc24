import SignalDSP

/// How RMS levels are referenced.
public enum RMSConvention: String, Sendable, CaseIterable {
  /// sox's convention: a full-scale sine reads −3.01 dB RMS.
  case sox
  /// AES17: a full-scale sine reads 0 dB RMS (sox + 3.01 dB).
  case aes17

  /// dB added to sox-convention RMS levels.
  public var offset: Double { self == .aes17 ? Decibels.aes17Offset : 0 }
}

/// Levels over one metering interval.
public struct LevelReading: Sendable, Equatable {
  /// Stream time at the end of the interval, in seconds.
  public var time: Double
  /// Peak level in dBFS of the loudest channel; `nil` for silence.
  public var peakDecibels: Double?
  /// RMS level in dBFS of the loudest channel; `nil` for silence.
  public var rmsDecibels: Double?
  /// The talk detector's speech-band envelope in dBFS; `nil` for silence.
  public var envelopeDecibels: Double?
  /// Whether talk was in progress at the end of the interval.
  public var isTalking: Bool
  /// The talk detector's level, floor and thresholds at the end of the interval.
  public var talkEvidence: TalkEvidence
  /// Loudness at the end of the interval, when measured.
  public var loudness: MomentaryLoudness?
  /// The meter reading under the chosen ballistics, in dBFS (with loudness
  /// ballistics, the momentary loudness in LUFS); `nil` for silence.
  public var meterDecibels: Double?
  /// Peak, RMS and meter reading of each metered channel.
  public var channels: ChannelReadings

  public init(
    time: Double, peakDecibels: Double?, rmsDecibels: Double?, envelopeDecibels: Double?,
    isTalking: Bool, talkEvidence: TalkEvidence = TalkEvidence(),
    loudness: MomentaryLoudness? = nil, meterDecibels: Double? = nil,
    channels: ChannelReadings = ChannelReadings()
  ) {
    self.channels = channels
    self.meterDecibels = meterDecibels
    self.talkEvidence = talkEvidence
    self.loudness = loudness
    self.time = time
    self.peakDecibels = peakDecibels
    self.rmsDecibels = rmsDecibels
    self.envelopeDecibels = envelopeDecibels
    self.isTalking = isTalking
  }
}

/// Loudness at one instant: momentary (last 400 ms) and short-term (last
/// 3 s) in LUFS; each `nil` until that much has been heard, or in silence.
public struct MomentaryLoudness: Sendable, Equatable {
  public var momentaryLUFS: Double?
  public var shortTermLUFS: Double?

  public init(momentaryLUFS: Double?, shortTermLUFS: Double?) {
    self.momentaryLUFS = momentaryLUFS
    self.shortTermLUFS = shortTermLUFS
  }
}

/// Levels of one channel over a whole stream.
public struct ChannelLevels: Sendable, Equatable {
  public var peakDecibels: Double?
  public var rmsDecibels: Double?
}

/// The totals at the end of a stream.
public struct MeterSummary: Sendable, Equatable {
  /// Seconds of audio metered.
  public var duration: Double
  /// Peak level in dBFS of the loudest channel; `nil` for silence.
  public var peakDecibels: Double?
  /// RMS level in dBFS of the loudest channel; `nil` for silence.
  public var rmsDecibels: Double?
  /// Seconds of talk.
  public var talkSeconds: Double
  /// Number of talk segments.
  public var talkSegments: Int
  /// Levels of each metered channel.
  public var channels: [ChannelLevels]
  /// NaN and infinite samples found (ignored by the levels).
  public var invalidSamples: Int
  /// Loudness of the whole stream, when measured.
  public var loudness: LoudnessSummary? = nil
}

/// Everything a meter reports, in stream order.
public enum MeterEvent: Sendable, Equatable {
  case level(LevelReading)
  case talkStart(time: Double)
  case talkEnd(time: Double)
  case summary(MeterSummary)
}
