import Console
import Foundation
import Metering
import Testing

@Suite struct JSONLinesTests {
  @Test func levelLineHasTheContractFieldsAndNullForSilence() throws {
    let line = JSONLines.line(
      for: .level(
        LevelReading(
          time: 0.1, peakDecibels: -6.0206, rmsDecibels: nil, envelopeDecibels: -8.7,
          isTalking: true,
          talkEvidence: TalkEvidence(
            speechDecibels: -20.04, noiseFloorDecibels: nil, openDecibels: -31.5,
            closeDecibels: -36.25), meterDecibels: -7.5)))
    #expect(
      line
        == #"{"event":"level","time":0.100,"peak_dbfs":-6.02,"rms_dbfs":null,"envelope_dbfs":-8.70,"speech_dbfs":-20.04,"noise_floor_dbfs":null,"open_dbfs":-31.50,"close_dbfs":-36.25,"meter_dbfs":-7.50,"talking":true}"#
    )
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    #expect(object?["event"] as? String == "level")
  }

  @Test func levelLinesListEachChannelWhenThereAreSeveral() throws {
    var channels = ChannelReadings()
    channels.append(peak: -6, rms: -9, meter: -6.5)
    channels.append(peak: nil, rms: nil, meter: nil)
    let line = JSONLines.line(
      for: .level(
        LevelReading(
          time: 1, peakDecibels: -6, rmsDecibels: -9, envelopeDecibels: nil, isTalking: false,
          channels: channels)))
    #expect(
      line.hasSuffix(
        #""channels":[{"peak_dbfs":-6.00,"rms_dbfs":-9.00,"meter_dbfs":-6.50},{"peak_dbfs":null,"rms_dbfs":null,"meter_dbfs":null}]}"#
      ))
    var mono = ChannelReadings()
    mono.append(peak: -6, rms: -9, meter: -6)
    let single = JSONLines.line(
      for: .level(
        LevelReading(
          time: 1, peakDecibels: -6, rmsDecibels: -9, envelopeDecibels: nil, isTalking: false,
          channels: mono)))
    #expect(!single.contains("channels"))
  }
}
