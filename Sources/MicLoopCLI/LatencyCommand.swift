import ArgumentParser
import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import SignalDSP
import TextFormatting

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop latency`: round-trip latency of a playback→capture loop.
struct Latency: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "latency",
    abstract:
      "Measure the round-trip latency of a playback → capture loop (a cable, or a sink and its monitor).",
    discussion: """
      Plays three chirps on --playback and finds them in --capture by cross-correlation; then a \
      sweep, from which it measures the loop's impulse response and reports the loop's maximum \
      stable gain (the most gain a loopback over it takes before it howls) and the frequency that \
      howls first. With --room it measures a simulated room instead of devices.
      """
  )

  @OptionGroup(title: "Devices") var devices: DeviceOptions
  @Flag(help: "Print one JSON line.")
  var json = false
  @Option(
    name: .customLong("save-ir"),
    help: "Save the loop's impulse response (from the moment a sample is played) to this file.")
  var saveResponse: String?
  @Option(
    help:
      "Measure a simulated room instead of devices: its impulse response from speaker to microphone (a file)."
  )
  var room: String?

  func validate() throws {
    if room != nil {
      guard devices.device == nil && devices.capture == nil && devices.playback == nil else {
        throw ValidationError(
          "--room measures simulated devices; leave out -D, --capture and --playback")
      }
    }
  }

  func run() throws {
    let configuration = devices.configuration(.duplex)
    let measured =
      try room.map { try LoopMeasurement.inRoom($0, configuration: configuration) }
      ?? LoopMeasurement.onDevices(configuration: configuration, devices: devices)
    guard let measured else { return }
    try report(measured)
  }

  private func report(_ outcome: LoopMeasurement.Outcome) throws {
    let (_, granted, serverLatency, _) = outcome
    let measurement = try LoopMeasurement.result(of: outcome, room: room, devices: devices)
    let rate = Double(granted.sampleRate)
    let ms = { (frames: Int) in DecimalFormatting.fixed(Double(frames) / rate * 1000, places: 2) }
    let buffering = granted.loopBufferFrames
    if let saveResponse {
      do {
        let writer = try AudioFileWriter(
          path: saveResponse, sampleRate: rate, channelCount: 1, encoding: .float)
        try writer.write(measurement.impulseResponse)
        writer.close()
      } catch { throw CommandFailure(message: error.description) }
    }
    let stability = measurement.stability
    if json {
      var object = JSONObject(event: "latency", capacity: 512)
      object.add("round_trip_frames", measurement.roundTripFrames)
      object.add("round_trip_ms", Double(measurement.roundTripFrames) / rate * 1000, places: 2)
      object.add("unit_buffer_frames", buffering)
      object.add("unit_buffer_ms", Double(buffering) / rate * 1000, places: 2)
      object.add("period_frames", granted.periodFrames)
      object.add("periods", granted.outputPeriodCount)
      if let serverLatency {
        object.add("server_capture_frames", serverLatency.capture.upperBound)
        object.add("server_playback_frames", serverLatency.playback.upperBound)
        object.add("server_round_trip_frames", serverLatency.roundTrip)
      }
      object.add("confidence", measurement.confidence, places: 3)
      object.add("bursts", json: JSONText.array(measurement.burstFrames.map(String.init)))
      object.add("max_stable_gain_db", stability?.maximumStableGain, places: 2)
      object.add("howl_frequency", stability?.frequency, places: 1)
      StandardOutput.write(object.finished)
    } else {
      StandardOutput.write(
        "Round trip: \(measurement.roundTripFrames) frames = \(ms(measurement.roundTripFrames)) ms at \(granted.sampleRate) Hz (confidence \(DecimalFormatting.fixed(measurement.confidence, places: 2)))"
      )
      if granted.isServerCycle {
        StandardOutput.write(
          "micloop's own buffering: none (it runs inside the server's \(granted.periodFrames)-frame cycle, input and output in one call)"
        )
      } else {
        StandardOutput.write(
          "micloop's own buffering: \(buffering) frames = \(ms(buffering)) ms (capture period \(granted.periodFrames) + playback pre-fill \(granted.outputPrefillFrames))"
        )
      }
      if let serverLatency {
        StandardOutput.write(
          "The server's port latencies: capture \(serverLatency.capture.upperBound) + playback \(serverLatency.playback.upperBound) = \(serverLatency.roundTrip) frames = \(ms(serverLatency.roundTrip)) ms through the hardware it reports"
        )
      }
      let outside = measurement.roundTripFrames - buffering
      StandardOutput.write(
        outside >= 0
          ? "Outside micloop (driver, server, converters, cable): \(outside) frames = \(ms(outside)) ms"
          : "The loop is \(-outside) frames (\(ms(-outside)) ms) shorter than micloop's buffering: the device drains playback ahead of real time (sound servers do)"
      )
      if let stability {
        let gain = stability.maximumStableGain
        StandardOutput.write(
          "Maximum stable gain: \(DecimalFormatting.signed(gain, places: 1)) dB; past it the loop howls first at \(DecimalFormatting.fixed(stability.frequency, places: 0)) Hz (\(stability.crossingsWithin3dB) frequencies within 3 dB of it)"
        )
      } else {
        StandardOutput.write("Maximum stable gain: unknown (the sweep did not come back)")
      }
    }
  }
}
