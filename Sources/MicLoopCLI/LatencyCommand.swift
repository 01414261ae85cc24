import ArgumentParser
import Console
import DuplexIO
import MicLoopKit

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop latency`: round-trip latency of a playback→capture loop.
struct Latency: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "latency",
    abstract:
      "Measure the round-trip latency of a playback → capture loop (a cable, or a sink and its monitor).",
    discussion: "Plays three chirps on --playback and finds them in --capture by cross-correlation."
  )

  @OptionGroup(title: "Devices") var devices: DeviceOptions
  @Flag(help: "Print one JSON line.")
  var json = false

  func run() throws {
    let configuration = devices.configuration(input: true, output: true)
    let probe = LatencyProbe(sampleRate: configuration.sampleRate)
    let unit = DuplexUnit(configuration: configuration, backend: DeviceBackend(), client: probe)
    do {
      try unit.initialize()
      try unit.start()
    } catch { throw CommandFailure(message: error.commandLineMessage) }
    // A stream that stops delivering (a hung driver or server) must not
    // keep the probe waiting forever: give up 10 s after it should be done.
    let deadline =
      MonotonicClock.seconds + Double(probe.totalFrames) / Double(configuration.sampleRate) + 10
    var timedOut = false
    while !unit.waitUntilStopped(timeout: 0.02) && !probe.isDone.load(ordering: .acquiring)
      && !interruptRequested.load(ordering: .relaxed)
    {
      if MonotonicClock.seconds > deadline {
        timedOut = true
        break
      }
    }
    // A sound server's own estimate, read while the ports are connected.
    let serverLatency = unit.backend.serverLatency()
    unit.stop()
    if let failure = unit.failure { throw CommandFailure(message: failure.commandLineMessage) }
    if timedOut {
      throw CommandFailure(
        message:
          "the devices stopped delivering audio during the measurement (\(devices.captureDevice) → \(devices.playbackDevice)); check that the sound server is running and try again"
      )
    }
    if interruptRequested.load(ordering: .relaxed) { return }
    guard let granted = unit.granted else { return }
    guard let measurement = probe.result() else {
      throw CommandFailure(
        message:
          "no chirp came back on \(devices.captureDevice); connect \(devices.playbackDevice) to it (a loopback cable, or capture from the sink's .monitor)"
      )
    }
    let rate = Double(granted.sampleRate)
    let ms = { (frames: Int) in DecimalFormatting.fixed(Double(frames) / rate * 1000, places: 2) }
    let buffering = granted.loopBufferFrames
    if json {
      let server =
        serverLatency.map {
          ",\"server_capture_frames\":\($0.capture.upperBound),\"server_playback_frames\":\($0.playback.upperBound),\"server_round_trip_frames\":\($0.roundTrip)"
        } ?? ""
      StandardOutput.write(
        "{\"event\":\"latency\",\"round_trip_frames\":\(measurement.roundTripFrames),\"round_trip_ms\":\(ms(measurement.roundTripFrames)),\"unit_buffer_frames\":\(buffering),\"unit_buffer_ms\":\(ms(buffering)),\"period_frames\":\(granted.periodFrames),\"periods\":\(granted.outputPeriodCount)\(server),\"confidence\":\(DecimalFormatting.fixed(measurement.confidence, places: 3)),\"bursts\":[\(measurement.burstFrames.map(String.init).joined(separator: ","))]}"
      )
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
    }
  }
}
