import AudioFiles
import Foundation
import TestSupport

/// Runs the built `micloop` binary (MICLOOP_BIN, or the debug build next to
/// these tests) and captures what it prints.
struct MicLoopBinary {
  struct Result {
    var status: Int32
    var exitedNormally: Bool
    var output: String
    var errorOutput: String
    var errorLines: [Substring] { errorOutput.split(separator: "\n") }
    /// The last line of standard output as a JSON object (a summary).
    var lastJSONObject: [String: Any]? {
      let last = output.split(separator: "\n").last ?? ""
      return (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any]
    }
  }

  static var path: String {
    if let path = ProcessInfo.processInfo.environment["MICLOOP_BIN"],
      FileManager.default.isExecutableFile(atPath: path)
    {
      return path
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent()
      .deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/micloop").path
  }

  static func run(
    _ arguments: [String], standardInput: String? = nil, environment: [String: String]? = nil
  )
    throws -> Result
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    if let standardInput {
      process.standardInput = FileHandle(forReadingAtPath: standardInput)
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    return collect(process, output: output, error: error)
  }

  /// Runs `script` in sh with $M set to the micloop binary and $DIR to
  /// `directory`, and gathers what it printed.
  static func script(_ script: String, directory: URL) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    process.environment = ProcessInfo.processInfo.environment.merging(
      ["M": path, "DIR": directory.path]) { $1 }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return collect(process, output: output, error: error)
  }

  /// Waits for a started process and gathers what it printed.
  static func collect(_ process: Process, output: Pipe, error: Pipe) -> Result {
    // Read both pipes while the process runs so neither can fill up.
    nonisolated(unsafe) var errorData = Data()
    let reader = Thread { errorData = error.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !reader.isFinished { usleep(1000) }
    return Result(
      status: process.terminationStatus, exitedNormally: process.terminationReason == .exit,
      output: String(decoding: outputData, as: UTF8.self),
      errorOutput: String(decoding: errorData, as: UTF8.self))
  }

  /// Runs a helper program (sox, espeak-ng) and fails the test if it fails.
  static func shell(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw CocoaError(
        .executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(arguments) failed"])
    }
  }

  /// A fresh folder removed when the test process exits (a suite holds a
  /// `ScratchDirectory` instead, removed after each test).
  static func temporaryDirectory() throws -> URL { try ScratchDirectory.untilExit("cli") }
}

extension MicLoopBinary {
  /// A 16-bit mono WAV whose header says `rate` Hz (any value, as a damaged
  /// or hostile file may), holding `frames` frames of a square wave.
  static func writeWAVHeader(_ path: String, rate: Int, frames: Int) throws {
    var bytes = [UInt8]()
    func append32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    func append16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    bytes += Array("RIFF".utf8)
    append32(UInt32(36 + frames * 2))
    bytes += Array("WAVEfmt ".utf8)
    append32(16)
    append16(1)
    append16(1)
    append32(UInt32(truncatingIfNeeded: rate))
    append32(UInt32(truncatingIfNeeded: rate &* 2))
    append16(2)
    append16(16)
    bytes += Array("data".utf8)
    append32(UInt32(frames * 2))
    for frame in 0..<frames { append16(UInt16(bitPattern: (frame / 20) % 2 == 0 ? 8000 : -8000)) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  /// A float WAV holding a 1 kHz tone with a NaN and an infinity in it.
  static func writeFloatWAVWithNaN(_ path: String) throws {
    var samples = (0..<4800).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    samples[10] = .nan
    samples[20] = .infinity
    let writer = try AudioFileWriter(
      path: path, sampleRate: 48_000, channelCount: 1, encoding: .float)
    try writer.write(samples)
    writer.close()
  }
}

extension MicLoopBinary {
  /// What multimon-ng decodes from a file (its own lines, e.g. "DTMF: 1"):
  /// the independent oracle for what micloop sends.
  static func multimon(_ demodulator: String, _ path: String) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/multimon-ng")
    process.arguments = ["-q", "-t", "wav", "-a", demodulator, path]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
  }
}

extension MicLoopBinary {
  /// Every sample of an audio file, interleaved.
  static func samples(_ path: String) throws -> [Float] {
    let reader = try AudioFileReader(path: path)
    var all = [Float]()
    var block = [Float](repeating: 0, count: 4096 * reader.channelCount)
    while true {
      let frames = try block.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: 4096)
      }
      if frames == 0 { break }
      all += block.prefix(frames * reader.channelCount)
    }
    return all
  }

  /// The samples from the first to the last one above `threshold`, 10 ms in
  /// from either end (ramps, a stream's start and stop); empty when there
  /// is not that much.
  static func sounding(_ samples: [Float], threshold: Float) -> ArraySlice<Float> {
    guard let first = samples.firstIndex(where: { abs($0) > threshold }),
      let last = samples.lastIndex(where: { abs($0) > threshold }), last > first + 960
    else { return [] }
    return samples[(first + 480)..<(last - 480)]
  }
}
