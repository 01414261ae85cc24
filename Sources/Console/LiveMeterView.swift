import SignalDSP

/// Draws the live meter on a terminal: one line, redrawn in place, with a
/// level bar, a peak-hold marker, dBFS and TALK/silence. Control thread.
public struct LiveMeterView {
  /// Seconds a peak is held before it falls back.
  public var peakHoldTime = 1.5
  private var heldPeak: Double?
  private var heldAt = 0.0
  private let format = HumanMeterFormat()

  public init() {}

  /// The line for a reading (without the carriage return).
  public mutating func line(for reading: LevelReading, status: String = "") -> String {
    if let peak = reading.peakDecibels,
      peak >= heldPeak ?? -.infinity || reading.time - heldAt > peakHoldTime
    {
      heldPeak = peak
      heldAt = reading.time
    } else if reading.peakDecibels == nil && reading.time - heldAt > peakHoldTime {
      heldPeak = nil
    }
    var bar = Array(
      format.bar(peak: reading.meterDecibels ?? reading.peakDecibels, rms: reading.rmsDecibels))
    if let held = heldPeak {
      let fraction = (held - format.floorDecibels) / -format.floorDecibels
      let cell = min(format.barWidth - 1, max(0, Int(fraction * Double(format.barWidth)) - 1))
      bar[cell] = "|"
    }
    func level(_ value: Double?) -> String {
      let text = value.map { DecimalFormatting.fixed($0, places: 1) } ?? "-inf"
      return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }
    let time = DecimalFormatting.fixed(reading.time, places: 1)
    let evidence = reading.talkEvidence
    return
      "\(time) s [\(String(bar))] rms \(level(reading.rmsDecibels)) peak \(level(reading.peakDecibels)) hold \(level(heldPeak)) dBFS  \(reading.isTalking ? "TALK   " : "silence") speech \(level(evidence.speechDecibels)) open \(level(evidence.openDecibels)) floor \(level(evidence.noiseFloorDecibels))\(status)"
  }
}
