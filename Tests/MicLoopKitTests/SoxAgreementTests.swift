import AudioFiles
import Foundation
import Metering
import MicLoopKit
import TestSupport
import Testing

/// Peak and RMS must equal `sox FILE -n stats` within 0.01 dB.
@Suite struct SoxAgreementTests {
  static let formats: [(name: String, soxArguments: [String])] = [
    ("a.wav", ["-r", "8000", "-b", "16"]),
    ("b.wav", ["-r", "44100", "-b", "24"]),
    ("c.wav", ["-r", "48000", "-b", "32", "-e", "signed-integer"]),
    ("d.wav", ["-r", "96000", "-b", "32", "-e", "floating-point"]),
    ("e.wav", ["-r", "22050", "-b", "8", "-e", "unsigned-integer"]),
    ("f.flac", ["-r", "16000", "-b", "16"]),
    ("g.flac", ["-r", "48000", "-b", "24"]),
    ("h.wav", ["-r", "11025", "-b", "16"]),
  ]
  static let signals: [[String]] = [
    ["synth", "2.3", "sine", "997", "vol", "0.7", "dcshift", "0.05"],
    ["synth", "1.7", "pinknoise", "vol", "0.4"],
    ["synth", "3.1", "sine", "300-3000", "vol", "0.02"],
  ]

  @Test(arguments: 0..<formats.count)
  func levelsMatchSox(formatIndex: Int) throws {
    let files = try TestFiles()
    let format = Self.formats[formatIndex]
    for (index, signal) in Self.signals.enumerated() {
      let file = files.path("\(index)-\(format.name)")
      try files.run(["sox", "-n"] + format.soxArguments + [file] + signal)
      let sox = try files.soxLevels(file)
      let reader = try AudioFileReader(path: file)
      let outcome = try FileMeter.run(reader, settings: MeterSettings()) { _ in }
      let peak = try #require(outcome.summary.peakDecibels)
      let rms = try #require(outcome.summary.rmsDecibels)
      #expect(abs(peak - sox.peak) <= 0.01, "\(file): peak \(peak) vs sox \(sox.peak)")
      #expect(abs(rms - sox.rms) <= 0.01, "\(file): RMS \(rms) vs sox \(sox.rms)")
    }
  }

  @Test func aes17AddsThreeDecibels() throws {
    let files = try TestFiles()
    let file = files.path("sine.wav")
    try files.run([
      "sox", "-n", "-r", "48000", "-b", "24", file, "synth", "1", "sine", "1000", "vol", "0.5",
    ])
    var settings = MeterSettings()
    settings.rmsConvention = .aes17
    let outcome = try FileMeter.run(try AudioFileReader(path: file), settings: settings) { _ in }
    #expect(abs(outcome.summary.rmsDecibels! - (-6.02)) < 0.01)
  }
}
