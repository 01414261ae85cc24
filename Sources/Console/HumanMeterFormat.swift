import Metering
import TextFormatting

/// Renders meter events for people: a line per interval with a level bar,
/// and a list of talk segments at the end. Safe on any thread.
public struct HumanMeterFormat: Sendable {
  /// Lowest level the bar shows, in dBFS.
  public var floorDecibels = -60.0
  /// Characters in the bar.
  public var barWidth = 30

  public init() {}

  /// The bar for a level: `#` up to the RMS, `=` up to the peak (the
  /// meter reading under the chosen ballistics, when there is one).
  public func bar(peak: Double?, rms: Double?) -> String {
    func cells(_ level: Double?) -> Int {
      guard let level else { return 0 }
      let fraction = (level - floorDecibels) / -floorDecibels
      return max(0, min(barWidth, Int((fraction * Double(barWidth)).rounded())))
    }
    let rmsCells = cells(rms)
    let peakCells = max(rmsCells, cells(peak))
    return String(repeating: "#", count: rmsCells)
      + String(repeating: "=", count: peakCells - rmsCells)
      + String(repeating: ".", count: barWidth - peakCells)
  }

  /// One line for a level reading.
  public func line(for reading: LevelReading) -> String {
    let time = pad(DecimalFormatting.fixed(reading.time, places: 2), 8)
    let evidence = reading.talkEvidence
    let loudness =
      reading.loudness.map {
        "  M \(level($0.momentaryLUFS))  S \(level($0.shortTermLUFS)) LUFS"
      } ?? ""
    return
      "\(time) s  [\(bar(peak: reading.meterDecibels ?? reading.peakDecibels, rms: reading.rmsDecibels))]  peak \(level(reading.peakDecibels))  rms \(level(reading.rmsDecibels)) dBFS\(loudness)  \(reading.isTalking ? "TALK   " : "silence")  speech \(level(evidence.speechDecibels))  open \(level(evidence.openDecibels))  floor \(level(evidence.noiseFloorDecibels))"
  }

  /// The closing lines: talk segments and totals.
  public func summaryLines(_ summary: MeterSummary, segments: [(start: Double, end: Double)])
    -> [String]
  {
    var lines = [String]()
    if segments.isEmpty {
      lines.append("No talk detected.")
    } else {
      lines.append("Talk segments:")
      for segment in segments {
        let start = pad(DecimalFormatting.fixed(segment.start, places: 2), 8)
        let end = pad(DecimalFormatting.fixed(segment.end, places: 2), 8)
        let length = DecimalFormatting.fixed(segment.end - segment.start, places: 2)
        lines.append("  \(start) s – \(end) s  (\(length) s)")
      }
    }
    lines.append(
      "Duration \(DecimalFormatting.fixed(summary.duration, places: 2)) s, peak \(level(summary.peakDecibels)) dBFS, RMS \(level(summary.rmsDecibels)) dBFS, talk \(DecimalFormatting.fixed(summary.talkSeconds, places: 2)) s in \(summary.talkSegments) segment\(summary.talkSegments == 1 ? "" : "s")"
    )
    if let loudness = summary.loudness {
      lines.append(
        "Loudness: integrated \(trimmed(loudness.integratedLUFS)) LUFS, range \(trimmed(loudness.loudnessRangeLU)) LU, true peak \(trimmed(loudness.truePeakDBTP)) dBTP, momentary max \(trimmed(loudness.momentaryMaxLUFS)) LUFS, short-term max \(trimmed(loudness.shortTermMaxLUFS)) LUFS"
      )
    }
    if summary.channels.count > 1 {
      for (index, channel) in summary.channels.enumerated() {
        lines.append(
          "  channel \(index + 1): peak \(level(channel.peakDecibels)) dBFS, RMS \(level(channel.rmsDecibels)) dBFS"
        )
      }
    }
    return lines
  }

  private func level(_ value: Double?) -> String {
    pad(value.map { DecimalFormatting.fixed($0, places: 1) } ?? "-inf", 6)
  }

  private func trimmed(_ value: Double?) -> String {
    value.map { DecimalFormatting.fixed($0, places: 1) } ?? "-inf"
  }

  private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
  }
}
