import AudioFiles
import Foundation
import Recording
import TestSupport
import Testing

/// More audio between two updates than `largestArrival` says (a caller
/// that appends a long stretch at once) loses nothing: the look-back grows
/// to hold it, and the file holds every frame of its transmission.
@Suite struct LargeArrivalTests {
  @Test func aLongStretchAppendedAtOnceIsRecordedWhole() throws {
    let scratch = try ScratchDirectory("large-arrival")
    var events = [RecorderEvent]()
    // The default settings expect at most 1 s between updates.
    let recorder = try RetentionTests.recorder(in: scratch.file("rec")) { events.append($0) }
    let rate = RetentionTests.rate
    // 5 s of silence, 10 s of a −10 dBFS tone, 15 s of silence: one append.
    let frames = Int(30 * rate)
    let loud = Int(5 * rate)..<Int(15 * rate)
    let samples = (0..<frames).map { loud.contains($0) ? Float(0.3 * sin(Double($0) * 0.7)) : 0 }
    samples.withUnsafeBufferPointer { recorder.append($0.baseAddress!, frameCount: frames) }
    recorder.update()
    let summary = recorder.finish()

    let files = events.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    try #require(files.count == 1, "\(events)")
    let file = files[0]
    #expect(file.startFrame <= Int64(loud.lowerBound))
    #expect(file.startFrame + file.frames >= Int64(loud.upperBound))
    #expect(summary.frames == Int64(frames) && summary.gaps == 0)
    // Every frame of the tone is in the file, at its place.
    let reader = try AudioFileReader(path: file.path)
    #expect(reader.declaredFrameCount == file.frames)
    var heard = [Float](repeating: 0, count: Int(file.frames))
    let read = try heard.withUnsafeMutableBufferPointer {
      try reader.read(into: $0.baseAddress!, frameCount: Int(file.frames))
    }
    #expect(read == Int(file.frames))
    let offset = loud.lowerBound - Int(file.startFrame)
    let tone = heard[offset..<(offset + loud.count)]
    let silent = tone.filter { abs($0) < 1e-3 }.count
    #expect(silent < loud.count / 50, "\(silent) of \(loud.count) tone frames are silent")
  }
}
