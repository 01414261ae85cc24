import Foundation
import TestSupport
import Testing

@testable import Plotting

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

/// Data no real file holds, and outputs that fail: every loop ends, every
/// failure is named, nothing half-written is left.
@Suite struct HostilePlottingTests {
  func temporaryDirectory() throws -> URL {
    try ScratchDirectory.untilExit("plotting")
  }

  /// Plot data whose every value is infinite: absurd samples (1e38)
  /// overflow the spectrum's power.
  func overflowingData() -> PlotData {
    var data = PlotData(
      title: "absurd", sampleRate: 48_000, channelCount: 1,
      levels: TimeColumns(capacity: 100, secondsPerColumn: 0.01),
      spectrum: TimeColumns(capacity: 100, secondsPerColumn: 0.01), spectrumRows: 8,
      maximumFrequency: 24_000, hasLoudness: false)
    data.duration = 1
    for index in 0..<100 {
      let time = Double(index) * 0.01
      data.levels.add(
        LevelColumn(peak: .infinity, sumOfSquares: .infinity, frames: 480, loudnessLUFS: nil),
        at: time)
      data.spectrum.add(
        SpectrumColumn(rowPower: [Float](repeating: .infinity, count: 8), transforms: 1), at: time)
    }
    return data
  }

  @Test func anOverflowingSpectrumIsStillDrawn() throws {
    let directory = try temporaryDirectory()
    let path = directory.appendingPathComponent("absurd.png").path
    try PlotRenderer(layout: PlotLayout(width: 400, height: 300)).write(
      overflowingData(), to: path, as: .png)
    #expect(FileManager.default.fileExists(atPath: path))
  }

  @Test func transformsFollowTheAudioNotTheClaimedRate() {
    #expect(SpectrogramBuilder(sampleRate: 48_000, rows: 400).frameLength == 2_048)
    let claimed = SpectrogramBuilder(sampleRate: 2_147_483_647, rows: 400)
    #expect(claimed.frameLength <= SpectrogramBuilder.longestFrame)
    let short = SpectrogramBuilder(sampleRate: 2_147_483_647, rows: 400, frameCount: 1_000)
    #expect(short.frameLength <= 1_024)
  }

  @Test func ticksAndColumnsStayBoundedForAnyValue() {
    #expect(AxisTicks.ticks(span: .infinity, target: 16).count <= 48)
    #expect(AxisTicks.ticks(span: 1e300, target: 16).count <= 48)
    #expect(AxisTicks.label(0.1 * 3) == "0.3")
    #expect(AxisTicks.label(0.6000000000000001) == "0.6")
    var columns = TimeColumns<PlottingTests.Count>(capacity: 10, secondsPerColumn: 1)
    columns.add(PlottingTests.Count(total: 1), at: .infinity)
    columns.add(PlottingTests.Count(total: 1), at: .nan)
    columns.add(PlottingTests.Count(total: 1), at: 1e300)
    columns.add(PlottingTests.Count(total: 1), at: 3)
    #expect(columns.columns.compactMap { $0?.total }.reduce(0, +) == 1)
    #expect(columns.value(from: 0, to: .infinity)?.total == 1)
  }

  @Test func aPlotIsWrittenWholeOrNotAtAll() throws {
    let directory = try temporaryDirectory()
    let missing = directory.appendingPathComponent("missing/p.png").path
    do {
      _ = try PlotOutputFile(path: missing)
      Issue.record("a file was opened in a missing directory")
    } catch {
      #expect(error.description.contains("does not exist"), "\(error)")
    }
    let path = directory.appendingPathComponent("p.svg").path
    let output = try PlotOutputFile(path: path, keepingBack: PlotOutputFile.svgTailLength)
    Array("<svg>drawing</svg>\n".utf8).withUnsafeBytes { _ = output.write($0) }
    // Until it is committed, only a hidden temporary file exists.
    #expect(!FileManager.default.fileExists(atPath: path))
    try output.commit(
      ending: try SVGTextLayer.ending(output.tail, adding: [.init(x: 1, y: 2, text: "1 & 2")]))
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.hasPrefix("<svg>drawing") && text.hasSuffix("</g>\n</svg>\n"), "\(text)")
    #expect(text.contains("<text x=\"1.0\" y=\"2.0\">1 &amp; 2</text>"), "\(text)")
    // A plot given up leaves nothing.
    let abandoned = try PlotOutputFile(path: directory.appendingPathComponent("q.png").path)
    abandoned.discard()
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["p.svg"])
  }
}
