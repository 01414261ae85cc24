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
  /// the recording fell short and micloop reported a capture overrun (see
  /// `LiveAttempts`); then expects every sample of `played` in `recording`.
  static func expectExact(
    played: String, recording: String, recordedBy attempt: () throws -> MicLoopBinary.Result
  ) throws {
    let result = try LiveAttempts.run {
      let result = try attempt()
      let isExact = (try? compare(played: played, recording: recording))??.isExact ?? false
      return (result, isExact, result.output + result.errorOutput)
    }
    try expectExact(played: played, recording: recording, result: result)
  }
}
