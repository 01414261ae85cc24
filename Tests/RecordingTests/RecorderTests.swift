import AudioFiles
import Foundation
import Metering
import Recording
import SignalDSP
import TestSupport
import Testing

/// The recorder on synthesized transmissions (voiced syllables with soft
/// onsets in noise) read from files, sample-exact: one file per
/// transmission, each starting before its first audible sample, pauses
/// shorter than the hang never split, every frame of the session on the
/// index, and the open file valid while it is written.
@Suite struct RecorderTests {
  static let rate = 16_000.0
  /// Where the session's first sample sits on the wall clock.
  static let sessionStart = 1_795_000_000.0

  /// What a session reported.
  struct Session {
    var events: [RecorderEvent] = []
    var files: [RecordedFile] {
      events.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    }
    var blips: Int {
      events.filter { if case .blip = $0 { true } else { false } }.count
    }
    var summary: SessionSummary? {
      events.lazy.compactMap { if case .sessionEnded(let summary) = $0 { summary } else { nil } }
        .first
    }
    /// The timeline's spans (recording, idle, blip, gap) in index order.
    var spans: [(start: Int64, frames: Int64)] {
      events.compactMap {
        switch $0 {
        case .recording(let file): (file.startFrame, file.frames)
        case .idle(let start, let frames), .blip(let start, let frames, _): (start, frames)
        case .gap(let start, let frames, _, _): (start, frames)
        default: nil
        }
      }
    }
  }

  static func settings(hang: Double = 1.5) -> RecorderSettings {
    var settings = RecorderSettings()
    settings.hang = hang
    return settings
  }

  /// Records `scene` from a file into a fresh directory.
  func record(_ scene: TransmissionScene, settings: RecorderSettings = settings()) throws -> (
    Session, String
  ) {
    let directory = try temporaryDirectory()
    let input = directory + "/input.wav"
    try scene.write(to: input)
    let reader = try AudioFileReader(path: input)
    var session = Session()
    let recorder = try Recorder(
      settings: settings, sampleRate: Self.rate, channelCount: 1, encoding: reader.fileEncoding,
      directory: directory + "/out",
      clock: StreamClock(sampleRate: Self.rate, startingAt: Self.sessionStart),
      source: "test"
    ) { session.events.append($0) }
    _ = try FileRecording.run(reader, recorder: recorder, decoder: nil)
    return (session, directory + "/out")
  }

  func samples(of path: String) throws -> [Float] {
    let reader = try AudioFileReader(path: path)
    var result = [Float]()
    var buffer = [Float](repeating: 0, count: 4096 * reader.channelCount)
    while true {
      let frames = try buffer.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: 4096)
      }
      guard frames > 0 else { break }
      result += buffer[..<(frames * reader.channelCount)]
    }
    return result
  }

  /// Three transmissions 3 s apart at 20 dB and at 10 dB SNR: three files,
  /// each starting before its first audible sample and no more than the
  /// pre-roll + 100 ms before it, named by that start, holding exactly
  /// the input's samples from its start frame.
  @Test(arguments: [20.0, 10.0])
  func eachTransmissionIsOneFileWithItsOnsetInside(snr: Double) throws {
    var scene = TransmissionScene(seconds: 16, floor: -26 - snr, seed: 3)
    scene.talk(at: 1.5, seconds: 1.6)
    scene.talk(at: 6.2, seconds: 2.2)
    scene.talk(at: 11.7, seconds: 1.1)
    let (session, directory) = try record(scene)
    let files = session.files
    #expect(files.count == 3, "\(files.map { Double($0.startFrame) / Self.rate })")
    let preRoll = Int64(0.3 * Self.rate)
    let slack = Int64(0.1 * Self.rate)
    for (file, onset) in zip(files, scene.onsets) {
      #expect(file.startFrame <= Int64(onset), "file at \(file.startFrame), onset at \(onset)")
      #expect(
        file.startFrame >= Int64(onset) - preRoll - slack,
        "file at \(file.startFrame), onset at \(onset)")
      // Named by the wall-clock time of its first sample, to the millisecond.
      let start = Self.sessionStart + Double(file.startFrame) / Self.rate
      let stamp = WallClockTime(epochSeconds: start).iso8601
      #expect(abs(file.start - start) < 1e-6)
      #expect(
        file.name.hasPrefix(stamp.prefix(19).replacingOccurrences(of: ":", with: "-")),
        "\(file.name) vs \(stamp)")
      let recorded = try samples(of: directory + "/" + file.name)
      #expect(recorded.count == Int(file.frames))
      let original = scene.samples[Int(file.startFrame)..<Int(file.startFrame + file.frames)]
      #expect(recorded == Array(original), "not the input's samples")
    }
    for (file, end) in zip(files, scene.ends) {
      // The tail is kept: the file ends a hang after the last sound, not before it.
      #expect(file.startFrame + file.frames >= Int64(end) + Int64(1.3 * Self.rate))
    }
  }

  /// A pause shorter than the hang less 50 ms never splits a file; one
  /// longer than the hang plus 50 ms always does.
  @Test(arguments: [0.5, 1.0, 1.5])
  func pausesSplitOnlyWhenLongerThanTheHang(hang: Double) throws {
    var scene = TransmissionScene(seconds: 5 + 4 * (hang + 1.5), floor: -46, seed: 5)
    // Talk starts once the detector has learned the room (its learningTime).
    var at = 2.0
    scene.talk(at: at, seconds: 1.2)
    at = Double(scene.ends[0]) / Self.rate + hang - 0.05
    scene.talk(at: at, seconds: 1.2)
    at = Double(scene.ends[1]) / Self.rate + hang + 0.05
    scene.talk(at: at, seconds: 1.2)
    let (session, _) = try record(scene, settings: Self.settings(hang: hang))
    let files = session.files
    #expect(
      files.count == 2,
      "\(files.map { (Double($0.startFrame) / Self.rate, Double($0.frames) / Self.rate) })")
    if files.count == 2 {
      // The first file holds the first two transmissions whole.
      #expect(files[0].startFrame <= Int64(scene.onsets[0]))
      #expect(files[0].startFrame + files[0].frames >= Int64(scene.ends[1]))
      #expect(files[1].startFrame <= Int64(scene.onsets[2]))
      #expect(files[1].startFrame >= Int64(scene.ends[1]))
    }
  }

  /// Clicks shorter than the minimum make no file, but are on the index
  /// as blips; the spans of the index cover the session without a gap or
  /// an overlap, to the sample.
  @Test func clicksAreBlipsAndTheTimelineAddsUp() throws {
    var scene = TransmissionScene(seconds: 12, floor: -50, seed: 9)
    scene.talk(at: 2.0, seconds: 0.1)
    scene.talk(at: 4.0, seconds: 1.5)
    scene.talk(at: 9.0, seconds: 0.1)
    let (session, _) = try record(scene)
    #expect(session.files.count == 1)
    #expect(session.blips == 2)
    var position: Int64 = 0
    for span in session.spans {
      #expect(span.start == position, "a span at \(span.start) after \(position)")
      position = span.start + span.frames
    }
    #expect(position == Int64(scene.samples.count))
    #expect(session.summary?.frames == Int64(scene.samples.count))
  }

  /// What is not a transmission, ten minutes of each: a fan (brown noise
  /// at about -33 dBFS) with keyboard clicks (10 ms decaying bursts,
  /// 0.2–1.5 s apart), with squelch tails (150 ms of white noise at -10
  /// dBFS every 5–15 s), or swelling by ±10 dB every 20 s like traffic
  /// passing (3 dB a second at its steepest): none makes a file.
  enum Noise: CaseIterable { case clicks, squelchTails, traffic }

  @Test(.slow, arguments: Noise.allCases)
  func noisesWithoutTalkMakeNoFile(noise: Noise) throws {
    let seconds = 600.0
    var scene = TransmissionScene(seconds: seconds, floor: -70, seed: 13)
    var random = SplitMix(seed: 14)
    var brown: Float = 0
    for index in scene.samples.indices {
      brown = 0.995 * brown + Float.random(in: -0.004...0.004, using: &random)
      let swell =
        noise == .traffic
        ? Float(Decibels.amplitude(10 * sin(2 * Double.pi * Double(index) / Self.rate / 20))) : 1
      scene.samples[index] += brown * swell
    }
    var at = 0.5
    while noise == .clicks && at < seconds - 1 {
      let start = Int(at * Self.rate)
      for offset in 0..<Int(0.01 * Self.rate) {
        let t = Double(offset) / Self.rate
        scene.samples[start + offset] += Float(
          0.3 * exp(-t / 0.002) * sin(2 * Double.pi * 2_000 * t))
      }
      at += Double.random(in: 0.2...1.5, using: &random)
    }
    at = 3
    while noise == .squelchTails && at < seconds - 2 {
      let start = Int(at * Self.rate)
      for offset in 0..<Int(0.15 * Self.rate) {
        scene.samples[start + offset] += Float.random(in: -0.3...0.3, using: &random)
      }
      at += Double.random(in: 5...15, using: &random)
    }
    let (session, _) = try record(scene)
    #expect(
      session.files.isEmpty,
      "\(noise): \(session.files.map { (Double($0.startFrame) / Self.rate, Double($0.frames) / Self.rate) })"
    )
    if noise == .squelchTails { #expect(session.blips >= 40, "\(session.blips) blips") }
  }

  /// While a transmission is being written its `.part` file is a valid
  /// WAV holding what was written so far (as after a crash); when it
  /// closes it is renamed, with a sidecar beside it.
  @Test func theOpenFileIsValidWhileItIsWritten() throws {
    var scene = TransmissionScene(seconds: 12, floor: -46, seed: 11)
    scene.talk(at: 2.0, seconds: 6)
    let directory = try temporaryDirectory()
    let recorder = try Recorder(
      settings: Self.settings(), sampleRate: Self.rate, channelCount: 1, encoding: .float,
      directory: directory,
      clock: StreamClock(sampleRate: Self.rate, startingAt: Self.sessionStart),
      source: "test"
    ) { _ in }
    let meter = MeterProcessor(
      sampleRate: Self.rate, channelCount: 1, settings: MeterSettings(), maximumBlock: 1600)
    let block = 1600
    var checked = false
    var position = 0
    var input = scene.samples
    input.withUnsafeMutableBufferPointer { buffer in
      while position < buffer.count {
        let frames = min(block, buffer.count - position)
        recorder.append(buffer.baseAddress! + position, frameCount: frames)
        meter.process(buffer.baseAddress! + position, frameCount: frames) { event in
          switch event {
          case .talkStart(let time): recorder.talk(isStart: true, at: time)
          case .talkEnd(let time): recorder.talk(isStart: false, at: time)
          default: break
          }
        }
        recorder.detector(reached: meter.time)
        recorder.update()
        position += frames
        if !checked, position >= Int(5 * Self.rate), let open = recorder.openFileName {
          checked = true
          #expect(open.hasSuffix(".part.wav"))
          let partial = try? self.samples(of: directory + "/" + open)
          #expect(
            (partial?.count ?? 0) >= Int(2 * Self.rate),
            "the open file holds \(partial?.count ?? 0) frames")
        }
      }
    }
    #expect(checked, "no file was open at 5 s")
    recorder.finish()
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(names.filter { $0.hasSuffix(".part.wav") }.isEmpty, "\(names)")
    #expect(names.filter { $0.hasSuffix(".wav") }.count == 1, "\(names)")
    #expect(names.filter { $0.hasSuffix(".json") }.count == 1, "\(names)")
  }

  func temporaryDirectory() throws -> String {
    try ScratchDirectory.untilExit("recorder").path
  }
}
