/// Where a plan's band lies: the tones' share is measured against the
/// band's power, and the analyses of signalling plans run at the lowest
/// rate that keeps every plan's band clear. Pure data; any thread.
enum SignallingBand {
  /// The lower edge of a telephone or radio voice channel, in Hz: a CTCSS
  /// sub-tone or hum below it is no part of the signalling band.
  static let voiceLow = 300.0
  /// The upper edge of a telephone or radio voice channel, in Hz.
  static let voiceHigh = 3_400.0
  /// How far above a plan's highest tone its band reaches, as a ratio:
  /// a tone above the voice channel keeps its band around it.
  static let aboveHighest = 1.5
  /// How far below a plan's lowest single tone its band reaches, as a
  /// ratio, when that tone lies below the voice channel.
  static let belowLowest = 0.5
  /// How far below a Handshake plan's marker tone its band starts, in Hz
  /// (the band reaches up to half the rate: its characters span it).
  static let belowMarker = 1_000.0

  /// The top of a band whose highest tone is `highest` Hz (before the
  /// limit of half the rate).
  static func top(highest: Double) -> Double { max(voiceHigh, highest * aboveHighest) }

  /// The bottom of a band of single tones whose lowest is `lowest` Hz.
  static func bottom(lowest: Double) -> Double { min(voiceLow, lowest * belowLowest) }
}
