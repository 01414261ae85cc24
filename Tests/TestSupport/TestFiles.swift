import AudioFiles
import Foundation

/// Makes test audio files with sox and by hand, in a fresh temporary folder
/// removed when the test process exits.
public struct TestFiles {
  public let directory: URL

  public init() throws { directory = try ScratchDirectory.untilExit("kit") }

  public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// Runs a program and returns its standard output and error together.
  @discardableResult
  public func run(_ arguments: [String]) throws -> String { try Self.output(of: arguments) }

  /// Runs a program (found on the PATH, or by its path) and returns its
  /// standard output and error together.
  public static func output(of arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  /// `sox FILE -n stats` "Pk lev dB" and "RMS lev dB" of the overall column.
  public func soxLevels(_ file: String) throws -> (peak: Double, rms: Double) {
    let text = try run(["sox", file, "-n", "stats"])
    func value(_ label: String) -> Double {
      let line = text.split(separator: "\n").first { $0.hasPrefix(label) } ?? ""
      return Double(line.split(separator: " ").dropFirst(3).first ?? "") ?? .nan
    }
    return (value("Pk lev dB"), value("RMS lev dB"))
  }

  /// A 32-bit float WAV holding `samples` (interleaved) as they are (NaN included).
  public func writeFloatWAV(
    _ name: String, samples: [Float], rate: Double = 48_000, channels: Int = 1
  ) throws -> String {
    let file = path(name)
    let writer = try AudioFileWriter(
      path: file, sampleRate: rate, channelCount: channels, encoding: .float)
    try writer.write(samples)
    writer.close()
    return file
  }
}

extension TestFiles {
  /// Writes a 16-bit mono WAV whose header claims `rate` (any value a
  /// 32-bit field holds), with `samples` samples of a quiet square wave.
  public static func writeWAVHeaderClaiming(rate: UInt32, samples: Int, to path: String) throws {
    var data = Data()
    func append<T: FixedWidthInteger>(_ value: T) {
      withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }
    let bytes = UInt32(samples * 2)
    data.append(contentsOf: Array("RIFF".utf8))
    append(UInt32(36) + bytes)
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    append(UInt32(16))
    append(UInt16(1))
    append(UInt16(1))
    append(rate)
    append(rate &* 2)
    append(UInt16(2))
    append(UInt16(16))
    data.append(contentsOf: Array("data".utf8))
    append(bytes)
    for index in 0..<samples { append(Int16(index / 8 % 2 == 0 ? 1000 : -1000)) }
    try data.write(to: URL(fileURLWithPath: path))
  }
}

extension TestFiles {
  /// A WAV whose format tag says MPEG layer 3 (0x55) but whose data is a
  /// plain 16-bit tone, as a mutated header makes it.
  public static func wavClaimingMPEG() -> Data {
    var data = Data()
    func append<T: FixedWidthInteger>(_ value: T) {
      withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }
    let samples = (0..<48_000).map {
      Int16(8_000 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000))
    }
    data.append(contentsOf: Array("RIFF".utf8))
    append(UInt32(4 + 8 + 30 + 8 + samples.count * 2))
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    append(UInt32(30))
    append(UInt16(0x55))
    append(UInt16(1))
    append(UInt32(48_000))
    append(UInt32(96_000))
    append(UInt16(2))
    append(UInt16(16))
    // MPEGLAYER3WAVEFORMAT's extra bytes.
    for value: UInt16 in [12, 1] { append(value) }
    append(UInt32(2))
    for value: UInt16 in [1_152, 1, 0] { append(value) }
    data.append(contentsOf: Array("data".utf8))
    append(UInt32(samples.count * 2))
    for sample in samples { append(sample) }
    return data
  }
}
