import Foundation
import Testing

/// How faithfully a live recording holds a played signal, for the
/// sample-exact recording tests on every server.
///
/// Both are aligned by the onset of sound (the first sample above 0.01)
/// and walked together: every played sample must come back exactly, in
/// order. A server whose feeding stream ran dry inserts exact silence into
/// the capture; that gap is the feeder's, not the recorder's, so zeros in
/// the recording are passed over and counted. A recorder that drops or
/// alters samples fails; with `allowingLoss`, played samples missing from
/// the recording are passed over and counted too (see `expectExact`), and
/// so are samples that come back twice: a JACK client that missed its
/// cycle leaves its port holding a period it already gave. An altered
/// sample, or one from further back, still fails.
struct RecordingComparison {
  /// Played samples from the onset on.
  var expected = 0
  /// Of those, how many came back in order.
  var matched = 0
  /// Zeros in the recording between matched samples.
  var insertedSilence = 0
  /// Played samples passed over (only `allowingLoss`).
  var lost = 0
  /// Played samples that came back a second time (only `allowingLoss`).
  var repeated = 0
  /// The first played sample that came back different, and where.
  var mismatch: (played: Int, captured: Int)?

  /// `nil` when either signal never rises above the onset threshold.
  init?(played: [Float], captured: [Float], allowingLoss: Bool = false) {
    guard let playedOnset = played.firstIndex(where: { abs($0) > 0.01 }),
      let capturedOnset = captured.firstIndex(where: { abs($0) > 0.01 })
    else { return nil }
    expected = played.count - playedOnset
    var playedIndex = playedOnset
    var capturedIndex = capturedOnset
    while playedIndex < played.count && capturedIndex < captured.count {
      if abs(played[playedIndex] - captured[capturedIndex]) < 1e-6 {
        playedIndex += 1
        matched += 1
      } else if captured[capturedIndex] == 0 {
        insertedSilence += 1
      } else if allowingLoss,
        let resumed = Self.resumption(
          of: captured, at: capturedIndex, in: played, after: playedIndex)
      {
        if resumed > playedIndex {
          lost += resumed - playedIndex
        } else {
          repeated += playedIndex - resumed
        }
        playedIndex = resumed
        continue
      } else {
        mismatch = (playedIndex, capturedIndex)
        break
      }
      capturedIndex += 1
    }
  }

  /// Where in `played`, from `repeatLimit` before `start` to a second
  /// after it, the 32 recorded samples from `index` on are found (noise
  /// does not repeat by chance).
  private static func resumption(
    of captured: [Float], at index: Int, in played: [Float], after start: Int
  ) -> Int? {
    let length = 32
    guard index + length <= captured.count else { return nil }
    let probe = captured[index..<index + length]
    for candidate in max(0, start - repeatLimit)..<min(played.count - length, start + 48_000)
    where candidate != start && played[candidate] == probe.first
      && played[candidate..<candidate + length].elementsEqual(probe)
    {
      return candidate
    }
    return nil
  }

  /// Everything played came back, with less than a second of silence inserted.
  var isExact: Bool {
    mismatch == nil && matched == expected && lost == 0 && repeated == 0 && insertedSilence < 48_000
  }

  /// How far back a repeated stretch may start: a few periods.
  static let repeatLimit = 4_096

  /// What came back came back unaltered and in order, less than half a
  /// second of it lost, repeated or filled with silence.
  var isInOrder: Bool {
    mismatch == nil && matched - repeated + lost == expected
      && insertedSilence + lost + repeated < 24_000
  }

  var description: String {
    "\(matched) of \(expected) samples came back, \(insertedSilence) zeros inserted"
      + (lost > 0 ? ", \(lost) lost" : "") + (repeated > 0 ? ", \(repeated) repeated" : "")
      + (mismatch.map { ", played sample \($0.played) differs from recorded sample \($0.captured)" }
        ?? "")
  }

  /// `played` and `recording` (files on disk) compared; `nil` when either is silent.
  static func compare(played: String, recording: String, allowingLoss: Bool = false) throws
    -> RecordingComparison?
  {
    RecordingComparison(
      played: try MicLoopBinary.samples(played), captured: try MicLoopBinary.samples(recording),
      allowingLoss: allowingLoss)
  }

  /// Expects `recording` (made by the job that gave `result`) to hold every
  /// sample of `played`, both files on disk.
  static func expectExact(played: String, recording: String, result: MicLoopBinary.Result) throws {
    try expect(try compare(played: played, recording: recording), isExact: true, result: result)
  }

  /// Expects the job that gave `result` to have ended well and `comparison`
  /// to be exact, or with `isExact` false in order.
  private static func expect(
    _ comparison: RecordingComparison?, isExact: Bool, result: MicLoopBinary.Result
  ) throws {
    #expect(result.status == 0, "\(result.errorOutput)")
    let comparison = try #require(
      comparison, "no sound recorded; micloop said: \(result.output) \(result.errorOutput)")
    if isExact {
      #expect(comparison.isExact, "\(comparison.description); \(result.output)")
    } else {
      #expect(
        comparison.isInOrder,
        "audio was lost and reported, and micloop's recording is not in order: \(comparison.description); \(result.output)"
      )
    }
  }

  /// Records with `attempt` (the job's result) and compares, once more when
  /// the recording fell short and a loss was reported (see `LiveAttempts`);
  /// then expects every sample of `played` in `recording`, or, when the
  /// second attempt too lost audio and said so, what it got unaltered and
  /// in order. A loss is reported by micloop (a capture overrun: a JACK
  /// client the server's clock left behind on a busy virtual machine
  /// misses its cycle's data) or, with a `reference` (another recorder of
  /// the same source at the same time), by the reference falling short too:
  /// the server lost audio on its way to its clients, as PipeWire's capture
  /// streams do under load without an xrun. A loss no one reported fails.
  static func expectExact(
    played: String, recording: String, reference: String? = nil,
    recordedBy attempt: () throws -> MicLoopBinary.Result
  ) throws {
    let (result, comparison, lossReported) = try LiveAttempts.run {
      let result = try attempt()
      let comparison = (try? compare(played: played, recording: recording)) ?? nil
      let serverLost =
        reference.map { ((try? compare(played: played, recording: $0)) ?? nil)?.isExact != true }
        ?? false
      let lost = serverLost || LiveAttempts.lostCapture(result.output + result.errorOutput)
      return ((result, comparison, lost), comparison?.isExact ?? false, lost)
    }
    guard lossReported, comparison?.isExact != true else {
      return try expect(comparison, isExact: true, result: result)
    }
    try expect(
      try compare(played: played, recording: recording, allowingLoss: true), isExact: false,
      result: result)
  }
}

@Suite struct RecordingComparisonTests {
  let played: [Float] = [0, 0, 0.5, -0.25, 0.125, 0.75, -0.5]

  @Test func aFaithfulRecordingIsExactWhereverItStarts() throws {
    let comparison = try #require(RecordingComparison(played: played, captured: [0] + played))
    #expect(comparison.isExact)
    #expect(comparison.matched == 5)
  }

  @Test func silenceAServerInsertedIsCountedNotBlamed() throws {
    let captured: [Float] = [0.5, -0.25, 0, 0, 0.125, 0.75, -0.5]
    let comparison = try #require(RecordingComparison(played: played, captured: captured))
    #expect(comparison.isExact)
    #expect(comparison.insertedSilence == 2)
  }

  @Test func aDroppedOrAlteredSampleFails() throws {
    let dropped: [Float] = [0.5, -0.25, 0.75, -0.5]
    let comparison = try #require(RecordingComparison(played: played, captured: dropped))
    #expect(!comparison.isExact)
    #expect(comparison.mismatch?.played == 4)
    let altered: [Float] = [0.5, -0.25, 0.126, 0.75, -0.5]
    #expect(RecordingComparison(played: played, captured: altered)?.isExact == false)
  }

  /// Allowing loss: samples missing are counted, altered or reordered fail.
  @Test func lossIsPassedOverOnlyWhenAllowedAndNothingElse() throws {
    let noise = (0..<2_000).map { Float(sin(Double($0) * 12.9898) * 0.5) }
    let gap = Array(noise[..<600]) + [Float](repeating: 0, count: 100) + Array(noise[900...])
    let lossy = try #require(RecordingComparison(played: noise, captured: gap, allowingLoss: true))
    #expect(lossy.isInOrder && !lossy.isExact)
    #expect(lossy.lost == 300 && lossy.insertedSilence == 100)
    #expect(RecordingComparison(played: noise, captured: gap)?.isInOrder == false)
    let swapped = Array(noise[..<600]) + Array(noise[900..<1_200]) + Array(noise[600..<900])
    #expect(
      RecordingComparison(played: noise, captured: swapped, allowingLoss: true)?.isInOrder == false)
  }

  /// A period given twice (a JACK client that missed its cycle) is counted
  /// with loss allowed; a stretch from further back still fails.
  @Test func aPeriodGivenTwiceIsCountedOnlyWhenLossIsAllowed() throws {
    let noise = (0..<20_000).map { Float(sin(Double($0) * 12.9898) * 0.5) }
    let twice = Array(noise[..<1_024]) + Array(noise[1_280..<1_536]) + Array(noise[1_280...])
    let lossy = try #require(
      RecordingComparison(played: noise, captured: twice, allowingLoss: true))
    #expect(lossy.isInOrder && !lossy.isExact)
    #expect(lossy.lost == 256 && lossy.repeated == 256)
    #expect(RecordingComparison(played: noise, captured: twice)?.isInOrder == false)
    let farBack = Array(noise[..<12_000]) + Array(noise[2_000..<2_400]) + Array(noise[12_000...])
    #expect(
      RecordingComparison(played: noise, captured: farBack, allowingLoss: true)?.isInOrder == false)
  }
}
