import AudioFiles
import Metering
import SignalDSP
import ToneDecoding
import TonePlans

/// Records an audio file as if it were captured live: sample-exact, for
/// splitting existing recordings into transmissions and for tests. The
/// talk detector and the tone decoder run on the calling thread, block by
/// block, and feed the recorder the same reports as a live session does.
public enum FileRecording {
  /// How reading the file ended.
  public struct Outcome: Sendable {
    public var summary: SessionSummary
    /// A problem found after reading everything present (a truncated file).
    public var problem: AudioFileError?
    /// Samples that were not sound (`DamagedSamples`: NaN, ±infinity,
    /// beyond +60 dBFS), recorded as silence.
    public var invalidSamples = 0
  }

  /// Frames read at a time.
  public static let blockFrames = 8192

  /// Reads every frame of `reader` into `recorder` (made for the file's
  /// rate and channels), with `decoder` for the plans the settings decode;
  /// `shouldStop`, asked before each block, ends it early with what was read.
  public static func run(
    _ reader: AudioFileReader, recorder: Recorder, decoder: ToneDecoder?,
    shouldStop: () -> Bool = { false }
  ) throws(AudioFileError) -> Outcome {
    let channels = reader.channelCount
    let block = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
    let mono = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    defer {
      block.deallocate()
      mono.deallocate()
    }
    let meter: MeterProcessor? =
      if case .talk = recorder.settings.trigger {
        MeterProcessor(
          sampleRate: reader.sampleRate, channelCount: channels,
          settings: recorder.settings.meter, maximumBlock: blockFrames,
          // Screened below, before the recorder keeps them.
          screensNonFinite: false)
      } else { nil }
    func hear(_ event: MeterEvent) {
      switch event {
      case .talkStart(let time): recorder.talk(isStart: true, at: time)
      case .talkEnd(let time): recorder.talk(isStart: false, at: time)
      case .level, .summary: break
      }
    }
    var stopped = false
    var invalidSamples = 0
    while true {
      if shouldStop() {
        stopped = true
        break
      }
      let frames = try reader.read(into: block, frameCount: blockFrames)
      guard frames > 0 else { break }
      // Damaged samples become silence before anything hears or keeps them.
      invalidSamples += SampleScreen.screen(block, count: frames * channels)
      recorder.append(block, frameCount: frames)
      if let meter {
        meter.process(block, frameCount: frames, emit: hear)
        recorder.detector(reached: meter.time)
      }
      if let decoder {
        _ = MonoMix.mix(block, frameCount: frames, channelCount: channels, channel: nil, into: mono)
        decoder.process(UnsafeBufferPointer(start: mono, count: frames), emit: recorder.tone)
        recorder.decoder(reached: reader.framesRead)
      }
      recorder.update()
    }
    if reader.framesRead == 0 {
      throw reader.wasStopped
        ? .stoppedBeforeAudio(path: reader.displayPath) : .empty(path: reader.displayPath)
    }
    meter?.finish(emit: hear)
    decoder?.finish(emit: recorder.tone)
    let summary = recorder.finish()
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(summary: summary, problem: problem, invalidSamples: invalidSamples)
  }
}
