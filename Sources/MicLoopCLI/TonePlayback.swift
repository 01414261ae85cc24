import AudioFiles
import Console
import DuplexIO
import MicLoopKit

#if canImport(Glibc)
  import Glibc
#endif

/// Sends a tone source to a file or a playback device; shared by `tone` and `send`.
enum TonePlayback {
  /// Renders the whole (finite) source into a file; returns the frames written.
  static func write(_ source: ToneSource, to path: String) throws -> Int {
    let writer: AudioFileWriter
    do {
      writer = try AudioFileWriter(
        path: path, sampleRate: Double(source.sampleRate), channelCount: source.channelCount)
    } catch { throw CommandFailure(message: error.description) }
    defer { writer.close() }
    let total = source.totalFrames ?? 0
    let blockFrames = 4096
    var block = [Float](repeating: 0, count: blockFrames * source.channelCount)
    var written = 0
    // Ctrl-C ends the file early with the source's own fade-out: a shorter
    // file that does not click.
    while written < total && !source.isDone.load(ordering: .acquiring) {
      if interruptRequested.load(ordering: .relaxed) { source.requestStop() }
      let count = min(blockFrames, total - written)
      block.withUnsafeMutableBufferPointer {
        source.render(into: $0.baseAddress!, frameCount: count)
      }
      do {
        try block.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: count) }
      } catch let error as AudioFileError { throw CommandFailure(message: error.description) }
      written += count
    }
    return written
  }

  /// Plays the source on the playback device until it ends or Ctrl-C, then
  /// waits until the last sample has been heard.
  static func play(_ source: ToneSource, configuration: DuplexConfiguration, announce: String)
    throws
  {
    let unit = DuplexUnit(configuration: configuration, backend: DeviceBackend(), client: source)
    do {
      try unit.initialize()
      try unit.start()
    } catch { throw CommandFailure(message: error.commandLineMessage) }
    StandardOutput.write(announce, flush: true)
    while !unit.waitUntilStopped(timeout: 0.01) && !source.isDone.load(ordering: .acquiring) {
      if interruptRequested.load(ordering: .relaxed) { source.requestStop() }
    }
    unit.stopAfterDrain()
    if let failure = unit.failure { throw CommandFailure(message: failure.commandLineMessage) }
  }
}
