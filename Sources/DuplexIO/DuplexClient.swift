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

  /// Converts the period to interleaved Float32 in `buffer`, which must hold
  /// `frameCount × channelCount` samples. Audio thread; never allocates.
  public func render(into buffer: UnsafeMutablePointer<Float>) {
    format.decode(raw, into: buffer, count: frameCount * channelCount)
  }
}

/// The code a duplex unit calls on its audio thread. Both methods run on
/// that thread only, once per period, input first: they must not allocate,
/// lock, log or throw (see Docs/REALTIME.md).
public protocol DuplexClient: AnyObject {
  /// A period of input is ready: call `input.render(into:)` to take it.
  func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags)

  /// Fill `output` (interleaved, already silent) with the period to play.
  /// Leave `isSilence` true when nothing was written, so the unit can skip
  /// the conversion.
  func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags,
    isSilence: inout Bool)
}

extension DuplexClient {
  public func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {}
  public func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags,
    isSilence: inout Bool
  ) {}
}
