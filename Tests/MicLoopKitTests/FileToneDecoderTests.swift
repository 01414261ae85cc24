import AudioFiles
import Foundation
import MicLoopKit
import SignalDSP
import TestSupport
import Testing
import ToneDecoding
import TonePlans

/// Decoding a file on two threads (the reader measuring ahead, and at
/// higher rates leaving some decimation to the decoder) gives exactly the
/// events of one `ToneDecoder` fed the same file, however the work fell.
@Suite struct FileToneDecoderTests {
  /// DTMF keys and ZVEI1 calls in noise, `channels` alike.
  static func signal(rate: Double, channels: Int) -> [Float] {
    var random = SplitMix(seed: 3)
    var mono = [Float]()
    func add(_ frequencies: [Double], seconds: Double, amplitude: Double) {
      let count = Int(seconds * rate)
      for n in 0..<count {
        var value = 0.0
        for frequency in frequencies {
          value += amplitude * sin(2 * .pi * frequency * Double(n) / rate)
        }
        mono.append(Float(value))
      }
    }
    for round in 0..<6 {
      for key in "1234567890*#ABCD" {
        add(
          TonePlan.dtmf.frequencies(of: key)!, seconds: 0.05 + 0.01 * Double(round), amplitude: 0.2)
        add([], seconds: 0.06, amplitude: 0)
      }
      for digit in "12345" {
        add(TonePlan.zvei1.frequencies(of: digit)!, seconds: 0.07, amplitude: 0.3)
      }
      add([], seconds: 0.4, amplitude: 0)
    }
    for index in mono.indices { mono[index] += Float.random(in: -0.02...0.02, using: &random) }
    return mono.flatMap { sample in repeatElement(sample, count: channels) }
  }

  /// The events of one decoder fed the file as `FileToneDecoder` reads it.
  static func oneThread(_ path: String, plans: [TonePlan]) throws -> [ToneDecoderEvent] {
    let reader = try AudioFileReader(path: path)
    let decoder = try ToneDecoder(plans: plans, sampleRate: reader.sampleRate)
    let channels = reader.channelCount
    var buffer = [Float](repeating: 0, count: 8192 * channels)
    var mono = [Float](repeating: 0, count: 8192)
    var events = [ToneDecoderEvent]()
    while true {
      let frames = try buffer.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: 8192)
      }
      if frames == 0 { break }
      buffer.withUnsafeBufferPointer { input in
        mono.withUnsafeMutableBufferPointer { output in
          _ = MonoMix.mix(
            input.baseAddress!, frameCount: frames, channelCount: channels, channel: nil,
            into: output.baseAddress!)
        }
      }
      mono.withUnsafeBufferPointer {
        decoder.process(UnsafeBufferPointer(rebasing: $0[0..<frames])) { events.append($0) }
      }
    }
    decoder.finish { events.append($0) }
    return events
  }

  @Test(
    .slow,
    arguments: [
      (8_000.0, 1, Encoding.pcm16, "dtmf"), (48_000, 1, .pcm16, "dtmf"),
      (48_000, 2, .float, "dtmf"), (22_050, 1, .pcm16, "dtmf,zvei1"),
      (48_000, 1, .pcm16, "dtmf,zvei1,ctcss"),
    ])
  func twoThreadsGiveTheEventsOfOne(rate: Double, channels: Int, encoding: Encoding, plans: String)
    throws
  {
    let files = try TestFiles()
    let path = files.path("tones.wav")
    let writer = try AudioFileWriter(
      path: path, sampleRate: rate, channelCount: channels, encoding: encoding)
    try writer.write(Self.signal(rate: rate, channels: channels))
    writer.close()
    let planList = plans.split(separator: ",").map { TonePlan.named(String($0))! }
    let expected = try Self.oneThread(path, plans: planList)
    #expect(expected.count > 90)
    // The work falls differently from run to run; the events may not.
    for _ in 0..<3 {
      var events = [ToneDecoderEvent]()
      let reader = try AudioFileReader(path: path)
      let decoder = try ToneDecoder(plans: planList, sampleRate: rate)
      _ = try FileToneDecoder.run(reader, decoder: decoder) { events.append($0) }
      #expect(events == expected)
    }
  }
}

typealias Encoding = AudioFileEncoding
