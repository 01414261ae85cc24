/// The peak, RMS and meter reading of each metered channel over one
/// interval, stored inline for up to `capacity` channels so a reading is
/// built and passed between threads without allocation (channels beyond
/// the capacity are left out; the loudest-channel values still cover them).
/// Levels are in dBFS, `nil` for silence.
public struct ChannelReadings: Sendable, Equatable, BitwiseCopyable {
  /// Most channels held.
  public static let capacity = 8
  /// Channels held.
  public private(set) var count = 0
  private var peaks = SIMD8<Float>(repeating: -.infinity)
  private var rmsLevels = SIMD8<Float>(repeating: -.infinity)
  private var meters = SIMD8<Float>(repeating: -.infinity)

  public init() {}

  /// Adds the next channel's levels; ignored once `capacity` channels are held.
  public mutating func append(peak: Double?, rms: Double?, meter: Double?) {
    guard count < Self.capacity else { return }
    peaks[count] = Float(peak ?? -.infinity)
    rmsLevels[count] = Float(rms ?? -.infinity)
    meters[count] = Float(meter ?? -.infinity)
    count += 1
  }

  /// Peak of `channel` (0-based, below `count`) in dBFS.
  public func peakDecibels(_ channel: Int) -> Double? { Self.level(peaks[channel]) }
  /// RMS of `channel` in dBFS.
  public func rmsDecibels(_ channel: Int) -> Double? { Self.level(rmsLevels[channel]) }
  /// Meter reading of `channel` under the chosen ballistics in dBFS.
  public func meterDecibels(_ channel: Int) -> Double? { Self.level(meters[channel]) }

  private static func level(_ value: Float) -> Double? {
    value == -.infinity ? nil : Double(value)
  }
}
