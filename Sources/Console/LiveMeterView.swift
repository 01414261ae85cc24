import Metering
import TextFormatting

/// Draws the live meter on a terminal as a block of lines redrawn in
/// place: one bar per metered channel (RMS `#`, meter reading `=`, held
/// peak `|`, latched clip), the talk detector's speech level with its
/// noise floor `f`, close `c` and open `o` thresholds on the same scale,
/// a dB scale, and a status line with the numbers and TALK. Control thread.
public struct LiveMeterView {
  /// Seconds a peak is held before it falls back.
  public var peakHoldTime = 1.5
  /// Lowest level the bars show, in dBFS.
  public var floorDecibels = -60.0
  /// A sample at or above this peak level (dBFS) latches the channel's clip indicator.
  public var clipDecibels = -0.01
  private var held = [HeldPeak]()
  private var clipped = [Bool]()
  /// Columns before a bar (label and bracket) and after it (number, clip).
  private static let labelWidth = 5
  private static let trailerWidth = 13

  private struct HeldPeak {
    var level: Double?
    var at = 0.0
  }

  public init() {}

  /// Cells in each bar for a terminal `columns` wide: one per dB on an
  /// 80-column terminal, fewer when narrower.
  public func barWidth(columns: Int) -> Int {
    max(10, min(Int(-floorDecibels), columns - Self.labelWidth - Self.trailerWidth - 1))
  }

  /// Unlatches every clip indicator.
  public mutating func clearClips() {
    for index in clipped.indices { clipped[index] = false }
  }

  /// The lines for a reading, each shorter than `columns`; `status` ends
  /// the last line (gain, mute).
  public mutating func lines(for reading: LevelReading, status: String = "", columns: Int = 80)
    -> [String]
  {
    let channels = Self.channelLevels(reading)
    if held.count != channels.count {
      held = Array(repeating: HeldPeak(), count: channels.count)
      clipped = Array(repeating: false, count: channels.count)
    }
    let width = barWidth(columns: columns)
    var lines = [String]()
    for (index, channel) in channels.enumerated() {
      hold(channel.peak, channel: index, at: reading.time)
      if let peak = channel.peak, peak >= clipDecibels { clipped[index] = true }
      let label = channels.count == 1 ? "in" : String(index + 1)
      var cells = Array(bar(rms: channel.rms, reading: channel.meter ?? channel.peak, width: width))
      if let level = held[index].level, level >= floorDecibels {
        cells[cell(level, width: width)] = "|"
      }
      lines.append(
        pad(label, Self.labelWidth - 1) + "[" + String(cells) + "]"
          + pad(number(channel.meter ?? channel.peak), 7)
          + (clipped[index] ? "  CLIP" : ""))
    }
    lines.append(
      pad("talk", Self.labelWidth - 1) + "[" + talkBar(reading.talkEvidence, width: width) + "]"
        + pad(number(reading.talkEvidence.speechDecibels), 7))
    lines.append(String(repeating: " ", count: Self.labelWidth) + scale(width: width) + " dBFS")
    if let loudness = reading.loudness { lines.append(loudnessLine(loudness)) }
    lines.append(statusLine(reading, status: status))
    return lines.map { $0.count < columns ? $0 : String($0.prefix(columns - 1)) }
  }

  /// The numbers under the bars: stream time, TALK or silence, the
  /// loudest channel's peak and RMS, and the talk detector's floor and
  /// thresholds (all dBFS), then `status`.
  public func statusLine(_ reading: LevelReading, status: String = "") -> String {
    let evidence = reading.talkEvidence
    let time = pad(DecimalFormatting.fixed(reading.time, places: 1), 5)
    return
      "\(time) s  \(reading.isTalking ? "TALK   " : "silence") peak \(value(reading.peakDecibels)) rms \(value(reading.rmsDecibels))  floor \(value(evidence.noiseFloorDecibels)) close \(value(evidence.closeDecibels)) open \(value(evidence.openDecibels))\(status)"
  }

  /// Momentary and short-term loudness, when measured.
  private func loudnessLine(_ loudness: MomentaryLoudness) -> String {
    String(repeating: " ", count: 9)
      + "momentary \(value(loudness.momentaryLUFS)) short-term \(value(loudness.shortTermLUFS)) LUFS"
  }

  private mutating func hold(_ peak: Double?, channel: Int, at time: Double) {
    var slot = held[channel]
    if let peak, peak >= slot.level ?? -.infinity || time - slot.at > peakHoldTime {
      slot = HeldPeak(level: peak, at: time)
    } else if peak == nil && time - slot.at > peakHoldTime {
      slot.level = nil
    }
    held[channel] = slot
  }

  /// Each channel's peak, RMS and meter reading; the loudest-channel
  /// values when the reading carries no channels.
  private static func channelLevels(_ reading: LevelReading)
    -> [(peak: Double?, rms: Double?, meter: Double?)]
  {
    let channels = reading.channels
    guard channels.count > 0 else {
      return [(reading.peakDecibels, reading.rmsDecibels, reading.meterDecibels)]
    }
    return (0..<channels.count).map {
      (
        channels.peakDecibels($0), channels.rmsDecibels($0),
        // Loudness ballistics read all channels at once.
        channels.count == 1 ? reading.meterDecibels : channels.meterDecibels($0)
      )
    }
  }

  /// Cells filled by a level.
  private func filled(_ level: Double?, width: Int) -> Int {
    guard let level else { return 0 }
    let fraction = (level - floorDecibels) / -floorDecibels
    return max(0, min(width, Int((fraction * Double(width)).rounded())))
  }

  /// The cell a marker at `level` goes in.
  private func cell(_ level: Double, width: Int) -> Int {
    max(0, min(width - 1, filled(level, width: width) - 1))
  }

  private func bar(rms: Double?, reading: Double?, width: Int) -> String {
    let rmsCells = filled(rms, width: width)
    let readingCells = max(rmsCells, filled(reading, width: width))
    return String(repeating: "#", count: rmsCells)
      + String(repeating: "=", count: readingCells - rmsCells)
      + String(repeating: ".", count: width - readingCells)
  }

  private func talkBar(_ evidence: TalkEvidence, width: Int) -> String {
    let speechCells = filled(evidence.speechDecibels, width: width)
    var cells = Array(
      String(repeating: "~", count: speechCells)
        + String(repeating: ".", count: width - speechCells))
    let markers: [(Double?, Character)] = [
      (evidence.noiseFloorDecibels, "f"), (evidence.closeDecibels, "c"),
      (evidence.openDecibels, "o"),
    ]
    for (level, mark) in markers {
      if let level, level >= floorDecibels { cells[cell(level, width: width)] = mark }
    }
    return String(cells)
  }

  /// Labels every 10 dB, each starting in the first cell above its level.
  private func scale(width: Int) -> String {
    var cells = Array(repeating: Character(" "), count: width + 4)
    var level = floorDecibels
    var nextFree = 0
    while level <= 0 {
      let label = Array(DecimalFormatting.fixed(level, places: 0))
      let start = filled(level, width: width)
      if start >= nextFree && start + label.count <= cells.count {
        for (offset, character) in label.enumerated() { cells[start + offset] = character }
        nextFree = start + label.count + 1
      }
      level += 10
    }
    return String(String(cells).reversed().drop(while: { $0 == " " }).reversed())
  }

  private func number(_ level: Double?) -> String { pad(value(level), 6) }

  private func value(_ level: Double?) -> String {
    level.map { DecimalFormatting.fixed($0, places: 1) } ?? "-inf"
  }

  private func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
