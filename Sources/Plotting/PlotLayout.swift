/// A rectangle in pixels (x to the right, y down), whole pixels.
public struct PixelRect: Sendable, Equatable {
  public var x: Int
  public var y: Int
  public var width: Int
  public var height: Int

  public var maxX: Int { x + width }
  public var maxY: Int { y + height }
}

/// Where everything goes on a plot `width` × `height` pixels: the level
/// panel above the spectrogram, both over the same time axis, margins for
/// the axes' labels, the colour legend on the right.
public struct PlotLayout: Sendable, Equatable {
  public let width: Int
  public let height: Int
  /// The level timeline: dBFS from `levelRange` bottom to top.
  public let levels: PixelRect
  /// The spectrogram: 0 Hz at the bottom row to the highest frequency at the top.
  public let spectrogram: PixelRect
  /// The colour legend of the spectrogram.
  public let legend: PixelRect
  /// dBFS at the bottom and the top of the level panel.
  public static let levelRange = (low: -60.0, high: 0.0)

  public static let smallest = (width: 320, height: 240)

  public init(width: Int, height: Int) {
    precondition(width >= Self.smallest.width && height >= Self.smallest.height)
    self.width = width
    self.height = height
    let left = 64
    let right = 84
    let top = 36
    let bottom = 44
    let gap = 26
    let plotWidth = width - left - right
    let available = height - top - bottom - gap
    let levelHeight = available * 2 / 5
    levels = PixelRect(x: left, y: top, width: plotWidth, height: levelHeight)
    spectrogram = PixelRect(
      x: left, y: top + levelHeight + gap, width: plotWidth, height: available - levelHeight)
    legend = PixelRect(
      x: width - right + 24, y: spectrogram.y, width: 14, height: spectrogram.height)
  }

  /// The x of `time` on the shared time axis of a `duration`-second plot.
  public func x(of time: Double, duration: Double) -> Double {
    Double(levels.x) + time / max(duration, 1e-9) * Double(levels.width)
  }

  /// The y of `decibels` in the level panel.
  public func y(ofLevel decibels: Double) -> Double {
    let range = Self.levelRange
    let fraction =
      (min(range.high, max(range.low, decibels)) - range.low) / (range.high - range.low)
    return Double(levels.maxY) - fraction * Double(levels.height)
  }
}
