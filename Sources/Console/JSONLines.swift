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
      var object = JSONObject(event: "level", capacity: 320)
      object.add("time", seconds: reading.time)
      object.add("peak_dbfs", reading.peakDecibels, places: 2)
      object.add("rms_dbfs", reading.rmsDecibels, places: 2)
      object.add("envelope_dbfs", reading.envelopeDecibels, places: 2)
      object.add("speech_dbfs", evidence.speechDecibels, places: 2)
      object.add("noise_floor_dbfs", evidence.noiseFloorDecibels, places: 2)
      object.add("open_dbfs", evidence.openDecibels, places: 2)
      object.add("close_dbfs", evidence.closeDecibels, places: 2)
      object.add("meter_dbfs", reading.meterDecibels, places: 2)
      object.add("talking", reading.isTalking)
      if let loudness = reading.loudness {
        object.add("momentary_lufs", loudness.momentaryLUFS, places: 2)
        object.add("short_term_lufs", loudness.shortTermLUFS, places: 2)
      }
      addChannels(reading.channels, to: &object)
      return object.finished
    case .talkStart(let time):
      var object = JSONObject(event: "talk_start", capacity: 48)
      object.add("time", seconds: time)
      return object.finished
    case .talkEnd(let time):
      var object = JSONObject(event: "talk_end", capacity: 48)
      object.add("time", seconds: time)
      return object.finished
    case .summary(let summary):
      var object = JSONObject(event: "summary")
      object.add("duration", seconds: summary.duration)
      object.add("peak_dbfs", summary.peakDecibels, places: 2)
      object.add("rms_dbfs", summary.rmsDecibels, places: 2)
      object.add("talk_seconds", seconds: summary.talkSeconds)
      object.add("talk_segments", summary.talkSegments)
      object.add("invalid_samples", summary.invalidSamples)
      object.add(
        "channels",
        objects: summary.channels.map {
          var channel = JSONObject(capacity: 48)
          channel.add("peak_dbfs", $0.peakDecibels, places: 2)
          channel.add("rms_dbfs", $0.rmsDecibels, places: 2)
          return channel
        })
      if let loudness = summary.loudness {
        object.add("integrated_lufs", loudness.integratedLUFS, places: 2)
        object.add("loudness_range_lu", loudness.loudnessRangeLU, places: 2)
        object.add("true_peak_dbtp", loudness.truePeakDBTP, places: 2)
        object.add("momentary_max_lufs", loudness.momentaryMaxLUFS, places: 2)
        object.add("short_term_max_lufs", loudness.shortTermMaxLUFS, places: 2)
      }
      return object.finished
    }
  }

  /// Each channel's levels in a level event, when more than one channel is metered.
  static func addChannels(_ readings: ChannelReadings, to object: inout JSONObject) {
    guard readings.count > 1 else { return }
    object.add(
      "channels",
      objects: (0..<readings.count).lazy.map { channel in
        var member = JSONObject(capacity: 64)
        member.add("peak_dbfs", readings.peakDecibels(channel), places: 2)
        member.add("rms_dbfs", readings.rmsDecibels(channel), places: 2)
        member.add("meter_dbfs", readings.meterDecibels(channel), places: 2)
        return member
      })
  }
}
