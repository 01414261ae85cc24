import AudioFiles
import Foundation
import TestSupport
import Testing

@testable import Recording

/// A recording's file is a whole `.part` file from its first block on:
/// before that it has another name, so a kill while its header is made
/// leaves no `.part` file that holds nothing.
@Suite struct RecordingFileTests {
  static let broadcast = BroadcastInfo(
    description: "test", originator: "micloop", originationDate: "2026-11-27",
    originationTime: "08-00-00", timeReference: 0)

  @Test(arguments: ["wav", "flac"])
  func aFileTakesItsPartNameWithItsFirstBlock(fileExtension: String) throws {
    let directory = try TemporaryDirectory.make()
    let file = try RecordingFile(
      directory: directory, base: "take", fileExtension: fileExtension, startFrame: 0,
      startTime: 0, sampleRate: 48_000, channelCount: 1, encoding: .pcm24,
      broadcast: Self.broadcast)
    #expect(access(file.partPath, F_OK) != 0)
    #expect(access(file.openingPath, F_OK) == 0)
    let block = [Float](repeating: 0.25, count: 480)
    try block.withUnsafeBufferPointer { try file.write($0.baseAddress!, frameCount: 480) }
    #expect(access(file.openingPath, F_OK) != 0)
    #expect(access(file.partPath, F_OK) == 0)
    if fileExtension == "wav" {
      // A WAV's header counts every block as it is written (a FLAC's at the close).
      #expect(try AudioFileReader(path: file.partPath).declaredFrameCount == 480)
    }
    file.closeAudio()
    #expect(try AudioFileReader(path: file.partPath).declaredFrameCount == 480)
  }

  @Test func aFileDiscardedBeforeItsFirstBlockLeavesNothing() throws {
    let directory = try TemporaryDirectory.make()
    let file = try RecordingFile(
      directory: directory, base: "empty", fileExtension: "wav", startFrame: 0, startTime: 0,
      sampleRate: 48_000, channelCount: 2, encoding: .pcm16,
      broadcast: Self.broadcast)
    file.discard()
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
  }
}

/// A fresh temporary directory.
enum TemporaryDirectory {
  static func make() throws -> String {
    try ScratchDirectory.untilExit("recordingfile").path
  }
}
