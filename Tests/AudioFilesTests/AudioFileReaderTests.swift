import AudioFiles
import Foundation
import TestSupport
import Testing

@Suite struct AudioFileReaderTests {
  @Test func badPathsNameTheProblem() throws {
    let files = try TestFiles()
    #expect(throws: AudioFileError.notFound(path: files.path("none.wav"))) {
      try AudioFileReader(path: files.path("none.wav"))
    }
    #expect(throws: AudioFileError.isDirectory(path: files.directory.path)) {
      try AudioFileReader(path: files.directory.path)
    }
    FileManager.default.createFile(atPath: files.path("empty.wav"), contents: Data())
    #expect(throws: AudioFileError.empty(path: files.path("empty.wav"))) {
      try AudioFileReader(path: files.path("empty.wav"))
    }
    FileManager.default.createFile(atPath: files.path("notes.txt"), contents: Data("hello\n".utf8))
    do {
      _ = try AudioFileReader(path: files.path("notes.txt"))
      Issue.record("a text file was accepted")
    } catch {
      guard case .notAudio = error else { throw error }
      #expect(!error.description.contains("\n"))
    }
  }

  /// Every 16-bit value reads back as itself over 32,768, exactly, in
  /// reads of any length.
  @Test func everySixteenBitValueReadsBackExactly() throws {
    let files = try TestFiles()
    let file = files.path("all.wav")
    let values = (0..<65_536).map { Float($0 - 32_768) / 32_768 }
    let writer = try AudioFileWriter(
      path: file, sampleRate: 48_000, channelCount: 1, encoding: .pcm16)
    try writer.write(values)
    writer.close()
    let reader = try AudioFileReader(path: file)
    var read = [Float]()
    var buffer = [Float](repeating: .nan, count: 4_099)
    var length = 1
    while true {
      let frames = try buffer.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: length)
      }
      if frames == 0 { break }
      read += buffer.prefix(frames)
      length = length * 5 % 4_099 + 1
    }
    #expect(read.count == values.count)
    #expect(zip(read, values).allSatisfy { $0.bitPattern == $1.bitPattern })
  }

  @Test func formatIsDescribed() throws {
    let files = try TestFiles()
    let file = files.path("x.flac")
    try files.run([
      "sox", "-n", "-r", "44100", "-b", "24", "-c", "2", file, "synth", "0.1", "sine", "440",
    ])
    let reader = try AudioFileReader(path: file)
    #expect(reader.formatName == "FLAC 24-bit")
    #expect(reader.channelCount == 2)
    #expect(reader.sampleRate == 44_100)
  }
}

@Suite struct AudioFileWriterTests {
  @Test func fileIsValidWhileStillBeingWritten() throws {
    let files = try TestFiles()
    let file = files.path("live.wav")
    let writer = try AudioFileWriter(
      path: file, sampleRate: 48_000, channelCount: 2, encoding: .pcm24)
    try writer.write([Float](repeating: 0.25, count: 2 * 4800))
    // Not closed: the header must already describe the frames written.
    let reader = try AudioFileReader(path: file)
    #expect(reader.declaredFrameCount == 4800)
    #expect(reader.channelCount == 2)
    writer.close()
  }

  @Test func unknownExtensionIsRefusedWithTheFix() throws {
    let files = try TestFiles()
    do {
      _ = try AudioFileWriter(path: files.path("x.mp9"), sampleRate: 48_000, channelCount: 1)
      Issue.record("accepted .mp9")
    } catch {
      #expect(error.description.contains(".wav"))
    }
  }

  @Test func flacRoundTripKeepsLevels() throws {
    let files = try TestFiles()
    let file = files.path("round.flac")
    let writer = try AudioFileWriter(
      path: file, sampleRate: 44_100, channelCount: 1, encoding: .pcm24)
    try writer.write(
      (0..<44_100).map { Float(0.5 * sin(2 * Double.pi * 441 * Double($0) / 44_100)) })
    writer.close()
    let reader = try AudioFileReader(path: file)
    var samples = [Float](repeating: 0, count: 50_000)
    let frames = try samples.withUnsafeMutableBufferPointer {
      try reader.read(into: $0.baseAddress!, frameCount: 50_000)
    }
    #expect(frames == 44_100)
    let peak = samples.prefix(frames).map { abs(Double($0)) }.max() ?? 0
    let power = samples.prefix(frames).map { Double($0) * Double($0) }.reduce(0, +) / Double(frames)
    #expect(abs(20 * log10(peak) - -6.0206) < 0.01)
    #expect(abs(10 * log10(power) - -9.0309) < 0.01)
  }
}
