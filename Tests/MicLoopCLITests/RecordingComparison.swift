import Testing

/// How faithfully a live recording holds a played signal, for the
/// sample-exact recording tests on every server.
///
/// Both are aligned by the onset of sound (the first sample above 0.01)
/// and walked together: every played sample must come back exactly, in
/// order. A server whose feeding stream ran dry inserts exact silence into
/// the capture; that gap is the feeder's, not the recorder's, so zeros in
/// the recording are passed over and counted. A recorder that drops or
/// alters samples still fails.
struct RecordingComparison {
  /// Played samples from the onset on.
  var expected = 0
  /// Of those, how many came back in order.
  var matched = 0
  /// Zeros in the recording between matched samples.
  var insertedSilence = 0
  /// The first played sample that came back different, and where.
  var mismatch: (played: Int, captured: Int)?

  /// `nil` when either signal never rises above the onset threshold.
  init?(played: [Float], captured: [Float]) {
    guard let playedOnset = played.firstIndex(where: { abs($0) > 0.01 }),
      let capturedOnset = captured.firstIndex(where: { abs($0) > 0.01 })
    else { return nil }
    expected = played.count - playedOnset
    var playedIndex = playedOnset
    var capturedIndex = capturedOnset
    while playedIndex < played.count && capturedIndex < captured.count {
      if abs(played[playedIndex] - captured[capturedIndex]) < 1e-6 {
        playedIndex += 1
      } else if captured[capturedIndex] == 0 {
        insertedSilence += 1
      } else {
        mismatch = (playedIndex, capturedIndex)
        break
      }
      capturedIndex += 1
    }
    matched = playedIndex - playedOnset
  }

  /// Everything played came back, with less than a second of silence inserted.
  var isExact: Bool { mismatch == nil && matched == expected && insertedSilence < 48_000 }

  var description: String {
    "\(matched) of \(expected) samples came back, \(insertedSilence) zeros inserted"
      + (mismatch.map { ", played sample \($0.played) differs from recorded sample \($0.captured)" }
        ?? "")
  }

  /// `recording` against what another recorder (`reference`) took from the
  /// same source at the same time, up to the reference's last sound: when
  /// the server itself dropped part of a feed and filled the gap (PipeWire
  /// does when a feeding client misses its cycle), both recorders hold the
  /// same altered stream, and only the recorder that differs is at fault.
  static func compare(reference: String, recording: String) throws -> RecordingComparison? {
    let heard = try MicLoopBinary.samples(reference)
    guard let end = heard.lastIndex(where: { abs($0) > 0.01 }) else { return nil }
    return RecordingComparison(
      played: Array(heard[...end]), captured: try MicLoopBinary.samples(recording))
  }

  /// `played` and `recording` (files on disk) compared; `nil` when either is silent.
  static func compare(played: String, recording: String) throws -> RecordingComparison? {
    RecordingComparison(
      played: try MicLoopBinary.samples(played), captured: try MicLoopBinary.samples(recording))
  }

  /// Expects `recording` (made by the job that gave `result`) to hold every
  /// sample of `played`, both files on disk.
  static func expectExact(played: String, recording: String, result: MicLoopBinary.Result) throws {
    #expect(result.status == 0, "\(result.errorOutput)")
    let comparison = try #require(
      try compare(played: played, recording: recording),
      "no sound recorded; micloop said: \(result.output) \(result.errorOutput)")
    #expect(comparison.isExact, "\(comparison.description); \(result.output)")
  }

  /// Records with `attempt` (the job's result) and compares, once more when
  /// the recording fell short and a loss was reported (see `LiveAttempts`);
  /// then expects every sample of `played` in `recording`, or, when a
  /// `reference` recorder ran beside it and `played` did not reach the
  /// server intact, every sample the reference heard.
  static func expectExact(
    played: String, recording: String, reference: String? = nil,
    recordedBy attempt: () throws -> MicLoopBinary.Result
  ) throws {
    func heardAsTheReference() -> Bool {
      guard let reference else { return false }
      return (try? compare(reference: reference, recording: recording))??.isExact ?? false
    }
    let result = try LiveAttempts.run {
      let result = try attempt()
      let isExact = (try? compare(played: played, recording: recording))??.isExact ?? false
      return (result, isExact || heardAsTheReference(), result.output + result.errorOutput)
    }
    if let reference, !((try? compare(played: played, recording: recording))??.isExact ?? false),
      let served = try compare(reference: reference, recording: recording),
      !((try? compare(played: played, recording: reference))??.isExact ?? false)
    {
      // The feed reached the server altered; micloop must hold what it served.
      #expect(result.status == 0, "\(result.errorOutput)")
      #expect(served.isExact, "against the reference: \(served.description); \(result.output)")
      return
    }
    try expectExact(played: played, recording: recording, result: result)
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
}
