import AudioFiles
import Foundation
import Synchronization
import TestSupport
import Testing

/// Inputs a careless or hostile user gives the reader: endless devices,
/// streams that never end, files cut short or damaged, containers that
/// must be whole, encodings handed to libraries that print.
@Suite struct HostileInputTests {
  let files: TestFiles

  init() throws { files = try TestFiles() }

  /// Every frame `reader` gives, read `blockFrames` at a time, and the
  /// error `checkComplete` finds.
  func readAll(_ reader: AudioFileReader, blockFrames: Int) -> (
    frames: Int64, problem: AudioFileError?
  ) {
    var block = [Float](repeating: 0, count: blockFrames * reader.channelCount)
    do {
      while true {
        let got = try block.withUnsafeMutableBufferPointer {
          try reader.read(into: $0.baseAddress!, frameCount: blockFrames)
        }
        if got == 0 { break }
      }
      try reader.checkComplete()
      return (reader.framesRead, nil)
    } catch let error as AudioFileError {
      return (reader.framesRead, error)
    } catch {
      Issue.record(error)
      return (reader.framesRead, nil)
    }
  }

  /// A 2 s, 48 kHz, 16-bit FLAC of a 1 kHz tone.
  func flac(_ name: String = "tone.flac") throws -> String {
    let path = files.path(name)
    try files.run([
      "sox", "-n", "-r", "48000", "-b", "16", path, "synth", "2", "sine", "1000", "vol", "0.5",
    ])
    return path
  }

  @Test func zerosThatAreNoAudioAreRefusedAtOnce() throws {
    // A character device that never ends: nothing is copied anywhere first.
    do {
      _ = try AudioFileReader(path: "/dev/zero")
      Issue.record("/dev/zero was taken for audio")
    } catch {
      guard case .notAudio = error else { throw error }
      #expect(error.description.contains("00 00 00 00"), "\(error)")
      #expect(!error.description.contains("\n"))
    }
  }

  @Test func headerlessZerosFromADeviceStreamWithoutEnd() throws {
    let reader = try AudioFileReader(
      path: "/dev/zero", raw: RawPCMFormat(sampleRate: 8_000, encoding: .pcm16))
    #expect(reader.declaredFrameCount == nil)
    var block = [Float](repeating: 1, count: 4_096)
    for _ in 0..<50 {
      let got = try block.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: 4_096)
      }
      #expect(got == 4_096)
    }
    #expect(block.allSatisfy { $0 == 0 })
  }

  /// An encoder stopped before it finished (SIGKILL, a full disk) leaves
  /// 0, "unknown", as the length in STREAMINFO: the file is read whole.
  @Test func aFLACWithoutItsLengthIsReadWhole() throws {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: try flac()))
    #expect(bytes.prefix(4) == Data("fLaC".utf8))
    // STREAMINFO's 36-bit sample count: the low nibble of byte 21 and bytes 22–25.
    bytes[21] &= 0xF0
    for index in 22...25 { bytes[index] = 0 }
    let path = files.path("unknown-length.flac")
    try bytes.write(to: URL(fileURLWithPath: path))
    let reader = try AudioFileReader(path: path)
    #expect(reader.declaredFrameCount == nil)
    let outcome = readAll(reader, blockFrames: 16_384)
    #expect(outcome.frames == 96_000)
    #expect(outcome.problem == nil, "\(String(describing: outcome.problem))")
  }

  /// Where a decoder fails must not depend on how many frames each read
  /// asks for: meter, tones and plot read in different blocks.
  @Test func aCutFLACGivesTheSameFramesAndErrorWhateverTheBlockSize() throws {
    let whole = try Data(contentsOf: URL(fileURLWithPath: try flac()))
    var differing = [String]()
    for length in stride(from: 2_000, to: whole.count, by: 1_500) {
      let path = files.path("cut-\(length).flac")
      try whole.prefix(length).write(to: URL(fileURLWithPath: path))
      var outcomes = [(frames: Int64, problem: AudioFileError?)]()
      for blockFrames in [4_096, 8_192, 16_384] {
        outcomes.append(readAll(try AudioFileReader(path: path), blockFrames: blockFrames))
      }
      #expect(outcomes.allSatisfy { $0.problem != nil }, "\(length) bytes: no error")
      if Set(outcomes.map { "\($0.frames) \(String(describing: $0.problem))" }).count != 1 {
        differing.append("\(length): \(outcomes)")
      }
    }
    #expect(differing.isEmpty, "\(differing)")
  }

  @Test func mpegInAWAVIsRefusedBeforeAnyDecoderSeesIt() throws {
    let path = files.path("mpeg.wav")
    try TestFiles.wavClaimingMPEG().write(to: URL(fileURLWithPath: path))
    do {
      _ = try AudioFileReader(path: path)
      Issue.record("a WAV of MPEG audio was opened")
    } catch {
      guard case .unsupportedEncoding = error else { throw error }
      #expect(error.description.contains("0x55"), "\(error)")
      #expect(error.isDataError)
    }
  }
}

/// Streams through FIFOs: decoded as they arrive, or held whole within a
/// bound.
@Suite struct StreamedInputTests {
  let files: TestFiles

  init() throws { files = try TestFiles() }

  /// A FIFO that another thread fills with `bytes` once a reader opens it,
  /// then holds open for `holdOpen` seconds before closing.
  final class HeldFIFO: Sendable {
    let path: String
    let closed = Atomic<Bool>(false)

    init(_ bytes: Data, at path: String, holdOpen: Double) {
      self.path = path
      precondition(mkfifo(path, 0o600) == 0)
      let thread = Thread { [self] in
        // A reader that leaves early makes writes fail, not the process end.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        let descriptor = open(path, O_WRONLY)
        bytes.withUnsafeBytes { buffer in
          var offset = 0
          while offset < buffer.count {
            let wrote = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if wrote <= 0 { break }
            offset += wrote
          }
        }
        Thread.sleep(forTimeInterval: holdOpen)
        closed.store(true, ordering: .sequentiallyConsistent)
        close(descriptor)
      }
      thread.start()
    }
  }

  @Test(arguments: ["flac", "ogg"])
  func aStreamIsDecodedBeforeItEnds(_ format: String) throws {
    let path = files.path("tone.\(format)")
    try files.run([
      "sox", "-n", "-r", "48000", "-b", "16", path, "synth", "2", "sine", "1000", "vol", "0.5",
    ])
    let stream = HeldFIFO(
      try Data(contentsOf: URL(fileURLWithPath: path)), at: files.path("fifo"), holdOpen: 3)
    let reader = try AudioFileReader(path: stream.path)
    var block = [Float](repeating: 0, count: 4_096)
    var frames = 0
    while frames < 48_000 {
      let got = try block.withUnsafeMutableBufferPointer {
        try reader.read(into: $0.baseAddress!, frameCount: 4_096)
      }
      if got == 0 { break }
      frames += got
    }
    // A second of audio decoded while the writer still holds the pipe open.
    #expect(frames >= 48_000)
    let closedBefore = stream.closed.load(ordering: .sequentiallyConsistent)
    #expect(!closedBefore)
  }

  @Test func aContainerThatMustBeWholeIsHeldUpToTheLimit() throws {
    let path = files.path("long.aiff")
    try files.run(["sox", "-n", "-r", "48000", "-b", "16", path, "synth", "2", "sine", "440"])
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    // Within the limit: held in a temporary file and read whole.
    let small = try AudioFileReader(
      path: HeldFIFO(bytes, at: files.path("fifo1"), holdOpen: 0).path)
    #expect(small.declaredFrameCount == 96_000)
    // Past it: refused in one line naming the limit.
    do {
      _ = try AudioFileReader(
        path: HeldFIFO(bytes, at: files.path("fifo2"), holdOpen: 0).path, spoolLimit: 65_536)
      Issue.record("an AIFF past the limit was held")
    } catch {
      guard case .streamTooLongToHold(_, let container, let limit) = error else { throw error }
      #expect(container == "AIFF" && limit == 65_536)
      #expect(error.description.contains("64 KiB"), "\(error)")
    }
  }
}
