/// The spectrogram's colours: black through purple, red and orange to pale
/// yellow, brighter (r + g + b) at every step, so the strongest is the
/// brightest in colour and in grey.
public enum ColourScale {
  private static let stops: [(Double, Double, Double)] = [
    (0, 0, 4), (40, 11, 84), (101, 21, 110), (159, 42, 99), (212, 72, 66), (245, 125, 21),
    (250, 193, 39), (252, 255, 164),
  ]

  /// The colour at `fraction` (0 the weakest, 1 the strongest), each
  /// component 0…1.
  public static func colour(_ fraction: Double) -> (red: Double, green: Double, blue: Double) {
    let position = min(1, max(0, fraction.isNaN ? 0 : fraction)) * Double(stops.count - 1)
    let index = min(stops.count - 2, Int(position))
    let t = position - Double(index)
    let (r0, g0, b0) = stops[index]
    let (r1, g1, b1) = stops[index + 1]
    return ((r0 + (r1 - r0) * t) / 255, (g0 + (g1 - g0) * t) / 255, (b0 + (b1 - b0) * t) / 255)
  }
}
