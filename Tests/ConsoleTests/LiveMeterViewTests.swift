import Console
import Foundation
import Metering
import Testing

@Suite struct LiveMeterViewTests {
  /// A reading of two channels at the given peaks (RMS 3 dB lower each).
  func reading(time: Double, peaks: [Double?], talking: Bool = false) -> LevelReading {
    var channels = ChannelReadings()
    for peak in peaks { channels.append(peak: peak, rms: peak.map { $0 - 3 }, meter: peak) }
    let loudest = peaks.compactMap { $0 }.max()
    return LevelReading(
      time: time, peakDecibels: loudest, rmsDecibels: loudest.map { $0 - 3 },
      envelopeDecibels: nil, isTalking: talking,
      talkEvidence: TalkEvidence(
        speechDecibels: -30, noiseFloorDecibels: -50, openDecibels: -40, closeDecibels: -44),
      channels: channels)
  }

  /// Column of the first `character` in `line`.
  func column(_ character: Character, in line: String) -> Int? {
    line.firstIndex(of: character).map { line.distance(from: line.startIndex, to: $0) }
  }

  @Test func oneBarPerChannelWithTheTalkRowScaleAndStatus() throws {
    var view = LiveMeterView()
    let lines = view.lines(for: reading(time: 1, peaks: [-10, -30], talking: true))
    #expect(lines.count == 5)
    #expect(lines.allSatisfy { $0.count < 80 })
    // 60 cells, one per dB from −60: the −10 dB peak fills 50, RMS (−13) 47.
    let first = lines[0]
    #expect(first.hasPrefix("   1["))
    #expect(first.filter { $0 == "#" }.count == 47)
    #expect(first.filter { $0 == "=" }.count == 2)  // and the hold mark in the 50th
    #expect(column("|", in: first) == 5 + 49)
    #expect(lines[1].filter { $0 == "#" }.count == 27)
    #expect(column("|", in: lines[1]) == 5 + 29)
    // Speech at −30 fills 30 cells; floor, close and open sit at their levels.
    let talk = lines[2]
    #expect(talk.hasPrefix("talk["))
    #expect(column("f", in: talk.dropFirst(5).description) == 9)
    #expect(column("c", in: talk.dropFirst(5).description) == 15)
    #expect(column("o", in: talk.dropFirst(5).description) == 19)
    #expect(talk.filter { $0 == "~" }.count == 27)
    #expect(column("-", in: lines[3]) == 5)
    #expect(lines[3].contains("-30") && lines[3].hasSuffix("0 dBFS"))
    #expect(lines[4].contains("TALK"))
    #expect(lines[4].contains("open -40.0"))
  }

  @Test func clipLatchesUntilCleared() {
    var view = LiveMeterView()
    _ = view.lines(for: reading(time: 1, peaks: [0, -20]))
    let later = view.lines(for: reading(time: 5, peaks: [-40, -40]))
    #expect(later[0].hasSuffix("CLIP"))
    #expect(!later[1].contains("CLIP"))
    view.clearClips()
    let cleared = view.lines(for: reading(time: 6, peaks: [-40, -40]))
    #expect(!cleared[0].contains("CLIP"))
  }

  @Test func heldPeakFallsBackAfterTheHoldTime() {
    var view = LiveMeterView()
    _ = view.lines(for: reading(time: 1, peaks: [-10]))
    let held = view.lines(for: reading(time: 2, peaks: [-40]))
    #expect(column("|", in: held[0]) == 5 + 49)
    let fallen = view.lines(for: reading(time: 2.6, peaks: [-40]))
    #expect(column("|", in: fallen[0]) == 5 + 19)
  }

  @Test func narrowTerminalsGetShorterBars() {
    var view = LiveMeterView()
    let lines = view.lines(for: reading(time: 1, peaks: [-10]), columns: 50)
    #expect(lines.allSatisfy { $0.count < 50 })
    #expect(lines[0].hasPrefix("  in["))
  }
}
