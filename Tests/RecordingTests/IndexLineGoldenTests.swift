import Testing
import TonePlans

@testable import Recording

/// Golden lines: the recorder's index events as the index and `--json`
/// hold them, field for field, on a clock that starts at
/// 2026-01-01T00:00:00Z at 48 kHz. A change here changes the index format
/// (Docs/CLI.md) for every reader of old and new indexes.
@Suite struct IndexLineGoldenTests {
  static let rate = 48_000.0
  let clock = StreamClock(sampleRate: rate, startingAt: 1_767_225_600)

  func line(_ event: RecorderEvent) -> String { event.json(sampleRate: Self.rate, clock: clock) }

  @Test func spans() {
    #expect(
      line(.idle(startFrame: 48_000, frames: 24_000))
        == #"{"event":"idle","time":1.000,"start_frame":48000,"frames":24000,"duration":0.500,"start":"2026-01-01T00:00:01.000Z"}"#
    )
    #expect(
      line(.blip(startFrame: 72_000, frames: 4_800, trigger: "talk"))
        == #"{"event":"blip","time":1.500,"start_frame":72000,"frames":4800,"duration":0.100,"start":"2026-01-01T00:00:01.500Z","trigger":"talk"}"#
    )
    #expect(
      line(.gap(startFrame: 76_800, frames: 96_000, reason: .pause, detail: nil))
        == #"{"event":"gap","time":1.600,"start_frame":76800,"frames":96000,"duration":2.000,"start":"2026-01-01T00:00:01.600Z","reason":"pause"}"#
    )
    #expect(
      line(
        .gap(
          startFrame: 172_800, frames: 48_000, reason: .writeFailed,
          detail: "No space left on device"))
        == #"{"event":"gap","time":3.600,"start_frame":172800,"frames":48000,"duration":1.000,"start":"2026-01-01T00:00:03.600Z","reason":"write_failed","detail":"No space left on device"}"#
    )
  }

  /// A decoded tone, call or page is the line `tones --json` prints for
  /// it, placed on the timeline; in a recording's tags with its `offset`
  /// into the file.
  @Test func decodedEvents() {
    let key = DecodedTone(
      plan: "dtmf", kind: .dualTone, time: 2.01, duration: 0.07, symbol: "5",
      frequencies: [770.21, 1335.94], levels: [-13.04, -14.2])
    #expect(
      line(.tone(RecordingTag(event: .tone(key), startFrame: 96_480, endFrame: 99_840)))
        == #"{"event":"tone","time":2.010,"duration":0.070,"plan":"dtmf","symbol":"5","frequencies":[770.2,1335.9],"level_dbfs":-13.0,"levels_dbfs":[-13.0,-14.2]}"#
    )
    let call = DecodedSequence(
      plan: "zvei1", kind: .sequential, time: 4, duration: 0.35, text: "12335",
      symbols: "123E5")
    #expect(
      line(.tone(RecordingTag(event: .sequence(call), startFrame: 192_000, endFrame: 208_800)))
        == #"{"event":"sequence","time":4.000,"duration":0.350,"plan":"zvei1","text":"12335","symbols":"123E5"}"#
    )
    let page = DecodedPage(
      plan: "twotone:1000,1200", time: 1, duration: 4, frequencies: [1000.04, 1199.96],
      isGroupCall: true)
    let tag = RecordingTag(event: .page(page), startFrame: 48_000, endFrame: 240_000)
    #expect(
      tag.json(sampleRate: Self.rate, fileStart: 24_000)
        == #"{"event":"page","time":1.000,"duration":4.000,"plan":"twotone:1000,1200","frequencies":[1000.0,1200.0],"group":true,"offset":0.500}"#
    )
  }

  /// The wall-clock `start` is cut to the millisecond, the stream `time` rounded.
  @Test func xruns() {
    #expect(
      line(.xrun(frame: 220_800, lostFrames: 512))
        == #"{"event":"xrun","time":4.600,"frame":220800,"start":"2026-01-01T00:00:04.600Z","lost_frames":512}"#
    )
    #expect(
      line(.xrun(frame: 230_000, lostFrames: nil))
        == #"{"event":"xrun","time":4.792,"frame":230000,"start":"2026-01-01T00:00:04.791Z","lost_frames":null}"#
    )
  }

  @Test func retentionAndTheEnd() {
    #expect(
      line(.deleted(name: "2026-01-01T00-00-01.000Z.wav", bytes: 96_044, reason: "max_bytes"))
        == #"{"event":"deleted","file":"2026-01-01T00-00-01.000Z.wav","bytes":96044,"reason":"max_bytes"}"#
    )
    let summary = SessionSummary(
      frames: 480_000, files: 2, recordedFrames: 144_000, blips: 1, gaps: 2, gapFrames: 144_000,
      xruns: 2, deleted: 1)
    #expect(
      line(.sessionEnded(summary))
        == #"{"event":"session_end","frames":480000,"duration":10.000,"files":2,"recorded_frames":144000,"blips":1,"gaps":2,"gap_frames":144000,"xruns":2,"deleted":1}"#
    )
  }
}
