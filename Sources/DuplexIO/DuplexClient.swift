/// A period of captured audio, still in the device's format, that the
/// client renders into a buffer it owns (RemoteIO's `AudioUnitRender` with
/// caller-allocated buffers). Valid only during the input callback.
public struct CapturedInput {
  let raw: UnsafeRawPointer
  let format: SampleFormat
  /// Frames in the period.
  public let frameCount: Int
  /// Interleaved channels.
  public let channelCount: Int

  init(raw: UnsafeRawPointer, format: SampleFormat, frameCount: Int, channelCount: Int) {
    self.raw = raw
    self.format = format
    self.frameCount = frameCount
    self.channelCount = channelCount
  }

  /// Samples in the period: `frameCount × channelCount`.
  public var sampleCount: Int { frameCount * channelCount }

  /// Converts the period to interleaved Float32 at the start of `buffer`,
  /// which must hold `sampleCount` samples (checked in debug builds).
  /// Audio thread; never allocates.
  public func render(into buffer: UnsafeMutableBufferPointer<Float>) {
    assert(buffer.count >= sampleCount, "a render target smaller than the period")
    format.decode(raw, into: buffer.baseAddress!, count: sampleCount)
  }

  /// Converts the period into `buffer` (see `render(into:)` for a buffer pointer).
  public func render(into buffer: SampleBuffer) { render(into: buffer.samples) }
}

/// The period a render callback fills: interleaved Float32, already silent.
/// Valid only during the render callback.
public struct OutputPeriod {
  /// `frameCount × channelCount` samples, interleaved.
  public let samples: UnsafeMutableBufferPointer<Float>
  /// Frames in the period.
  public let frameCount: Int
  /// Interleaved channels.
  public let channelCount: Int

  public init(samples: UnsafeMutableBufferPointer<Float>, frameCount: Int, channelCount: Int) {
    self.samples = samples
    self.frameCount = frameCount
    self.channelCount = channelCount
  }
}

/// What the devices granted, as a client sees it (RemoteIO's stream format
/// per bus and `kAudioUnitProperty_MaximumFramesPerSlice`).
public struct IOFormat: Sendable, Equatable {
  /// The capture bus (1), or `nil` when input is off.
  public var input: StreamFormat?
  /// The playback bus (0), or `nil` when output is off.
  public var output: StreamFormat?
  /// The most frames a callback is ever given.
  public var maximumFrameCount: Int
  /// The fewest frames from a captured frame to the moment an output
  /// rendered in the same period can be played: the unit's own buffering
  /// (a capture period and the playback pre-fill), or one cycle when it runs
  /// inside a sound server's. Anything heard sooner did not come from the speaker.
  public var loopDelayFrames: Int

  public init(
    input: StreamFormat?, output: StreamFormat?, maximumFrameCount: Int,
    loopDelayFrames: Int? = nil
  ) {
    self.input = input
    self.output = output
    self.maximumFrameCount = maximumFrameCount
    self.loopDelayFrames = loopDelayFrames ?? maximumFrameCount
  }
}

/// The code a duplex unit calls. `prepare` runs on the control thread,
/// after the devices granted their formats and before the first period: it
/// may allocate. The other two run on the audio thread only, once per
/// period, input first: they must not allocate, lock, log or throw (see
/// Docs/REALTIME.md). Only `prepare` has a default (nothing to allocate): a
/// client writes both callbacks, so a mistyped one is a compile error, not
/// silence.
public protocol DuplexClient: AnyObject {
  /// The granted formats; allocate every buffer the callbacks need here.
  func prepare(for format: IOFormat)

  /// A period of input is ready: call `input.render(into:)` to take it.
  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags)

  /// Fill `output` (already silent) with the period to play. Leave
  /// `isSilence` true when nothing was written, so the unit can skip the
  /// conversion.
  func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool)
}

extension DuplexClient {
  public func prepare(for format: IOFormat) {}
}
