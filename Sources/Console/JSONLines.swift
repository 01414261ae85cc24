import Metering
import TextFormatting

/// Renders events as JSON Lines: one object per line, `time` in seconds of
/// stream time, levels in dBFS with silence as `null`. Safe on any thread.
public enum JSONLines {
  /// One line (without the newline) for a meter event.
  public static func line(for event: MeterEvent) -> String {
    switch event {
    case .level(let reading):
      let evidence = reading.talkEvidence
      return
        "{\"event\":\"level\",\"time\":\(time(reading.time)),\"peak_dbfs\":\(db(reading.peakDecibels)),\"rms_dbfs\":\(db(reading.rmsDecibels)),\"envelope_dbfs\":\(db(reading.envelopeDecibels)),\"speech_dbfs\":\(db(evidence.speechDecibels)),\"noise_floor_dbfs\":\(db(evidence.noiseFloorDecibels)),\"open_dbfs\":\(db(evidence.openDecibels)),\"close_dbfs\":\(db(evidence.closeDecibels)),\"meter_dbfs\":\(db(reading.meterDecibels)),\"talking\":\(reading.isTalking)\(loudness(reading.loudness))\(channels(reading.channels))}"
    case .talkStart(let time):
      return "{\"event\":\"talk_start\",\"time\":\(Self.time(time))}"
    case .talkEnd(let time):
      return "{\"event\":\"talk_end\",\"time\":\(Self.time(time))}"
    case .summary(let summary):
      let channels = summary.channels.map {
        "{\"peak_dbfs\":\(db($0.peakDecibels)),\"rms_dbfs\":\(db($0.rmsDecibels))}"
      }.joined(separator: ",")
      return
        "{\"event\":\"summary\",\"duration\":\(time(summary.duration)),\"peak_dbfs\":\(db(summary.peakDecibels)),\"rms_dbfs\":\(db(summary.rmsDecibels)),\"talk_seconds\":\(time(summary.talkSeconds)),\"talk_segments\":\(summary.talkSegments),\"invalid_samples\":\(summary.invalidSamples),\"channels\":[\(channels)]\(loudness(summary.loudness))}"
    }
  }

  /// Each channel's levels in a level event, when more than one channel is metered.
  static func channels(_ readings: ChannelReadings) -> String {
    guard readings.count > 1 else { return "" }
    var members = [String]()
    for channel in 0..<readings.count {
      members.append(
        "{\"peak_dbfs\":\(db(readings.peakDecibels(channel))),\"rms_dbfs\":\(db(readings.rmsDecibels(channel))),\"meter_dbfs\":\(db(readings.meterDecibels(channel)))}"
      )
    }
    return ",\"channels\":[" + members.joined(separator: ",") + "]"
  }

  /// The loudness members of a level event (none when not measured).
  static func loudness(_ value: MomentaryLoudness?) -> String {
    guard let value else { return "" }
    return
      ",\"momentary_lufs\":\(db(value.momentaryLUFS)),\"short_term_lufs\":\(db(value.shortTermLUFS))"
  }

  /// The loudness members of the summary (none when not measured).
  static func loudness(_ value: LoudnessSummary?) -> String {
    guard let value else { return "" }
    return
      ",\"integrated_lufs\":\(db(value.integratedLUFS)),\"loudness_range_lu\":\(db(value.loudnessRangeLU)),\"true_peak_dbtp\":\(db(value.truePeakDBTP)),\"momentary_max_lufs\":\(db(value.momentaryMaxLUFS)),\"short_term_max_lufs\":\(db(value.shortTermMaxLUFS))"
  }

  static func time(_ seconds: Double) -> String { DecimalFormatting.fixed(seconds, places: 3) }
  static func db(_ value: Double?) -> String { DecimalFormatting.json(value, places: 2) }
}
