import AudioFiles

/// Writes a live job's captured blocks, and the silence of its gaps, to a
/// recording; remembers the first write error and writes nothing after
/// it. Control thread.
final class RecordingSink {
  let writer: AudioFileWriter
  /// Frames in the file so far (silence included).
  private(set) var recordedFrames: Int64
  /// The error that stopped the recording, if any.
  private(set) var failure: AudioFileError?
  /// Frames of silence a write of a gap uses at a time.
  private static let silenceBlock = 4096
  private var silence = [Float]()

  init(_ writer: AudioFileWriter, recordedFrames: Int64 = 0) {
    self.writer = writer
    self.recordedFrames = recordedFrames
  }

  func write(_ block: CaptureRing.Block) {
    guard failure == nil, let base = block.samples.baseAddress, block.frameCount > 0 else { return }
    do throws(AudioFileError) {
      try writer.write(base, frameCount: block.frameCount)
      recordedFrames += Int64(block.frameCount)
    } catch {
      failure = error
    }
  }

  /// Writes `frames` frames of silence (a gap the job fills).
  func writeSilence(frames: Int64) {
    if silence.isEmpty {
      silence = [Float](repeating: 0, count: Self.silenceBlock * writer.channelCount)
    }
    var left = frames
    while left > 0 && failure == nil {
      let count = Int(min(Int64(Self.silenceBlock), left))
      silence.withUnsafeBufferPointer { buffer in
        do throws(AudioFileError) {
          try writer.write(buffer.baseAddress!, frameCount: count)
          recordedFrames += Int64(count)
        } catch {
          failure = error
        }
      }
      left -= Int64(count)
    }
  }

  func close() { writer.close() }
}
