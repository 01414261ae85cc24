import Console
import DuplexIO
import DuplexIOTesting
import MicLoopKit
import Synchronization

/// Runs the latency probe (chirps, then a sweep) over a loop — devices, or
/// a simulated room — for `micloop latency` and `loopback --ring-out
/// measure`. Control thread.
enum LoopMeasurement {
  /// The probe, what the devices granted, the sound server's own estimate
  /// (native backends), and how many xruns the measurement met.
  typealias Outcome = (
    probe: LatencyProbe, granted: GrantedConfiguration, server: ServerLatency?, xruns: Int
  )

  /// The probe over the devices of `configuration`; `nil` when interrupted.
  static func onDevices(configuration: DuplexConfiguration, devices: DeviceOptions) throws
    -> Outcome?
  {
    let probe = LatencyProbe(sampleRate: configuration.sampleRate)
    let unit = DuplexUnit(configuration: configuration, backend: DeviceBackend(), client: probe)
    return try run(
      unit, probe: probe,
      stalled: "\(devices.captureDevice) → \(devices.playbackDevice)")
  }

  /// The probe in the simulated room whose response is the file `room`, at its rate.
  static func inRoom(_ room: String, configuration: DuplexConfiguration) throws -> Outcome? {
    let response = try RoomFiles.response(room)
    var configuration = configuration
    configuration.sampleRate = response.rate
    configuration.settlingTime = 0
    configuration.alsa.usesRealtimePriority = false
    let probe = LatencyProbe(sampleRate: response.rate)
    let device = SimulatedDevicePair(
      periodFrames: configuration.periodFrames, clock: .freeRunning, format: .float,
      room: SimulatedRoom(impulseResponse: response.samples))
    let unit = DuplexUnit(configuration: configuration, backend: device, client: probe)
    return try run(unit, probe: probe, stalled: "the room \(room)")
  }

  /// Runs the probe on `unit`; with the granted configuration and the
  /// sound server's own latency estimate (native backends), or `nil` when
  /// interrupted.
  private static func run<Backend: DuplexBackend>(
    _ unit: DuplexUnit<Backend, LatencyProbe>, probe: LatencyProbe, stalled: String
  ) throws -> Outcome? {
    let configuration = unit.configuration
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
          "the devices stopped delivering audio during the measurement (\(stalled)); check that the sound server is running and try again"
      )
    }
    if interruptRequested.load(ordering: .relaxed) { return nil }
    let statistics = unit.statistics.snapshot()
    let xruns = statistics.overruns + statistics.underruns + statistics.settlingXruns
    return unit.granted.map { (probe, $0, serverLatency, xruns) }
  }

  /// What the probe found, or the one-line failure when no chirp came back
  /// (naming the xruns that may have cost the chirps).
  static func result(of outcome: Outcome, room: String?, devices: DeviceOptions)
    throws -> LatencyProbe.Measurement
  {
    if let measurement = outcome.probe.result() { return measurement }
    let rate = outcome.granted.sampleRate
    if let room {
      throw CommandFailure(
        message:
          "no chirp came back through the room \(room) at \(rate) Hz; give a room's response at a rate a chirp fits in (8000 Hz or more, e.g. sox \(room) -r 48000 room-48000.wav)"
      )
    }
    if outcome.xruns > 0 {
      throw CommandFailure(
        message:
          "no chirp came back on \(devices.captureDevice) through \(outcome.xruns) xruns (capture overrun or playback underrun); measure again on a quieter machine or with a larger --period"
      )
    }
    throw CommandFailure(
      message:
        "no chirp came back on \(devices.captureDevice); connect \(devices.playbackDevice) to it (a loopback cable, or capture from the sink's .monitor)"
    )
  }
}
