import Console
import DuplexIO
import Testing
import TonePlans

/// Golden lines: each live and tone event as `--json` prints it and
/// `/events` serves it, field for field. A change here changes the JSON
/// Lines contract (Docs/CLI.md) for every reader of it.
@Suite struct EventLineGoldenTests {
  @Test func deviceEvents() {
    #expect(
      LiveEventLines.deviceLost(time: 12.5, reason: "the PipeWire server went away")
        == #"{"event":"device_lost","time":12.500,"reason":"the PipeWire server went away"}"#)
    #expect(
      LiveEventLines.deviceBack(time: 15.25, gap: 2.75, filled: true)
        == #"{"event":"device_back","time":15.250,"gap_seconds":2.750,"gap_filled":true}"#)
    #expect(
      LiveEventLines.connectionsRestored(
        time: 15.5,
        RestoredConnections(restored: ["system:capture_1"], notRestored: ["gone:out"]))
        == #"{"event":"connections_restored","time":15.500,"restored":["system:capture_1"],"not_restored":["gone:out"]}"#
    )
  }

  @Test func lossEvents() {
    #expect(
      LiveEventLines.xrun(.input, time: 3.6, lostFrames: 0)
        == #"{"event":"xrun","time":3.600,"bus":"input","lost_frames":null}"#)
    #expect(
      LiveEventLines.xrun(.output, time: 3.6, lostFrames: 256)
        == #"{"event":"xrun","time":3.600,"bus":"output","lost_frames":256}"#)
    #expect(
      LiveEventLines.pause(time: 7, seconds: 1.25)
        == #"{"event":"pause","time":7.000,"duration":1.250}"#)
    #expect(
      LiveEventLines.lost(time: 7, seconds: 1.2, reason: "pause")
        == #"{"event":"gap","time":7.000,"duration":1.200,"reason":"pause"}"#)
  }

  @Test func toneEvents() {
    let key = DecodedTone(
      plan: "dtmf", kind: .dualTone, time: 2.01, duration: 0.07, symbol: "5",
      frequencies: [770.21, 1335.94], levels: [-13.04, -14.2])
    #expect(
      ToneEventFormat.json(.tone(key))
        == #"{"event":"tone","time":2.010,"duration":0.070,"plan":"dtmf","symbol":"5","frequencies":[770.2,1335.9],"level_dbfs":-13.0,"levels_dbfs":[-13.0,-14.2]}"#
    )
    let subTone = DecodedTone(
      plan: "ctcss", kind: .subAudible, time: 0.5, duration: 1.2, symbol: "F",
      frequencies: [88.5], levels: [-30])
    #expect(
      ToneEventFormat.json(.toneStart(subTone))
        == #"{"event":"tone_start","time":0.500,"duration":1.200,"plan":"ctcss","symbol":"F","frequencies":[88.5],"level_dbfs":-30.0,"levels_dbfs":[-30.0]}"#
    )
    let call = DecodedSequence(
      plan: "zvei1", kind: .sequential, time: 4, duration: 0.35, text: "12335", symbols: "123E5")
    #expect(
      ToneEventFormat.json(.sequence(call))
        == #"{"event":"sequence","time":4.000,"duration":0.350,"plan":"zvei1","text":"12335","symbols":"123E5"}"#
    )
    let siren = DecodedSequence(
      plan: "siren", kind: .sequential, time: 9, duration: 5, text: "fire", symbols: "",
      call: "12345")
    #expect(
      ToneEventFormat.json(.sequence(siren))
        == #"{"event":"sequence","time":9.000,"duration":5.000,"plan":"siren","text":"fire","symbols":"","call":"12345"}"#
    )
    let page = DecodedPage(
      plan: "twotone:1000,1200", time: 1, duration: 4, frequencies: [1000.04, 1199.96],
      isGroupCall: false)
    #expect(
      ToneEventFormat.json(.page(page))
        == #"{"event":"page","time":1.000,"duration":4.000,"plan":"twotone:1000,1200","frequencies":[1000.0,1200.0],"group":false}"#
    )
    #expect(
      ToneEventFormat.jsonSummary(duration: 60, tones: 4, sequences: 1)
        == #"{"event":"summary","duration":60.000,"tones":4,"sequences":1}"#)
  }
}
