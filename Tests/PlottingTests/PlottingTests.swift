import Plotting
import Testing

@Suite struct PlottingTests {
  struct Count: ColumnValue {
    var total: Double
    mutating func merge(_ next: Count) { total += next.total }
  }

  /// Three hours of readings every 10 ms, with no length known beforehand,
  /// stay within the capacity, and merging loses nothing.
  @Test func threeHoursStayWithinTheColumnsAndKeepEveryValue() {
    var columns = TimeColumns<Count>(capacity: 3000, secondsPerColumn: 0.001)
    let readings = 3 * 3600 * 100
    for index in 0..<readings { columns.add(Count(total: 1), at: Double(index) * 0.01) }
    #expect(columns.columns.count <= 3000)
    #expect(columns.columns.count >= 1500)
    let total = columns.columns.reduce(0) { $0 + ($1?.total ?? 0) }
    #expect(total == Double(readings))
    // Each column covers the same time, so each holds the same count.
    let perColumn = columns.secondsPerColumn / 0.01
    #expect(abs((columns.columns[100]?.total ?? 0) - perColumn) <= 1)
  }

  @Test func aRangeMergesTheColumnsStartingInIt() {
    var columns = TimeColumns<Count>(capacity: 100, secondsPerColumn: 1)
    for second in 0..<10 { columns.add(Count(total: Double(second)), at: Double(second)) }
    let merged: Double = columns.value(from: 2, to: 5)?.total ?? -1
    #expect(merged == 9)
    #expect(columns.value(from: 20, to: 30) == nil)
  }

  @Test func ticksAreRoundStepsCoveringTheSpan() {
    #expect(AxisTicks.step(span: 11.7, target: 16) == 1)
    #expect(AxisTicks.step(span: 10_800, target: 16) == 1000)
    #expect(AxisTicks.step(span: 0.9, target: 10) == 0.1)
    #expect(AxisTicks.ticks(span: 24, target: 5) == [0, 5, 10, 15, 20])
    #expect(AxisTicks.label(5) == "5" && AxisTicks.label(0.5) == "0.5")
  }

  /// The strongest colour is the brightest, at every step of the scale.
  @Test func colourGetsBrighterAlongTheScale() {
    var last = -1.0
    for step in 0...100 {
      let colour = ColourScale.colour(Double(step) / 100)
      let brightness = colour.red + colour.green + colour.blue
      #expect(brightness > last)
      last = brightness
    }
  }

  @Test func theOutputsExtensionPicksTheFormat() {
    #expect(PlotFormat(path: "a/b.PNG") == .png)
    #expect(PlotFormat(path: "plot.svg") == .svg)
    #expect(PlotFormat(path: "plot.pdf") == .pdf)
    #expect(PlotFormat(path: "plot.jpg") == nil)
    #expect(PlotFormat(path: "plot") == nil)
  }

  @Test func theLayoutSharesOneTimeAxisAndFitsThePicture() {
    let layout = PlotLayout(width: 1600, height: 900)
    #expect(
      layout.levels.x == layout.spectrogram.x && layout.levels.width == layout.spectrogram.width)
    #expect(layout.levels.maxY < layout.spectrogram.y)
    #expect(layout.spectrogram.maxY < 900 && layout.legend.maxX < 1600)
    #expect(
      layout.x(of: 5, duration: 10) == Double(layout.levels.x) + Double(layout.levels.width) / 2)
    #expect(layout.y(ofLevel: 0) == Double(layout.levels.y))
    #expect(layout.y(ofLevel: -90) == Double(layout.levels.maxY))
  }
}
