import AudioFiles
import Console
import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import SignalDSP
import TextFormatting

/// Runs the live loopback job in a simulated room instead of on devices
/// (`micloop loopback --input TALKER --room RESPONSE`): the microphone hears
/// the talker plus the job's own speaker through the room's impulse
/// response, as fast as the processor allows. Control thread.
enum RoomRunner {
  static func run(
    configuration: DuplexConfiguration, settings: LiveSettings, room roomPath: String,
    talker talkerPath: String, record: String?, duration: Double?, json: Bool, showsMeter: Bool
  ) throws {
    let response = try RoomFiles.response(roomPath)
    let talker = try RoomFiles.talker(talkerPath, rate: response.rate, room: roomPath)
    var configuration = configuration
    configuration.sampleRate = response.rate
    configuration.direction = .duplex
    configuration.settlingTime = 0
    configuration.alsa.usesRealtimePriority = false
    let seconds = duration ?? max(Double(talker.count) / Double(response.rate), 0.001)
    SignalTrap.install()
    let room = SimulatedRoom(impulseResponse: response.samples, talker: talker)
    let device = SimulatedDevicePair(
      periodFrames: configuration.periodFrames, clock: .handStepped, format: .float, room: room)
    var jobSettings = LiveJobSettings()
    jobSettings.live = settings
    jobSettings.duration = seconds
    jobSettings.recordingPath = record
    let job: LiveJob<SimulatedDevicePair>
    do {
      job = try LiveJob(configuration: configuration, settings: jobSettings) { device }
    } catch .ringOutRate(let planRate, let roomRate) {
      throw CommandFailure(
        message:
          "the --ring-out response is \(planRate) Hz but the room \(roomPath) is \(roomRate) Hz; measure the loop in that room (micloop latency --room \(roomPath) --save-ir FILE)"
      )
    } catch { throw CommandFailure(message: error.commandLineMessage) }
    // Stepped a control cycle at a time, as fast as the processor allows:
    // each cycle's work (the rings drained, the loop learned) keeps pace.
    job.cycleClock = SteppedCycles(device)
    let printer = LivePrinter(json: json)
    if let granted = job.granted {
      printer.start(granted, capture: "simulated room \(roomPath)", playback: "its speaker")
    }
    let observer = RoomObserver(printer: printer, showsMeter: showsMeter)
    let outcome: LiveJob<SimulatedDevicePair>.Outcome
    do {
      outcome = try job.run(observer: observer)
    } catch { throw CommandFailure(message: error.commandLineMessage) }
    let notches = observer.notches
    let ducks = observer.ducks
    printer.endLine()
    let peak = Decibels.fromAmplitude(Double(room.speakerPeak))
    if json {
      var object = JSONObject(event: "room", capacity: 128)
      object.add("duration", seconds: outcome.duration)
      object.add("speaker_peak_dbfs", peak, places: 2)
      object.add("notches", notches)
      object.add("ducks", ducks)
      StandardOutput.write(object.finished, flush: true)
    } else {
      let guardText =
        settings.feedbackGuard == nil ? "feedback guard off" : "\(notches) notches, \(ducks) ducks"
      StandardOutput.write(
        "Ran \(DecimalFormatting.fixed(outcome.duration, places: 2)) s in the simulated room \(roomPath): speaker peak \(peak.map { DecimalFormatting.fixed($0, places: 1) + " dBFS" } ?? "silent"), \(guardText)"
          + (record.map { ", recorded \(outcome.recordedFrames) frames to \($0)" } ?? ""))
    }
    StandardOutput.flush()
    if let failure = outcome.recordingFailure { throw CommandFailure(message: failure.description) }
  }
}

/// Prints what the job in the simulated room reports and counts the
/// guard's notches and ducks. Control thread.
private final class RoomObserver: LiveJobObserver {
  let printer: LivePrinter
  let showsMeter: Bool
  private(set) var notches = 0
  private(set) var ducks = 0

  init(printer: LivePrinter, showsMeter: Bool) {
    self.printer = printer
    self.showsMeter = showsMeter
  }

  func handle(_ event: LiveJobEvent) {
    switch event {
    case .meter: if showsMeter { printer.show(event) }
    case .feedback(let feedback):
      if feedback.action == .notch { notches += 1 }
      if feedback.action == .duck { ducks += 1 }
      printer.show(event)
    default: break
    }
  }

  func shouldStop() -> Bool { interruptRequested.load(ordering: .relaxed) }
}
