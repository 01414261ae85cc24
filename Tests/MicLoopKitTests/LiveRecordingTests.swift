import DuplexIO
import DuplexIOTesting
import Foundation
import MicLoopKit
import Synchronization
import TestSupport
import Testing
import TonePlans

/// The recorder fed live: the processor a recording job runs
/// (`LiveRecordingFeed.jobSettings`) on a simulated capture device whose
/// microphone hears two transmissions, drained each control cycle into a
/// `LiveRecordingFeed` as the live job does. The audio thread never
/// allocates; the files come out as they do from a file.
@Suite(.serialized) struct LiveRecordingTests {
  static let rate = 48_000.0
  static let period = 256

  @Test func recordingLiveNeverAllocatesOnTheAudioThreadAndMakesOneFilePerTransmission() throws {
    var scene = TransmissionScene(seconds: 14, floor: -50, seed: 21, rate: Self.rate)
    scene.talk(at: 1.0, seconds: 1.5)
    scene.talk(at: 7.0, seconds: 2.0)
    let recording = RecorderSettings()
    let job = LiveRecordingFeed.jobSettings(
      for: recording, detection: ToneDetectionSettings(), duration: nil,
      recovery: DeviceRecovery(), captureBuffer: 20)
    #expect(job.handsOverAudio)
    var live = job.live
    // What LiveJob switches on for a job that hands over its audio.
    live.isRecording = true
    let processor = LiveProcessor(settings: live)
    let client = WatchedClient(processor)
    var configuration = DuplexConfiguration(.capture)
    configuration.captureDevice = "sim:mic"
    configuration.alsa.usesRealtimePriority = false
    configuration.settlingTime = 0
    // One more period than the scene: the loop starts over after it.
    let device = SimulatedDevicePair(
      periodFrames: Self.period, captureLoop: scene.samples + [Float](repeating: 0, count: 4096))
    let unit = DuplexUnit(configuration: configuration, backend: device, client: client)
    try unit.initialize()
    try unit.start()

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "micloop-live-recording-\(getpid())-\(UUID().uuidString)"
    ).path
    var files = [RecordedFile]()
    let recorder = try Recorder(
      settings: recording, sampleRate: Self.rate, channelCount: 1, encoding: .float,
      directory: directory, clock: StreamClock(sampleRate: Self.rate), source: "sim:mic"
    ) { event in
      if case .recording(let file) = event { files.append(file) }
    }
    let feed = LiveRecordingFeed(recorder: recorder, processor: processor) { false }
    func drain() {
      processor.events.drain { events in
        for event in events { feed.handle(.meter(event.meterEvent)) }
      }
      processor.recording?.drain { feed.captured($0) }
      _ = feed.shouldStop()
    }
    let periods = scene.samples.count / Self.period
    let step = 50
    var advanced = 0
    while advanced < periods {
      let count = min(step, periods - advanced)
      device.advance(periods: count)
      advanced += count
      #expect(device.waitUntilCompleted(advanced))
      drain()
    }
    let counted = client.allocations.load(ordering: .acquiring)
    unit.stop()
    drain()
    feed.finish()

    #expect(counted == 0)
    #expect(files.count == 2, "\(files.map { Double($0.startFrame) / Self.rate })")
    for (file, onset) in zip(files, scene.onsets) {
      #expect(file.startFrame <= Int64(onset))
      #expect(file.startFrame >= Int64(onset) - Int64(0.4 * Self.rate))
    }
    try? FileManager.default.removeItem(atPath: directory)
  }
}
