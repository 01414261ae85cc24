import AudioFiles
import DuplexIO
import Metering
import ToneDecoding
import TonePlans

/// Hands what a live session produces to a `Recorder`: the captured audio
/// the processor keeps in its recording ring (drained by `pump`, with any
/// frames the ring had to drop turned into an `overflow` gap), the talk
/// detector's events, the mono input for the tone decoder, xruns, and the
/// device's absences (`deviceLost`). It also tells the recorder's clock
/// when frames arrive. The processor must record (`isRecording`) and,
/// with a decoder, analyse (`isAnalyzing`). Control thread.
public final class LiveRecordingFeed {
  public let recorder: Recorder
  public let processor: LiveProcessor
  public let decoder: ToneDecoder?
  private var decodedFrames: Int64 = 0
  private var droppedSamples = 0

  public init(recorder: Recorder, processor: LiveProcessor, decoder: ToneDecoder?) {
    self.recorder = recorder
    self.processor = processor
    self.decoder = decoder
  }

  /// A meter event (`LiveSession.run`'s `onEvent`).
  public func meterEvent(_ event: MeterEvent) {
    switch event {
    case .talkStart(let time): recorder.talk(isStart: true, at: time)
    case .talkEnd(let time): recorder.talk(isStart: false, at: time)
    case .level(let reading): recorder.detector(reached: reading.time)
    case .summary(let summary): recorder.detector(reached: summary.duration)
    }
  }

  /// The mono input (`LiveSession.run`'s `onInput`).
  public func input(_ samples: UnsafeBufferPointer<Float>) {
    guard let decoder else { return }
    decoder.process(samples, emit: recorder.tone)
    decodedFrames += Int64(samples.count)
    recorder.decoder(reached: decodedFrames)
  }

  /// An xrun (`LiveSession.run`'s `onXrun`): capture overruns go on the
  /// timeline; a playback underrun does not touch a recording.
  public func xrun(_ bus: Bus, time: Double, lostFrames: Int) {
    guard bus == .input else { return }
    pump()
    recorder.xrun(at: time, lostFrames: lostFrames > 0 ? lostFrames : nil)
  }

  /// Takes the captured audio from the processor's ring into the recorder
  /// and lets it decide; call every control cycle and once after a session ends.
  public func pump() {
    guard let ring = processor.recording else { return }
    let channels = processor.format.channelCount
    ring.drain { samples in
      recorder.append(samples.baseAddress!, frameCount: samples.count / channels)
    }
    // Read after draining: every drop counted so far lies after what was
    // drained (the ring was full), and the audio thread drops whole periods.
    let dropped = ring.dropped.load(ordering: .relaxed)
    if dropped > droppedSamples {
      let frames = Int64((dropped - droppedSamples) / channels)
      droppedSamples = dropped
      recorder.gap(
        frames: frames, reason: .overflow,
        detail: "the recording buffer overflowed: the disk or the machine could not keep up",
        streamContinues: true)
    }
    let captured = Int64(processor.framesProcessed.load(ordering: .acquiring))
    recorder.observeArrival(streamFrames: captured, at: SystemClock.now)
    recorder.update()
  }

  /// The device went away for `seconds` (measured from the last frame
  /// that arrived to the first of the new session): a gap on the timeline.
  public func deviceLost(seconds: Double, reason: String) {
    pump()
    let frames = Int64((seconds * recorder.sampleRate).rounded())
    recorder.gap(frames: frames, reason: .deviceLost, detail: reason, streamContinues: false)
  }

  /// Ends the recording: the rest of the ring, the decoder's last reports,
  /// the summary.
  @discardableResult
  public func finish() -> SessionSummary {
    pump()
    decoder?.finish(emit: recorder.tone)
    return recorder.finish()
  }
}
