import AudioFiles
import FeedbackControl
import Metering
import MicLoopKit
import Plotting
import Recording
import SignalDSP
import ToneDecoding
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// One input: a whole audio file, run through every job `micloop` runs on
/// a file — `meter --loudness --ballistics lufs`, `tones` with every plan
/// the file's rate allows, `plot --loudness` with the same plans (its
/// analysis; nothing is drawn), `record --input` into a scratch folder
/// (its index must tile the timeline, or the target traps; the input is
/// also read as an earlier session's index there), and, for one input in eight,
/// `loopback --ring-out`'s plan from its first channel taken as a loop's
/// response. Refusals and errors are answers; a crash,
/// a sanitizer report or a hang is a bug.
///
/// An input starting with `RawInput.magic` is headerless PCM, as
/// `--raw --rate R --channels C --format F` reads it; anything else is a
/// file with a header (WAV, RF64, FLAC, OGG …).
func fuzzFileJobs(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = UnsafeBufferPointer(start: data, count: size)
  let raw = RawInput(input)
  let bytes = raw == nil ? input : UnsafeBufferPointer(rebasing: input[RawInput.headerSize...])
  guard let path = ScratchFile.write(bytes) else { return 0 }
  func open() -> AudioFileReader? { try? AudioFileReader(path: path, raw: raw?.format) }
  guard let probe = open() else { return 0 }
  let rate = probe.sampleRate
  // The one channel of `--channel`, for some inputs: every channel count
  // is also met with one channel picked out of it.
  let channel = probe.channelCount > 1 && size % 2 == 1 ? probe.channelCount - 1 : nil
  let plans = FileJobPlans.allowed(at: rate)

  if let reader = open() {
    var settings = MeterSettings()
    settings.measuresLoudness = true
    settings.ballistics = .lufs
    settings.channel = channel
    _ = try? FileMeter.run(reader, settings: settings, shouldStop: FrameBudget.stopper()) { _ in }
  }
  if !plans.isEmpty, let reader = open(),
    let decoder = try? ToneDecoder(plans: plans, sampleRate: rate)
  {
    _ = try? FileToneDecoder.run(
      reader, decoder: decoder, channel: channel, shouldStop: FrameBudget.stopper()
    ) { _ in }
  }
  if let reader = open() {
    let layout = PlotLayout(width: 1600, height: 900)
    var settings = PlotAnalysis.Settings()
    settings.columns = 2 * layout.levels.width
    settings.spectrumRows = layout.spectrogram.height
    settings.meter.measuresLoudness = true
    settings.meter.channel = channel
    settings.tones = plans.isEmpty ? nil : try? ToneDecoder(plans: plans, sampleRate: rate)
    _ = try? PlotAnalysis.run(
      reader, title: "fuzz", settings: settings, shouldStop: FrameBudget.stopper())
  }
  if let reader = open() { RecordJob.run(reader, input: bytes, plans: plans) }
  // A plan costs more than the other jobs of a small input: one input in eight.
  if size % 8 == 3, let reader = open(), let response = RingOutInput.response(reader),
    let band = LatencyProbe.measuredBand(sampleRate: Int(rate.rounded()))
  {
    _ = RingOutPlan(
      impulseResponse: response, sampleRate: rate, lowest: band.lowerBound,
      highest: band.upperBound, settings: HowlGuardSettings())
  }
  return 0
}

/// The first channel of a file as `loopback --ring-out` takes a loop's
/// response: not silent, no damaged sample (the command refuses those in
/// one line), and here at most `frames` long to bound the work.
enum RingOutInput {
  static let frames = 1 << 13

  static func response(_ reader: AudioFileReader) -> [Float]? {
    let channels = reader.channelCount
    guard channels > 0, reader.sampleRate >= 1, reader.sampleRate < Double(Int.max) else {
      return nil
    }
    var block = [Float](repeating: 0, count: 4096 * channels)
    var samples = [Float]()
    while samples.count < frames {
      let count = block.withUnsafeMutableBufferPointer { buffer in
        (try? reader.read(into: buffer.baseAddress!, frameCount: 4096)) ?? 0
      }
      if count == 0 { break }
      for frame in 0..<min(count, frames - samples.count) {
        samples.append(block[frame * channels])
      }
    }
    guard samples.allSatisfy(DamagedSamples.isSound), samples.contains(where: { $0 != 0 }) else {
      return nil
    }
    return samples
  }
}

/// Bounds the work one input can cause: compressed data (a FLAC of constant
/// frames) or a damaged header can make a small input decode to hours of
/// audio. Each job is asked to stop once it has been handed this many
/// frames' worth of blocks; the sizing done from the header (rate,
/// channels, format) happens before, whatever the length.
enum FrameBudget {
  static let frames = 1 << 20
  /// The largest block any job reads at once (the meter's), so a count of
  /// `shouldStop` calls bounds the frames read.
  static let largestBlock = 16_384

  /// A `shouldStop` for one job: stops after `frames` frames' worth of
  /// blocks. Jobs ask it before each block, on their calling thread.
  static func stopper() -> () -> Bool {
    var calls = 0
    return {
      calls += 1
      return calls > frames / largestBlock
    }
  }
}

/// The plans a `tones` run uses on a file of some rate: every named plan
/// and a `freq:` and a `twotone:` plan, each kept when the decoder takes it
/// at that rate (as a run of them all would be, less the ones it refuses).
enum FileJobPlans {
  static let candidates: [TonePlan] =
    TonePlan.all + ["freq:1750,2100,2400", "twotone:1000,1200:100,100"].compactMap(TonePlan.named)

  /// The plans allowed at rates met lately (building a decoder per plan
  /// to ask costs more than the rest of a small input).
  nonisolated(unsafe) private static var known: [Double: [TonePlan]] = [:]

  static func allowed(at rate: Double) -> [TonePlan] {
    if let plans = known[rate] { return plans }
    let plans = candidates.filter { (try? ToneDecoder(plans: [$0], sampleRate: rate)) != nil }
    if known.count >= 256 { known.removeAll() }
    known[rate] = plans
    return plans
  }
}

/// Headerless PCM as the fuzzer spells it: the magic, then the rate
/// (4 bytes, little-endian), the channels and the format (a byte each),
/// all brought into the ranges `--rate`, `--channels` and `--format` accept.
struct RawInput {
  static let magic = Array("MICLOOP-RAW:".utf8)
  static let headerSize = magic.count + 6
  let format: RawPCMFormat

  init?(_ input: UnsafeBufferPointer<UInt8>) {
    guard input.count >= Self.headerSize, input.starts(with: Self.magic) else { return nil }
    let fields = input[Self.magic.count...]
    var rate = 0
    for (shift, byte) in fields.prefix(4).enumerated() { rate |= Int(byte) << (8 * shift) }
    let channels = Int(fields[fields.startIndex + 4])
    let encodings = AudioFileEncoding.allCases
    let encoding = encodings[Int(fields[fields.startIndex + 5]) % encodings.count]
    format = RawPCMFormat(
      sampleRate: 1_000 + rate % 767_001, channelCount: 1 + channels % 64, encoding: encoding)
  }
}

/// Where the scratch files go: the folder `MICLOOP_FUZZ_SCRATCH` names
/// (Scripts/fuzz.sh makes one and removes it when the run ends, with every
/// worker's folders in it); else memory (`/dev/shm`) where the machine has
/// it, so that the recorder's syncs cost no disk writes; else `/tmp`.
enum ScratchRoot {
  static let path: String = {
    if let named = getenv("MICLOOP_FUZZ_SCRATCH"), access(named, W_OK) == 0 {
      return String(cString: named)
    }
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
  }()
}

/// The file each input is written to: one per process, unlinked at once
/// and rewritten for each input, opened by its `/proc/self/fd` path.
enum ScratchFile {
  private static let descriptor: Int32 = {
    var template = Array("\(ScratchRoot.path)/micloop-fuzz-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    if descriptor >= 0 { template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
    return descriptor
  }()

  /// Replaces the file's contents with `bytes`; its path, or `nil` if it
  /// cannot be written.
  static func write(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard descriptor >= 0, ftruncate(descriptor, 0) == 0 else { return nil }
    var offset = 0
    while offset < bytes.count {
      let wrote = pwrite(
        descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
      if wrote <= 0 { return nil }
      offset += wrote
    }
    return "/proc/self/fd/\(descriptor)"
  }
}

/// `record --input` on one input, into a folder emptied before each run,
/// beside an earlier session's index whose lines are the input's bytes
/// (retention reads it as it reads any index it finds). The session's
/// index must account for every frame: spans in timeline order, each
/// starting where the one before ended, summing to the session's frames.
enum RecordJob {
  static let folder: String = {
    var template = Array("\(ScratchRoot.path)/micloop-fuzz-record-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return made.map { String(cString: $0) } ?? ScratchRoot.path
  }()
  static let forgedIndex = "session-0000-fuzz.jsonl"

  static func run(_ reader: AudioFileReader, input: UnsafeBufferPointer<UInt8>, plans: [TonePlan]) {
    empty(folder)
    let descriptor = open(folder + "/" + forgedIndex, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { return }
    let head = Array("{\"event\":\"session_start\",\"index\":\"\(forgedIndex)\"}\n".utf8)
    _ = head.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
    if let base = input.baseAddress { _ = write(descriptor, base, input.count) }
    close(descriptor)
    var settings = RecorderSettings()
    settings.retention = RetentionPolicy(maximumBytes: 1 << 20)
    if input.count % 3 == 1 { settings.trigger = .level(threshold: -40) }
    if input.count % 5 == 2, plans.contains(.dtmf) { settings.tagPlans = [.dtmf] }
    settings.hang = 0.2
    settings.minimum = 0.05
    var spans = [(start: Int64, frames: Int64)]()
    var total: Int64?
    let rate = reader.sampleRate
    guard
      let recorder = try? Recorder(
        settings: settings, sampleRate: rate, channelCount: reader.channelCount,
        encoding: reader.fileEncoding, directory: folder + "/out",
        clock: StreamClock(sampleRate: rate, startingAt: 1_795_000_000), source: "fuzz",
        listener: { event in
          switch event {
          case .recording(let file): spans.append((file.startFrame, file.frames))
          case .idle(let start, let frames), .blip(let start, let frames, _),
            .gap(let start, let frames, _, _):
            spans.append((start, frames))
          case .sessionEnded(let summary): total = summary.frames
          default: break
          }
        })
    else { return }
    let decoder =
      settings.tagPlans.isEmpty ? nil : try? ToneDecoder(plans: settings.tagPlans, sampleRate: rate)
    _ = try? FileRecording.run(
      reader, recorder: recorder, decoder: decoder, shouldStop: FrameBudget.stopper())
    recorder.finish()
    var position: Int64 = 0
    for span in spans {
      if span.start != position || span.frames < 0 {
        fatalError("record: a span at \(span.start) where the timeline stood at \(position)")
      }
      position += span.frames
    }
    if let total, total != position {
      fatalError("record: spans add up to \(position) frames, the session to \(total)")
    }
  }

  /// Removes everything in `path` (not `path` itself).
  static func empty(_ path: String) {
    guard let handle = opendir(path) else { return }
    var names = [String]()
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    closedir(handle)
    for name in names {
      let full = path + "/" + name
      if unlink(full) != 0 {
        empty(full)
        rmdir(full)
      }
    }
  }
}
