/// One block of a tone decoder's input on its way from the thread that
/// prepares it (`ToneDecoderAhead`: the streams, and as many frames'
/// spectra as it has time for) to the decoder's thread
/// (`ToneDecoder.process(_: ToneBlock, emit:)`). Blocks are made by the
/// `ToneDecoderAhead` they serve and reused; one thread at a time owns a
/// block, and handing it over must order memory (a semaphore does).
package final class ToneBlock {
  /// Room for `capacity` mono input samples: the preparing thread writes
  /// the next `count` samples from `input + preparedCount` on, then calls
  /// `ToneDecoderAhead.prepare(_:count:hurry:)`.
  package let input: UnsafeMutablePointer<Float>
  package let capacity: Int
  /// Input samples prepared since the block was last emptied.
  package internal(set) var preparedCount = 0

  /// A stretch of one stream, in `input` or in `streamSamples`; or a chunk
  /// of input left to the decoder to decimate into the signalling stream
  /// (`decimator` ≥ 0: where the decimator stood, in `decimatorStates`).
  struct Segment {
    var stream: ToneStreams.Stream
    var start: UnsafePointer<Float>
    var count: Int
    var decimator = -1
    var samples: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: start, count: count) }
  }

  /// The streams' stretches in the order the analyses hear them.
  private(set) var segments: [Segment] = []
  /// Stream samples that are not the input itself (the decimated and the
  /// blanked streams).
  private let streamSamples: UnsafeMutablePointer<Float>
  private let streamCapacity: Int
  private var streamCount = 0
  /// Per analysis of the decoder (in its order), the frames analysed ahead.
  let frames: [AheadFrames]
  /// Where the decimator stood before each chunk left undecimated: its
  /// held samples (`stateSize` apiece), how many, and its phase.
  private let decimatorStates: UnsafeMutablePointer<Float>
  private let stateSize: Int
  private var decimatorPositions: [(held: Int, phase: Int)] = []

  init(capacity: Int, streamCapacity: Int, decimatorStateSize: Int, frames: [AheadFrames]) {
    self.capacity = capacity
    // Samples and measurements are plain values, written before they are
    // read: left untouched until then, the pages cost nothing.
    input = .allocate(capacity: capacity)
    self.streamCapacity = streamCapacity
    streamSamples = .allocate(capacity: streamCapacity)
    self.frames = frames
    segments.reserveCapacity(1024)
    stateSize = decimatorStateSize
    let chunks = capacity / ToneStreams.chunk + 2
    decimatorStates = .allocate(capacity: chunks * stateSize)
    decimatorPositions.reserveCapacity(chunks)
  }

  deinit {
    input.deallocate()
    streamSamples.deallocate()
    decimatorStates.deallocate()
  }

  /// Empties the block for new input.
  package func removeAll() {
    preparedCount = 0
    decimatorPositions.removeAll(keepingCapacity: true)
    segments.removeAll(keepingCapacity: true)
    streamCount = 0
    for frames in frames { frames.reset() }
  }

  /// Adds a chunk of input for the decoder to decimate, with where the
  /// decimator stood before it.
  func appendUndecimated(_ chunk: ToneStreams.Chunk) {
    let index = decimatorPositions.count
    decimatorPositions.append(chunk.save(decimatorStates + index * stateSize))
    segments.append(
      Segment(
        stream: .signalling, start: chunk.samples.baseAddress!, count: chunk.samples.count,
        decimator: index))
  }

  /// Where the decimator stood before segment `segment`'s chunk: its held
  /// samples, how many, and its phase.
  func decimatorState(_ segment: Segment) -> (UnsafePointer<Float>, held: Int, phase: Int) {
    let position = decimatorPositions[segment.decimator]
    return (
      UnsafePointer(decimatorStates + segment.decimator * stateSize), position.held, position.phase
    )
  }

  /// Adds a stretch of `stream`: kept where it is when it lies in `input`,
  /// else copied in. Returns the samples as kept. (Stretches stay apart:
  /// the analyses take turns at each, and that decides the events' order.)
  func append(
    _ stream: ToneStreams.Stream, _ samples: UnsafeBufferPointer<Float>
  ) -> UnsafeBufferPointer<Float> {
    guard let base = samples.baseAddress, samples.count > 0 else { return samples }
    if base >= UnsafePointer(input) && base + samples.count <= UnsafePointer(input + capacity) {
      addSegment(stream, start: base, count: samples.count)
      return samples
    }
    precondition(streamCount + samples.count <= streamCapacity, "a tone block's streams overflowed")
    let target = streamSamples + streamCount
    target.update(from: base, count: samples.count)
    streamCount += samples.count
    addSegment(stream, start: target, count: samples.count)
    return UnsafeBufferPointer(start: target, count: samples.count)
  }

  /// Adds a segment, or lengthens the last one where it is the same
  /// stream's and ends where this starts: the analyses then hear the
  /// blanked stream's half-millisecond pieces a chunk at a time, in the
  /// same order, each analysis's frames falling due as they would.
  private func addSegment(_ stream: ToneStreams.Stream, start: UnsafePointer<Float>, count: Int) {
    if let last = segments.last, last.stream == stream, last.decimator < 0,
      last.start + last.count == start
    {
      segments[segments.count - 1].count += count
    } else {
      segments.append(Segment(stream: stream, start: start, count: count))
    }
  }
}

/// What one analysis's frames hold for each of its plans, for the frames
/// measured ahead in one block: each frame's number (frames due on its
/// stream so far, from 0) and its plans' measurements. Written by the
/// preparing thread, read by the decoder's, never both at once.
final class AheadFrames {
  let planCount: Int
  let capacity: Int
  private let numbers: UnsafeMutablePointer<Int>
  private let measured: UnsafeMutablePointer<FrameMeasurement>
  private(set) var count = 0
  /// The first slot the decoder may still ask for.
  private var cursor = 0

  init(planCount: Int, capacity: Int) {
    self.planCount = planCount
    self.capacity = capacity
    numbers = .allocate(capacity: capacity)
    measured = .allocate(capacity: capacity * planCount)
    measured.initialize(
      repeating: FrameMeasurement(isQuiet: true, isQuietHolding: true),
      count: capacity * planCount)
  }

  deinit {
    numbers.deallocate()
    measured.deallocate()
  }

  func reset() {
    count = 0
    cursor = 0
  }

  /// A slot for frame `number`, or `nil` when the block has no room left.
  func add(_ number: Int) -> Int? {
    guard count < capacity else { return nil }
    numbers[count] = number
    count += 1
    return count - 1
  }

  /// The measurements of a slot's frame, one per plan (plain values: a
  /// new slot's are written before they are read).
  func measurements(_ slot: Int) -> UnsafeMutablePointer<FrameMeasurement> {
    measured + slot * planCount
  }

  /// The slot of frame `number`, if it was measured ahead. Frames are
  /// asked for in order, but for those put off before one: slots of frames
  /// older than `ToneDecoder.framesHeld` are passed over for good.
  func slot(of number: Int) -> Int? {
    let reach = ToneDecoder.framesHeld
    while cursor < count && numbers[cursor] < number - reach { cursor += 1 }
    var index = cursor
    while index < count && numbers[index] <= number + reach {
      if numbers[index] == number { return index }
      index += 1
    }
    return nil
  }
}
