import SignalDSP
import Synchronization

/// A room for a `SimulatedDevicePair`: its microphone hears a talker plus
/// the pair's own speaker through the room's impulse response, so a live
/// job that passes the microphone to the speaker runs in a closed acoustic
/// loop, as fast as the processor allows and exactly the same on every
/// run.
///
/// What is written for playback leaves the speaker after the pair's loop
/// buffering (`GrantedConfiguration.loopBufferFrames`: the capture period
/// plus the playback pre-fill, as on a real device), folded to mono (the
/// mean of the channels); the response is applied by partitioned
/// convolution (`PartitionedConvolver`, one block per period), and every
/// capture channel hears the same microphone signal. The talker plays once
/// from the first captured frame, then silence.
///
/// The pair calls `prepare` from `open` (control thread) and `listen` and
/// `play` on the audio thread, where nothing allocates. The counters may
/// be read from any thread; the recordings after the unit has stopped.
public final class SimulatedRoom: @unchecked Sendable {
  /// The response from the speaker's input to the microphone's output.
  public let impulseResponse: [Float]
  /// What the microphone hears besides the speaker, from the first frame.
  public let talker: [Float]
  /// Frames from a sample written for playback to the speaker playing it;
  /// set by `prepare` (the pair's loop buffering).
  public private(set) var playbackDelay = 0
  /// The largest magnitude the speaker has played (a Float bit pattern).
  private let speakerPeakBits = Atomic<UInt32>(0)
  /// Frames of the speaker's and the microphone's signals kept for
  /// `speakerSignal` and `microphoneSignal` (0: none).
  public let recordingCapacity: Int

  private var convolver: PartitionedConvolver?
  private var periodFrames = 0
  /// Frames written for playback so far, and a ring of the latest.
  private var writtenFrames = 0
  private var written = UnsafeMutablePointer<Float>.allocate(capacity: 1)
  private var writtenCapacity = 1
  /// Frames the microphone has delivered so far.
  private var heardFrames = 0
  private var speakerBlock = UnsafeMutablePointer<Float>.allocate(capacity: 1)
  private var echoBlock = UnsafeMutablePointer<Float>.allocate(capacity: 1)
  private let speakerRecording: UnsafeMutablePointer<Float>
  private let microphoneRecording: UnsafeMutablePointer<Float>
  private var recordedSpeakerFrames = 0
  private let heard = Atomic<Int>(0)

  /// - Parameters:
  ///   - impulseResponse: the loop's acoustic path, speaker to microphone,
  ///     at the pair's sample rate.
  ///   - talker: what else the microphone hears, from the start (mono).
  ///   - recordingCapacity: frames of both signals to keep for inspection.
  public init(impulseResponse: [Float], talker: [Float] = [], recordingCapacity: Int = 0) {
    precondition(!impulseResponse.isEmpty, "a room needs an impulse response")
    self.impulseResponse = impulseResponse
    self.talker = talker
    self.recordingCapacity = max(0, recordingCapacity)
    speakerRecording = .allocate(capacity: max(1, recordingCapacity))
    speakerRecording.initialize(repeating: 0, count: max(1, recordingCapacity))
    microphoneRecording = .allocate(capacity: max(1, recordingCapacity))
    microphoneRecording.initialize(repeating: 0, count: max(1, recordingCapacity))
  }

  deinit {
    written.deallocate()
    speakerBlock.deallocate()
    echoBlock.deallocate()
    speakerRecording.deallocate()
    microphoneRecording.deallocate()
  }

  /// The largest magnitude the speaker has played so far (any thread).
  public var speakerPeak: Float { Float(bitPattern: speakerPeakBits.load(ordering: .relaxed)) }

  /// Frames the microphone has delivered (any thread).
  public var microphoneFrames: Int { heard.load(ordering: .acquiring) }

  /// What the speaker played, from the first frame on (after the unit stopped).
  public func speakerSignal() -> [Float] {
    Array(
      UnsafeBufferPointer(
        start: speakerRecording, count: min(recordedSpeakerFrames, recordingCapacity)))
  }

  /// What the microphone heard, from the first frame on (after the unit stopped).
  public func microphoneSignal() -> [Float] {
    Array(
      UnsafeBufferPointer(
        start: microphoneRecording, count: min(microphoneFrames, recordingCapacity)))
  }

  /// Readies the room for periods of `periodFrames` and a speaker that
  /// plays what is written `playbackDelay` frames later (control thread,
  /// from the pair's `open`). The room starts empty and silent again.
  func prepare(periodFrames: Int, playbackDelay: Int) {
    precondition(
      playbackDelay >= periodFrames, "the speaker cannot play a period before it is written")
    self.periodFrames = periodFrames
    self.playbackDelay = playbackDelay
    convolver = PartitionedConvolver(impulseResponse: impulseResponse, blockSize: periodFrames)
    var capacity = 1
    while capacity < playbackDelay + 4 * periodFrames { capacity *= 2 }
    written.deallocate()
    written = .allocate(capacity: capacity)
    written.initialize(repeating: 0, count: capacity)
    writtenCapacity = capacity
    speakerBlock.deallocate()
    speakerBlock = .allocate(capacity: periodFrames)
    speakerBlock.initialize(repeating: 0, count: periodFrames)
    echoBlock.deallocate()
    echoBlock = .allocate(capacity: periodFrames)
    echoBlock.initialize(repeating: 0, count: periodFrames)
    writtenFrames = 0
    heardFrames = 0
    recordedSpeakerFrames = 0
    heard.store(0, ordering: .releasing)
    speakerPeakBits.store(0, ordering: .relaxed)
  }

  /// The next `periodFrames` frames of the microphone, mono, into
  /// `destination` (audio thread).
  func listen(into destination: UnsafeMutablePointer<Float>) {
    guard let convolver else { return }
    let frames = periodFrames
    // The speaker's samples of this period: what was written a delay ago.
    let first = heardFrames - playbackDelay
    for frame in 0..<frames {
      let index = first + frame
      let sample =
        index >= 0 && index < writtenFrames && index >= writtenFrames - writtenCapacity
        ? written[index & (writtenCapacity - 1)] : 0
      speakerBlock[frame] = sample
      let magnitude = abs(sample)
      if magnitude > speakerPeak { speakerPeakBits.store(magnitude.bitPattern, ordering: .relaxed) }
    }
    if heardFrames < recordingCapacity {
      let count = min(frames, recordingCapacity - heardFrames)
      (speakerRecording + heardFrames).update(from: speakerBlock, count: count)
      recordedSpeakerFrames = heardFrames + count
    }
    convolver.process(speakerBlock, into: echoBlock)
    for frame in 0..<frames {
      let index = heardFrames + frame
      destination[frame] = echoBlock[frame] + (index < talker.count ? talker[index] : 0)
    }
    if heardFrames < recordingCapacity {
      let count = min(frames, recordingCapacity - heardFrames)
      (microphoneRecording + heardFrames).update(from: destination, count: count)
    }
    heardFrames += frames
    heard.store(heardFrames, ordering: .releasing)
  }

  /// Takes `frames` frames of interleaved playback in `channels` channels
  /// (audio thread).
  func play(_ samples: UnsafePointer<Float>, frames: Int, channels: Int) {
    let scale = 1 / Float(channels)
    for frame in 0..<frames {
      var sum: Float = 0
      for channel in 0..<channels { sum += samples[frame * channels + channel] }
      written[(writtenFrames + frame) & (writtenCapacity - 1)] = channels == 1 ? sum : sum * scale
    }
    writtenFrames += frames
  }
}
