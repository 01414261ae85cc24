import AudioFiles
import Foundation
import Metering
import MicLoopKit
import TestSupport
import Testing

@Suite struct FileMeterTests {
  @Test func loudestChannelIsReportedAndChannelCanBePicked() throws {
    let files = try TestFiles()
    let file = files.path("stereo.wav")
    try files.run([
      "sox", "-n", "-r", "48000", "-b", "16", "-c", "2", file, "synth", "1", "sine", "440", "sine",
      "440",
      "remix", "1v0.1", "2v0.5",
    ])
    let all = try FileMeter.run(try AudioFileReader(path: file), settings: MeterSettings()) { _ in }
    #expect(all.summary.channels.count == 2)
    #expect(abs(all.summary.peakDecibels! - 20 * log10(0.5)) < 0.01)
    var first = MeterSettings()
    first.channel = 0
    let left = try FileMeter.run(try AudioFileReader(path: file), settings: first) { _ in }
    #expect(abs(left.summary.peakDecibels! - 20 * log10(0.1)) < 0.01)
  }

  @Test func nanAndInfinityAreCountedNotPropagated() throws {
    let files = try TestFiles()
    var samples = (0..<48_000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    samples[100] = .nan
    samples[2000] = .infinity
    samples[30_000] = -.infinity
    let file = try files.writeFloatWAV("nan.wav", samples: samples)
    var levels = [LevelReading]()
    let outcome = try FileMeter.run(try AudioFileReader(path: file), settings: MeterSettings()) {
      if case .level(let reading) = $0 { levels.append(reading) }
    }
    #expect(outcome.summary.invalidSamples == 3)
    #expect(abs(outcome.summary.peakDecibels! - -6.02) < 0.01)
    #expect(outcome.summary.rmsDecibels!.isFinite)
    #expect(levels.allSatisfy { $0.peakDecibels.map { $0.isFinite } ?? true })
  }

  @Test func intervalsCoverTheFileAndEndWithTheSummary() throws {
    let files = try TestFiles()
    let file = files.path("tone.wav")
    try files.run(["sox", "-n", "-r", "44100", "-b", "16", file, "synth", "1.05", "sine", "500"])
    var events = [MeterEvent]()
    var settings = MeterSettings()
    settings.interval = 0.25
    _ = try FileMeter.run(try AudioFileReader(path: file), settings: settings) { events.append($0) }
    let times = events.compactMap { event -> Double? in
      if case .level(let reading) = event { return reading.time }
      return nil
    }
    #expect(times.count == 5)
    #expect(abs(times[0] - 0.25) < 1e-9)
    #expect(abs(times[4] - 1.05) < 1e-9)
    guard case .summary(let summary) = events.last else {
      Issue.record("last event is not the summary")
      return
    }
    #expect(abs(summary.duration - 1.05) < 1e-9)
  }

  @Test func speechInNoiseIsDetectedAsTalk() throws {
    let files = try TestFiles()
    let speech = files.path("speech.wav")
    try files.run(["espeak-ng", "-w", speech, "Testing the microphone, one two three."])
    let file = files.path("mixed.wav")
    // Two seconds of noise, the sentence, then two more seconds of noise.
    try files.run([
      "sox", "-n", "-r", "22050", "-c", "1", files.path("noise.wav"), "synth", "2", "whitenoise",
      "vol", "0.01",
    ])
    try files.run([
      "sox", files.path("noise.wav"), speech, files.path("noise.wav"), files.path("concat.wav"),
    ])
    try files.run([
      "sox", "-m", files.path("concat.wav"), "|sox -n -r 22050 -c 1 -p synth 9 whitenoise vol 0.01",
      file, "trim", "0", "8",
    ])
    var starts = [Double]()
    var ends = [Double]()
    _ = try FileMeter.run(try AudioFileReader(path: file), settings: MeterSettings()) {
      if case .talkStart(let time) = $0 { starts.append(time) }
      if case .talkEnd(let time) = $0 { ends.append(time) }
    }
    #expect(starts.count == 1)
    #expect(abs((starts.first ?? 0) - 2.0) < 0.25)
    #expect(ends.count == 1)
  }

  /// Synthesized or noise-gated speech has digital silence between words:
  /// that silence is the background, and every sentence is talk.
  @Test func speechWithDigitalSilenceBetweenWordsIsTalk() throws {
    let files = try TestFiles()
    let speech = files.path("speech.wav")
    try files.run([
      "espeak-ng", "-w", speech, "Welcome to the show. Today we talk about microphones.",
    ])
    let file = files.path("padded.wav")
    try files.run(["sox", speech, file, "pad", "1", "1"])
    var starts = [Double]()
    let outcome = try FileMeter.run(try AudioFileReader(path: file), settings: MeterSettings()) {
      if case .talkStart(let time) = $0 { starts.append(time) }
    }
    #expect(!starts.isEmpty)
    #expect(abs((starts.first ?? 0) - 1.0) < 0.2, "\(starts)")
    #expect(outcome.summary.talkSeconds > 2, "\(outcome.summary.talkSeconds) s of talk")
  }

  @Test func truncatedWAVIsReportedAfterItsFrames() throws {
    let files = try TestFiles()
    let whole = files.path("whole.wav")
    try files.run(["sox", "-n", "-r", "48000", "-b", "16", whole, "synth", "1", "sine", "440"])
    let data = try Data(contentsOf: URL(fileURLWithPath: whole))
    let cut = files.path("cut.wav")
    try data.prefix(44 + 2 * 10_000).write(to: URL(fileURLWithPath: cut))
    let outcome = try FileMeter.run(try AudioFileReader(path: cut), settings: MeterSettings()) {
      _ in
    }
    #expect(abs(outcome.summary.duration - 10_000 / 48_000) < 1e-9)
    #expect(outcome.problem == .truncated(path: cut, expectedFrames: 48_000, readFrames: 10_000))
  }

  @Test func headerOnlyWAVIsEmpty() throws {
    let files = try TestFiles()
    let file = try files.writeFloatWAV("header.wav", samples: [])
    #expect(throws: AudioFileError.self) {
      _ = try FileMeter.run(try AudioFileReader(path: file), settings: MeterSettings()) { _ in }
    }
  }

  /// The file meter splits the work over two threads; its events must be
  /// exactly those of the one-thread processor on the same samples, for any
  /// interval, channel count and block size, loudness included (seeded
  /// noise bursts, so talk starts and ends too).
  @Test(.slow, arguments: [(1, 0.1, 16_384), (2, 0.0371, 4_096), (3, 0.001, 1_000)])
  func eventsEqualTheOneThreadProcessor(channels: Int, interval: Double, block: Int) throws {
    let files = try TestFiles()
    var random = SplitMix(seed: UInt64(channels))
    let frames = 5 * 48_000 + 123
    var samples = [Float](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
      let burst = (frame / 24_000) % 3 == 1 ? Float(0.3) : 0.003
      for channel in 0..<channels {
        samples[frame * channels + channel] =
          burst * Float(channel + 1) / Float(channels) * Float.random(in: -1...1, using: &random)
      }
    }
    let file = try files.writeFloatWAV("noise.wav", samples: samples, channels: channels)
    var settings = MeterSettings()
    settings.interval = interval
    settings.measuresLoudness = true
    var threaded = [MeterEvent]()
    _ = try FileMeter.run(
      try AudioFileReader(path: file), settings: settings, blockFrames: block
    ) { threaded.append($0) }
    // Fed the same blocks, so that every float sum is taken in the same order.
    let processor = MeterProcessor(
      sampleRate: 48_000, channelCount: channels, settings: settings, maximumBlock: block)
    var direct = [MeterEvent]()
    samples.withUnsafeMutableBufferPointer { buffer in
      for start in stride(from: 0, to: frames, by: block) {
        processor.process(
          buffer.baseAddress! + start * channels, frameCount: min(block, frames - start)
        ) { direct.append($0) }
      }
    }
    processor.finish { direct.append($0) }
    #expect(threaded.count == direct.count)
    #expect(threaded.contains { if case .talkStart = $0 { true } else { false } })
    let firstDifference = threaded.indices.first { $0 < direct.count && threaded[$0] != direct[$0] }
    #expect(firstDifference == nil, "\(firstDifference.map { (threaded[$0], direct[$0]) } as Any)")
  }

  @Test func stoppingEarlyEndsWithTheSummaryOfWhatWasRead() throws {
    let files = try TestFiles()
    let file = files.path("long.wav")
    try files.run(["sox", "-n", "-r", "48000", "-b", "16", file, "synth", "60", "sine", "440"])
    var asked = 0
    var events = [MeterEvent]()
    let outcome = try FileMeter.run(
      try AudioFileReader(path: file), settings: MeterSettings(), blockFrames: 4_800,
      shouldStop: {
        asked += 1
        return asked > 3
      }
    ) { events.append($0) }
    // The reader runs a few blocks ahead; what it read is still reported.
    #expect(outcome.summary.duration > 0.2 && outcome.summary.duration < 2)
    #expect(outcome.problem == nil)
    guard case .summary = events.last else {
      Issue.record("last event is not the summary")
      return
    }
  }
}
