import AudioFiles
import FeedbackControl
import Foundation
import Metering
import MicLoopKit
import SignalDSP
import TestSupport
import Testing

/// End-to-end tests on real ALSA devices (a private PulseAudio server).
///
/// They check what comes out (gain, every sample, the file), not how
/// little buffering does it, so they run with 85 ms buffers: with both
/// cores busy this virtual machine's processors are taken away for tens of
/// milliseconds at a time, which no priority inside it can prevent. How low
/// the buffering goes without an xrun is measured by `make bench`.
@Suite(
  .serialized, .tags(.live, .pulseaudio),
  .needsSoundServer) struct LiveLoopbackTests
{
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// A sox-made test signal at 48 kHz, 16-bit mono.
  func makeSignal(_ name: String, _ synth: [String]) throws -> String {
    let path = file(name)
    try MicLoopBinary.shell(
      ["sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", path] + synth)
    return path
  }

  func levels(_ path: String) throws -> (peak: Double, rms: Double, frames: Int64) {
    let outcome = try FileMeter.run(try AudioFileReader(path: path), settings: MeterSettings()) {
      _ in
    }
    return (
      outcome.summary.peakDecibels ?? -.infinity, outcome.summary.rmsDecibels ?? -.infinity,
      Int64((outcome.summary.duration * 48_000).rounded())
    )
  }

  @Test func sineComesOutAtTheRequestedGain() throws {
    let devices = try VirtualDevices()
    let sine = try makeSignal("sine.wav", ["synth", "8", "sine", "1000", "vol", "0.251189"])
    let player = try devices.play(sine, into: "mic")
    let loop = try devices.startMicloop([
      "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period", "1024",
      "--periods", "4", "--gain-db", "-6",
      "--duration", "6",
    ])
    #expect(loop.waitForOutput("48000 Hz"))
    usleep(500_000)
    let recorded = file("speaker.wav")
    try devices.startRecording("pulse:spk.monitor", seconds: 3, into: recorded).wait()
    let result = loop.result()
    player.signal(SIGTERM)
    #expect(result.status == 0, "\(result.errorOutput)")
    // Levels of the tone itself: from its first to its last loud sample,
    // 10 ms in from either end (the gain ramp, the stream's start and stop).
    let tone = MicLoopBinary.sounding(try MicLoopBinary.samples(recorded), threshold: 0.05)
    #expect(tone.count >= 48_000, "only \(tone.count) samples of tone reached the speaker")
    let peak = 20 * log10(Double(tone.map { abs($0) }.max() ?? 0))
    let rms = 10 * log10(tone.map { Double($0) * Double($0) }.reduce(0, +) / Double(tone.count))
    #expect(abs(peak - -18) <= 0.2, "peak \(peak)")
    #expect(abs(rms - -21.01) <= 0.2, "rms \(rms); micloop: \(result.output)")
  }

  @Test func recordingMatchesWhatWasPlayedSampleForSample() throws {
    let devices = try VirtualDevices()
    let noise = try makeSignal(
      "noise.wav", ["synth", "3", "whitenoise", "vol", "0.3", "pad", "0.5", "0"])
    let recording = file("recording.wav")
    try RecordingComparison.expectExact(played: noise, recording: recording) {
      let loop = try devices.startMicloop([
        "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period",
        "1024", "--periods", "4", "--record", recording, "--duration", "8",
      ])
      #expect(loop.waitForOutput("48000 Hz"))
      // paplay keeps two seconds queued in the server, so the feed into the
      // virtual microphone cannot underrun (an underrun there would insert
      // silence that no recorder could match).
      let player = try VirtualDevices.wait(
        for: VirtualDevices.realTime + ["paplay", "--device=mic", noise],
        environment: devices.environment)
      #expect(player == 0, "paplay exited with \(player)")
      return loop.result()
    }
  }

  @Test func latencyIsConsistentWithTheBuffering() throws {
    let devices = try VirtualDevices()
    let result = try devices.micloop([
      "latency", "--playback", "pulse:spk", "--capture", "pulse:spk.monitor", "--period", "256",
      "--periods", "3",
      "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    let roundTrip = try #require(object?["round_trip_frames"] as? Int)
    let buffering = try #require(object?["unit_buffer_frames"] as? Int)
    #expect(buffering == 256 + 2 * 256)
    // Never more than the unit's buffering plus what the server adds (50 ms),
    // and at least a period (the loop cannot be faster than one capture).
    #expect(roundTrip >= 64 && roundTrip <= buffering + 2_400, "round trip \(roundTrip) frames")
    let bursts = try #require(object?["bursts"] as? [Int])
    #expect(bursts.count == 3)
  }

  /// `latency` over the private server's loop (the speaker sink into its
  /// own monitor) at half volume, 1024-frame periods; the maximum stable
  /// gain it reports, its response saved to `path`.
  func measureLoopAtHalfVolume(_ devices: VirtualDevices, savingTo path: String) throws -> Double {
    #expect(
      try VirtualDevices.wait(
        for: ["pactl", "set-sink-volume", "spk", "50%"], environment: devices.environment) == 0)
    let result = try devices.micloop([
      "latency", "--playback", "pulse:spk", "--capture", "pulse:spk.monitor", "--period", "1024",
      "--periods", "4", "--json", "--save-ir", path,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    return try #require(object?["max_stable_gain_db"] as? Double)
  }

  /// The private server's loop (the speaker sink into its own monitor) at
  /// half volume (−18.06 dB): a delay and a gain, so a loopback over it
  /// takes 18 dB before it howls. The figure `latency` reports is the one
  /// computed from the response it saves, and a plain reading of that
  /// response (its largest gain anywhere in the measured band) agrees
  /// within 1 dB; the server's own latency drifts while the sweep plays,
  /// which blurs the response, so the volume's figure is met within 3 dB.
  @Test func latencyReportsTheMaximumStableGainOfTheLoop() throws {
    let devices = try VirtualDevices()
    let saved = file("loop-ir.wav")
    let reported = try measureLoopAtHalfVolume(devices, savingTo: saved)
    let response = try MicLoopBinary.samples(saved)
    let computed = try #require(
      LoopStability.analyze(
        impulseResponse: response, sampleRate: 48_000, lowest: 100, highest: 18_000))
    #expect(abs(computed.maximumStableGain - reported) < 0.01)
    let transform = RealFourierTransform(size: 1 << 17)
    for (index, sample) in response.enumerated() { transform.real[index] = sample }
    transform.forward()
    var largest: Float = 0
    for bin in Int(100.0 / 48_000 * 131_072)...Int(18_000.0 / 48_000 * 131_072) {
      let (re, im) = (transform.complex[2 * bin], transform.complex[2 * bin + 1])
      largest = max(largest, (re * re + im * im).squareRoot())
    }
    #expect(abs(-20 * log10(Double(largest)) - reported) < 1, "\(reported) dB reported")
    #expect(abs(reported - 18.06) < 3, "\(reported) dB reported")
  }

  /// The private server's loop measured with `latency --save-ir`, then
  /// monitored over with `--ring-out` past its limit: the plan reads the
  /// same limit `latency` reported, and the notches and the duck its gain
  /// needs are set as the gain gets there, on real devices.
  @Test func aRingOutFromTheMeasuredLoopActsAsTheGainRises() throws {
    let devices = try VirtualDevices()
    let saved = file("ring-out-ir.wav")
    let limit = try measureLoopAtHalfVolume(devices, savingTo: saved)
    let result = try devices.micloop([
      "loopback", "--playback", "pulse:spk", "--capture", "pulse:spk.monitor", "--period", "1024",
      "--periods", "4", "--ring-out", saved, "--gain-db", "\(Int(limit) - 8),\(Int(limit) + 6)@1",
      "--duration", "2", "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = result.output.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    let plan = try #require(lines.first)
    #expect(plan["event"] as? String == "ring_out")
    #expect(abs((plan["maximum_stable_gain_db"] as? Double ?? 0) - limit) < 0.01)
    let feedback = lines.filter { $0["event"] as? String == "feedback" }
    #expect(!feedback.isEmpty, "\(result.output)")
    for event in feedback {
      #expect(event["planned"] as? Bool == true, "\(event)")
      let time = try #require(event["time"] as? Double)
      #expect(time >= 1 && time < 1 + 2 * 1024 / 48_000.0, "\(event)")
    }
  }

  /// `--ring-out measure` on real devices: the loop is measured first (the
  /// chirps and the sweep through the private server's loop), then
  /// monitored with the plan; past the limit the plan acts as the gain gets there.
  @Test func aRingOutMeasuredOnTheDevicesActsAsTheGainRises() throws {
    let devices = try VirtualDevices()
    #expect(
      try VirtualDevices.wait(
        for: ["pactl", "set-sink-volume", "spk", "50%"], environment: devices.environment) == 0)
    // In a whole-suite run the chirps have once not come back at all: the
    // measurement is made once more, its first failure printed.
    let result = try LiveAttempts.runAgainAfterAnyShortfall {
      let result = try devices.micloop([
        "loopback", "--playback", "pulse:spk", "--capture", "pulse:spk.monitor", "--period",
        "1024", "--periods", "4", "--ring-out", "measure", "--gain-db", "10,24@1", "--duration",
        "2", "--json",
      ])
      return (result, result.status == 0, result.errorOutput)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    let lines = result.output.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    let plan = try #require(lines.first)
    #expect(plan["event"] as? String == "ring_out")
    // Half volume: −18.06 dB; the server's drifting latency blurs the measurement (see above).
    #expect(abs((plan["maximum_stable_gain_db"] as? Double ?? 0) - 18.06) < 3, "\(plan)")
    let planned = lines.filter { $0["planned"] as? Bool == true }
    #expect(!planned.isEmpty, "\(result.output)")
    #expect(planned.allSatisfy { ($0["time"] as? Double ?? 0) >= 1 })
  }

  @Test func aTonePlayedIntoTheMicrophoneIsMeteredAtItsLevel() throws {
    try LiveScenarios.toneIsMeteredAtItsLevel(in: directory) { try VirtualDevices() }
  }
}

/// Faults on real devices: one line on stderr, the right exit status, a valid file.
@Suite(
  .serialized, .tags(.live, .pulseaudio),
  .needsSoundServer) struct LiveFaultTests
{
  @Test func unknownDeviceAndUnsupportedRateAreOneLineErrors() throws {
    let devices = try VirtualDevices()
    let unknown = try devices.micloop(["loopback", "-D", "nosuchdevice", "--duration", "1"])
    #expect(unknown.status == 1)
    #expect(unknown.errorLines.count == 1)
    #expect(unknown.errorOutput.contains("unknown audio device 'nosuchdevice'"))
    let rate = try devices.micloop([
      "meter", "-D", "pulse:mic.monitor", "--rate", "705600", "--duration", "1",
    ])
    #expect(rate.status == 1)
    #expect(rate.errorLines.count == 1)
    #expect(rate.errorOutput.contains("705600 Hz"))
    // A server device the server has no source for.
    let missing = try devices.micloop(["meter", "--capture", "pulse:nosuch", "--duration", "1"])
    #expect(missing.status == 1)
    #expect(missing.errorLines.count == 1)
    #expect(
      missing.errorOutput.contains("no source or sink of that name"), "\(missing.errorOutput)")
  }

  /// A tone on the virtual microphone keeps its source busy (an idle source
  /// may hold back its first data for a second or two).
  func playTone(_ devices: VirtualDevices, bufferTime: Double = 1) throws -> SpawnedProcess {
    let directory = try MicLoopBinary.temporaryDirectory()
    let tone = directory.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth", "30", "sine", "500",
      "vol", "0.1",
    ])
    return try devices.play(tone, into: "mic", bufferTime: bufferTime)
  }

  /// Waits until micloop's recording holds more than `frames` frames (its
  /// header is rewritten after every block); false after a minute.
  func waitForRecording(_ path: String, moreThan frames: Int64) -> Bool {
    for _ in 0..<600 {
      if let reader = try? AudioFileReader(path: path), let count = reader.declaredFrameCount,
        count > frames
      {
        return true
      }
      usleep(100_000)
    }
    return false
  }

  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func aStopSignalEndsCleanlyAndKeepsTheRecording(_ signal: Int32) throws {
    let devices = try VirtualDevices()
    let player = try playTone(devices)
    defer { player.signal(SIGTERM) }
    let directory = try MicLoopBinary.temporaryDirectory()
    let recording = directory.appendingPathComponent("interrupted.wav").path
    let loop = try devices.startMicloop([
      "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period", "1024",
      "--periods", "4", "--record",
      recording,
    ])
    #expect(waitForRecording(recording, moreThan: 48_000))
    loop.signal(signal)
    let result = loop.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("Ran "), "the summary: \(result.output)")
    let reader = try AudioFileReader(path: recording)
    #expect(reader.declaredFrameCount.map { $0 > 48_000 } == true)
  }

  /// The pulse plugin can hang inside a read once its server is gone: the
  /// meter still ends, with one line, instead of running forever.
  @Test func serverKilledUnderALiveMeterEndsIt() throws {
    let devices = try VirtualDevices()
    let player = try playTone(devices)
    defer { player.signal(SIGTERM) }
    let meter = try devices.startMicloop([
      "meter", "-D", "pulse:mic.monitor", "--json", "--duration", "60",
    ])
    #expect(meter.waitForOutput("\"level\""))
    devices.stop()
    let deadline = Date().addingTimeInterval(30)
    while meter.isRunning && Date() < deadline { usleep(100_000) }
    let stillRunning = meter.isRunning
    if stillRunning { meter.signal(SIGKILL) }
    #expect(!stillRunning, "the meter kept running 30 s after its server died")
    let result = meter.result()
    #expect(result.status == 1, "\(result.errorOutput)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("pulse:mic.monitor"), "\(result.errorOutput)")
  }

  /// With --reconnect a server that dies and comes back is a gap, not the
  /// end: device_lost, device_back, levels again, one summary, and a
  /// recording whose gap is filled with silence of the same length.
  @Test func reconnectBridgesAServerThatComesBack() throws {
    let devices = try VirtualDevices()
    var player = try playTone(devices)
    let directory = try MicLoopBinary.temporaryDirectory()
    let recording = directory.appendingPathComponent("bridged.wav").path
    let job = try devices.startMicloop([
      "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period", "1024",
      "--periods", "4", "--record", recording, "--reconnect", "--fill-gaps", "--json",
    ])
    defer { job.signal(SIGKILL) }
    #expect(waitForRecording(recording, moreThan: 48_000))
    devices.stop()
    player.signal(SIGTERM)
    #expect(job.waitForOutput("\"device_lost\"", timeout: 30))
    try devices.start()
    player = try playTone(devices)
    defer { player.signal(SIGTERM) }
    #expect(job.waitForOutput("\"device_back\"", timeout: 30))
    // Levels again after the return, then a clean stop.
    let deadline = Date().addingTimeInterval(30)
    var afterReturn = 0
    while Date() < deadline && afterReturn < 5 {
      usleep(200_000)
      let output = (try? String(contentsOfFile: job.outputPath, encoding: .utf8)) ?? ""
      let tail = output.components(separatedBy: "\"device_back\"").dropFirst().last ?? ""
      afterReturn = tail.components(separatedBy: "\"level\"").count - 1
    }
    job.signal(SIGINT)
    let result = job.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = RecordCommandTests.lines(result.output)
    let kinds = events.compactMap { $0["event"] as? String }
    #expect(kinds.filter { $0 == "summary" }.count == 1, "\(kinds)")
    let lost = try #require(kinds.firstIndex(of: "device_lost"))
    let back = try #require(kinds.firstIndex(of: "device_back"))
    #expect(lost < back && kinds[back...].contains("level"), "\(kinds)")
    let gap = try #require(events[back]["gap_seconds"] as? Double)
    #expect(gap > 0.5 && gap < 60, "gap \(gap) s")
    #expect(events[back]["gap_filled"] as? Bool == true)
    // The file holds the stream plus the silence of the gap.
    let summary = try #require(events.last)
    let streamSeconds = try #require(summary["duration"] as? Double)
    let reader = try AudioFileReader(path: recording)
    let fileSeconds = Double(try #require(reader.declaredFrameCount)) / 48_000
    #expect(abs(fileSeconds - (streamSeconds + gap)) < 0.2, "\(fileSeconds) s in the file")
  }

  /// A server that is away for 3 s: the job hears audio again within
  /// 2.5 s of its return (loopback and record alike); record's timeline
  /// spans the wall time it ran, within 0.3 s, and loopback fills its
  /// recording's gap with the time the server was away.
  /// The devices reopen within a retry (0.5 s) of the server's return; the
  /// rest is the server's: a null sink with no player yet hands the first
  /// audio of its monitor to any new stream (arecord's too) about 2 s late.
  /// The player keeps a short buffer, so no more than that is held back
  /// when the job stops.
  @Test(arguments: ["loopback", "record"])
  func aServerAwayThreeSecondsIsBridgedAtOnce(command: String) throws {
    let lowLatency = 0.05
    let devices = try VirtualDevices()
    var player = try playTone(devices, bufferTime: lowLatency)
    let directory = try MicLoopBinary.temporaryDirectory()
    let recording = directory.appendingPathComponent("bridged.wav").path
    let arguments =
      command == "loopback"
      ? [
        "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period",
        "1024", "--periods", "4", "--record", recording, "--reconnect", "--fill-gaps", "--json",
      ]
      : [
        "record", "-D", "pulse:mic.monitor", "--period", "1024", "--periods", "4", "--dir",
        directory.appendingPathComponent("rec").path, "--reconnect", "--json", "--trigger",
        "level:-60",
      ]
    let job = try devices.startMicloop(arguments)
    defer { job.signal(SIGKILL) }
    // The wall clock starts with the first audio (a server takes seconds to
    // start a stream): loopback's first level, record's first file (opened
    // once the trigger has held for --min, which the timeline counts too).
    #expect(job.waitForOutput(command == "loopback" ? "\"level\"" : "\"open\"", timeout: 30))
    let opening = command == "loopback" ? 0.1 : 0.3 + 0.05
    let started = Date().addingTimeInterval(-opening)
    usleep(2_000_000)
    devices.stop()
    player.signal(SIGTERM)
    usleep(3_000_000)
    try devices.start()
    let returned = Date()
    player = try playTone(devices, bufferTime: lowLatency)
    defer { player.signal(SIGTERM) }
    #expect(job.waitForOutput("\"device_back\"", timeout: 30))
    let back = Date().timeIntervalSince(returned)
    #expect(back < 2.5, "\(command) was back \(back) s after the server")
    usleep(2_000_000)
    job.signal(SIGINT)
    let result = job.result()
    let wall = Date().timeIntervalSince(started)
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = RecordCommandTests.lines(result.output)
    let seconds: Double
    if command == "loopback" {
      let reader = try AudioFileReader(path: recording)
      seconds = Double(try #require(reader.declaredFrameCount)) / 48_000
      // The gap is filled with exactly the time the server was away; a
      // loop paced by a playback sink is held to the sink's pace, which a
      // null sink starting on a 2 s block keeps below wall time, so the
      // file is checked against the stream and its gaps.
      let streamed = try #require(
        events.last { $0["event"] as? String == "summary" }?["duration"] as? Double)
      let gaps = events.filter { $0["event"] as? String == "device_back" }
        .compactMap { $0["gap_seconds"] as? Double }
      let gap = try #require(gaps.first)
      #expect(gaps.count == 1)
      #expect(gap > 3 && gap < 3 + back + 2.5, "a gap of \(gap) s for a 3 s outage")
      #expect(abs(seconds - (streamed + gap)) < 0.05, "\(seconds) s for \(streamed) s + \(gap) s")
    } else {
      // The index's timeline: recordings, gaps and idle spans.
      let spans = events.filter {
        ["recording", "idle", "blip", "gap"].contains($0["event"] as? String)
      }
      let first = spans.first { $0["event"] as? String == "recording" }?["start_frame"] as? Int ?? 0
      let frames = spans.reduce(0) { $0 + ($1["frames"] as? Int ?? 0) } - first
      seconds = Double(frames) / 48_000
      #expect(abs(seconds - wall) < 0.3, "\(command): \(seconds) s for \(wall) s of wall time")
    }
    print("\(command) bridged: back \(back) s after the server, \(seconds) s held for \(wall) s")
  }

  /// A loop held up after a playback underrun loses audio without a word
  /// from the device: a sound server's idle sink (here a null sink with no
  /// other player) starts a restarted stream seconds late while the loop
  /// waits on it, and the server drops the capture side meanwhile. Stopped
  /// for 0.15 s to underrun, the loop accounts for every second of wall
  /// time after its first audio: the stream's own, or a reported gap.
  @Test func audioLostWhileAnUnderrunRecoversIsAGap() throws {
    let devices = try VirtualDevices()
    let player = try playTone(devices, bufferTime: 0.05)
    defer { player.signal(SIGTERM) }
    let job = try devices.startMicloop([
      "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period", "256",
      "--json",
    ])
    defer { job.signal(SIGKILL) }
    #expect(job.waitForOutput("\"level\"", timeout: 30))
    let started = Date().addingTimeInterval(-0.1)
    usleep(1_000_000)
    job.signal(SIGSTOP)
    usleep(150_000)
    job.signal(SIGCONT)
    usleep(4_000_000)
    job.signal(SIGINT)
    let result = job.result()
    let wall = Date().timeIntervalSince(started)
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = RecordCommandTests.lines(result.output)
    let streamed = try #require(
      events.last { $0["event"] as? String == "summary" }?["duration"] as? Double)
    let gaps = events.filter { $0["event"] as? String == "gap" }
      .compactMap { $0["duration"] as? Double }.reduce(0, +)
    #expect(
      abs(streamed + gaps - wall) < 0.4,
      "\(streamed) s streamed and \(gaps) s of gaps in \(wall) s: \(result.output.suffix(600))")
  }

  @Test func serverKilledDuringRecordingKeepsWhatWasCaptured() throws {
    let devices = try VirtualDevices()
    let player = try playTone(devices)
    defer { player.signal(SIGTERM) }
    let directory = try MicLoopBinary.temporaryDirectory()
    let recording = directory.appendingPathComponent("cut.wav").path
    let loop = try devices.startMicloop([
      "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period", "1024",
      "--periods", "4", "--record",
      recording,
      "--duration", "30",
    ])
    #expect(waitForRecording(recording, moreThan: 48_000))
    devices.stop()
    let result = loop.result()
    #expect(result.exitedNormally)
    #expect(result.status == 1)
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("went away"))
    let reader = try AudioFileReader(path: recording)
    let frames = try #require(reader.declaredFrameCount)
    #expect(frames > 48_000 && frames < 30 * 48_000, "\(frames) frames")
    #expect(result.errorOutput.contains("\(frames) frames already captured"))
  }
}
