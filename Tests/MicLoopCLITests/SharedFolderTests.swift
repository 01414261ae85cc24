import AudioFiles
import Foundation
import TestSupport
import Testing

/// Two `micloop record` processes writing into one folder at the same
/// time with one fixed name template, so that every file of one is named
/// as the other's is at the same moment: each takes its own name
/// atomically, neither meets the other's file or loses a transmission.
@Suite struct SharedFolderTests {
  @Test func twoRecordersRacingForOneNameLoseNothing() throws {
    let scratch = try ScratchDirectory("shared-folder")
    var scene = TransmissionScene(seconds: 40, floor: -46, seed: 33, rate: 8_000)
    let count = 40
    for index in 0..<count { scene.talk(at: 0.5 + Double(index) * 0.95, seconds: 0.4) }
    let input = scratch.file("scene.wav")
    try scene.write(to: input)
    let out = scratch.file("rec")
    let options = [
      "record", "--input", input, "--dir", out, "--json", "--name", "call", "--trigger",
      "level:-34", "--hang", "0.2", "--min", "0.1", "--pre-roll", "0.1",
    ]
    for round in 0..<3 {
      let recorders = try (0..<2).map { _ in
        try SpawnedProcess([MicLoopBinary.path] + options, environment: [:])
      }
      var names = [String]()
      for recorder in recorders {
        let result = recorder.result()
        #expect(result.status == 0, "round \(round): \(result.errorOutput)")
        let lines = RecordCommandTests.lines(result.output)
        #expect(RecordCommandTests.events(lines, "gap").isEmpty, "round \(round): \(result.output)")
        let recordings = RecordCommandTests.events(lines, "recording")
        #expect(recordings.count == count, "round \(round): \(recordings.count) files")
        for recording in recordings {
          let name = try #require(recording["file"] as? String)
          names.append(name)
          let frames = try AudioFileReader(path: out + "/" + name).declaredFrameCount
          #expect(frames == Int64(recording["frames"] as? Int ?? -1), "\(name)")
        }
      }
      #expect(Set(names).count == names.count, "round \(round): a name given twice")
    }
  }
}
