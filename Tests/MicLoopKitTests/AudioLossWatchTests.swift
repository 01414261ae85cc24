import Testing

@testable import MicLoopKit

/// What a pause of the process or an underrun's recovery cost, from the
/// arrivals of audio around it: a device that held nothing loses the whole
/// pause, a server that held part of it loses the rest once its burst has
/// arrived, one that held everything loses nothing, and cycles without a
/// pause never report.
@Suite struct AudioLossWatchTests {
  static let rate = 48_000.0

  /// Arrivals every 20 ms up to `seconds`, from `start`; returns what was reported.
  static func run(
    _ loss: inout AudioLossWatch, from start: Double, frames: inout Int64, seconds: Double,
    burst: Int64 = 0
  ) -> [Double] {
    var reports = [Double]()
    var time = start
    var backlog = burst
    while time < start + seconds {
      time += 0.02
      let taken = min(backlog, Int64(0.2 * rate))
      backlog -= taken
      frames += Int64(0.02 * rate) + taken
      if let lost = loss.observe(frames: frames, at: time) { reports.append(lost.seconds) }
    }
    return reports
  }

  @Test(arguments: [0.0, 2.0, 5.0, 8.0])
  func whatTheServerCouldNotHoldIsLost(held: Double) {
    var loss = AudioLossWatch(sampleRate: Self.rate)
    var frames: Int64 = 0
    #expect(Self.run(&loss, from: 0, frames: &frames, seconds: 2).isEmpty)
    // Held for 8 s: the first cycle after it brings 20 ms; the server's
    // backlog (`held` seconds) follows at ten times real time.
    frames += Int64(0.02 * Self.rate)
    #expect(loss.observe(frames: frames, at: 10.02) == nil)
    loss.suspect(.pause)
    let reports = Self.run(
      &loss, from: 10.02, frames: &frames, seconds: 4, burst: Int64(held * Self.rate))
    if held >= 8 {
      #expect(reports.isEmpty, "\(reports)")
    } else {
      #expect(reports.count == 1, "\(reports)")
      #expect(abs((reports.first ?? 0) - (8 - held)) < 0.03, "\(reports)")
    }
  }

  @Test func aPauseIsReportedOnce() {
    var loss = AudioLossWatch(sampleRate: Self.rate)
    var frames: Int64 = 0
    _ = Self.run(&loss, from: 0, frames: &frames, seconds: 1)
    #expect(loss.observe(frames: frames, at: 4) == nil)
    loss.suspect(.pause)
    let reports = Self.run(&loss, from: 4, frames: &frames, seconds: 10)
    #expect(reports.count == 1 && abs(reports[0] - 2.98) < 0.03, "\(reports)")
  }

  /// Playback underran and the loop then waited 2 s on the restarted
  /// stream while the capture side delivered nothing (a sound server's idle
  /// sink): the 2 s are lost, and said to be the underrun's; an underrun
  /// the stream did not stall on costs nothing.
  @Test(arguments: [0.0, 2.0])
  func anUnderrunThatStalledTheLoopIsMeasured(stall: Double) {
    var loss = AudioLossWatch(sampleRate: Self.rate)
    var frames: Int64 = 0
    _ = Self.run(&loss, from: 0, frames: &frames, seconds: 1)
    loss.suspect(.underrun)
    var reports = [(seconds: Double, cause: AudioLossCause)]()
    if let lost = loss.observe(frames: frames, at: 1.0 + stall) { reports.append(lost) }
    var time = 1.0 + stall
    while time < 4 + stall {
      time += 0.02
      frames += Int64(0.02 * Self.rate)
      if let lost = loss.observe(frames: frames, at: time) { reports.append(lost) }
    }
    if stall == 0 {
      #expect(reports.isEmpty, "\(reports)")
    } else {
      #expect(reports.count == 1, "\(reports)")
      #expect(abs((reports.first?.seconds ?? 0) - stall) < 0.03, "\(reports)")
      #expect(reports.first?.cause == .underrun)
    }
  }

  /// The restarted stream never came back before the job ended (a loaded
  /// server): the stall is reported in pieces while it lasts, and the rest
  /// when the job ends, so the pieces add up to all of it.
  @Test(arguments: [2.0, 4.5, 9.0])
  func aStallThatOutlastsTheBurstIsReportedWhole(stall: Double) {
    var loss = AudioLossWatch(sampleRate: Self.rate)
    var frames: Int64 = 0
    _ = Self.run(&loss, from: 0, frames: &frames, seconds: 1)
    loss.suspect(.underrun)
    var reports = [Double]()
    var time = 1.0
    while time < 1 + stall {
      time += 0.02
      if let lost = loss.observe(frames: frames, at: time) { reports.append(lost.seconds) }
    }
    if let lost = loss.finish(frames: frames, at: time) { reports.append(lost.seconds) }
    #expect(abs(reports.reduce(0, +) - stall) < 0.05, "\(reports)")
    #expect(loss.finish(frames: frames, at: time + 1) == nil)
  }
}
