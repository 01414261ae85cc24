import AudioFiles
import Foundation
import Recording
import TestSupport
import Testing
import TonePlans

/// A trigger that reports later than its declared delay (a tone decoder
/// whose analysis dropped frames, a caller that reports late) loses no
/// audio: the look-back holds what is still undecided, up to
/// `largestBacklog`, and past that the recorder decides without the late
/// reports and says so.
@Suite struct LaggingTriggerTests {
  static let rate = RetentionTests.rate
  static let block = 800

  /// The retention tests' level-triggered recorder, gated by a 100 Hz sub-tone.
  static func gatedRecorder(
    in directory: String, backlog: Double = 60, events: @escaping (RecorderEvent) -> Void
  ) throws -> Recorder {
    try RetentionTests.recorder(in: directory, events: events) {
      $0.subTone = 100
      $0.largestBacklog = backlog
    }
  }

  /// Appends `seconds` of a −10 dBFS tone over `loud` (seconds), silence
  /// elsewhere, in 0.1 s blocks with an update after each.
  static func feed(_ recorder: Recorder, seconds: Double, loud: Range<Double>) {
    let total = Int(seconds * rate)
    var block = [Float](repeating: 0, count: Self.block)
    var frame = 0
    while frame < total {
      for index in 0..<Self.block {
        let time = Double(frame + index) / rate
        block[index] = loud.contains(time) ? Float(0.3 * sin(Double(frame + index) * 0.7)) : 0
      }
      block.withUnsafeBufferPointer { recorder.append($0.baseAddress!, frameCount: Self.block) }
      recorder.update()
      frame += Self.block
    }
  }

  static func subTone(at time: Double, duration: Double) -> DecodedTone {
    DecodedTone(
      plan: "ctcss", kind: .subAudible, time: time, duration: duration, symbol: "S",
      frequencies: [100], levels: [-20])
  }

  @Test func aDecoderReportingLateStillGetsTheWholeTransmission() throws {
    let scratch = try ScratchDirectory("lagging-decoder")
    var events = [RecorderEvent]()
    let recorder = try Self.gatedRecorder(in: scratch.file("rec")) { events.append($0) }
    // 10 s quiet, 20 s of tone under the sub-tone, 10 s quiet; the decoder
    // reports nothing until the end, 35 s later than its delay allows.
    Self.feed(recorder, seconds: 40, loud: 10..<30)
    recorder.tone(.toneStart(Self.subTone(at: 10, duration: 0)))
    recorder.tone(.tone(Self.subTone(at: 10, duration: 20)))
    recorder.decoder(reached: Int64(40 * Self.rate))
    recorder.update()
    _ = recorder.finish()

    let files = events.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    try #require(files.count == 1, "\(events)")
    let file = files[0]
    #expect(file.startFrame <= Int64(10 * Self.rate))
    #expect(file.startFrame + file.frames >= Int64(30 * Self.rate))
    #expect(!events.contains { if case .problem = $0 { true } else { false } })
    // The tone's first second is in the file, not silence in its place.
    let reader = try AudioFileReader(path: file.path)
    let offset = Int(10 * Self.rate) - Int(file.startFrame)
    var heard = [Float](repeating: 0, count: offset + Int(Self.rate))
    let read = try heard.withUnsafeMutableBufferPointer {
      try reader.read(into: $0.baseAddress!, frameCount: $0.count)
    }
    #expect(read == heard.count)
    let silent = heard[offset...].filter { abs($0) < 1e-3 }.count
    #expect(silent < Int(Self.rate) / 50, "\(silent) frames of the tone's first second are silent")
  }

  @Test func aDecoderThatNeverReportsIsDecidedWithoutAfterTheBacklog() throws {
    let scratch = try ScratchDirectory("silent-decoder")
    var events = [RecorderEvent]()
    let recorder = try Self.gatedRecorder(in: scratch.file("rec"), backlog: 10) {
      events.append($0)
    }
    Self.feed(recorder, seconds: 40, loud: 5..<35)
    let problems = events.compactMap { if case .problem(let problem) = $0 { problem } else { nil } }
    // Reported once, when the backlog passed 10 s, not at every block.
    try #require(problems.count == 1, "\(problems)")
    #expect(problems[0].cause.contains("behind the audio"))
    let summary = recorder.finish()
    // Without the gate's reports nothing opens, but every frame is on the timeline.
    #expect(summary.files == 0)
    #expect(summary.frames == Int64(40 * Self.rate))
  }
}
