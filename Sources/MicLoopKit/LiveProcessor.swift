import DuplexIO
import SignalDSP
import Synchronization

/// A meter or talk event in a form that crosses from the audio thread to
/// the control thread through a ring (no references, no allocation).
public struct LiveEvent: BitwiseCopyable, Sendable {
  public enum Kind: UInt8, Sendable, BitwiseCopyable { case level, talkStart, talkEnd }
  public var kind: Kind
  public var time: Double
  /// Levels in dBFS; NaN stands for silence.
  public var peak: Double
  public var rms: Double
  public var envelope: Double
  public var isTalking: Bool

  init(_ event: MeterEvent) {
    switch event {
    case .level(let reading):
      self.init(
        kind: .level, time: reading.time, peak: reading.peakDecibels ?? .nan,
        rms: reading.rmsDecibels ?? .nan,
        envelope: reading.envelopeDecibels ?? .nan, isTalking: reading.isTalking)
    case .talkStart(let time):
      self.init(
        kind: .talkStart, time: time, peak: .nan, rms: .nan, envelope: .nan, isTalking: true)
    case .talkEnd(let time):
      self.init(kind: .talkEnd, time: time, peak: .nan, rms: .nan, envelope: .nan, isTalking: false)
    case .summary:
      self.init(kind: .level, time: 0, peak: .nan, rms: .nan, envelope: .nan, isTalking: false)
    }
  }

  init(kind: Kind, time: Double, peak: Double, rms: Double, envelope: Double, isTalking: Bool) {
    self.kind = kind
    self.time = time
    self.peak = peak
    self.rms = rms
    self.envelope = envelope
    self.isTalking = isTalking
  }

  /// The event as the meter reports it.
  public var meterEvent: MeterEvent {
    func level(_ value: Double) -> Double? { value.isNaN ? nil : value }
    switch kind {
    case .level:
      return .level(
        LevelReading(
          time: time, peakDecibels: level(peak), rmsDecibels: level(rms),
          envelopeDecibels: level(envelope),
          isTalking: isTalking))
    case .talkStart: return .talkStart(time: time)
    case .talkEnd: return .talkEnd(time: time)
    }
  }
}

/// Settings of a live job; every field has a default.
public struct LiveSettings: Sendable {
  /// Meter the input (levels and talk); `nil` for no meter.
  public var meter: MeterSettings? = MeterSettings()
  /// Gain from input to output in dB.
  public var gainDecibels = 0.0
  /// Soft-limit the output so passthrough never wraps.
  public var isLimiting = true
  /// Keep a copy of the captured input for a recording.
  public var isRecording = false
  /// Seconds of audio the recording ring holds while the control thread catches up.
  public var recordingBuffer = 4.0
  /// Hand a mono mix of the input to the control thread (tone decoding).
  public var isAnalyzing = false
  /// Analyse only this channel (zero-based) instead of the mix of all.
  public var analysisChannel: Int?

  public init() {}
}

/// The client of a live unit: meters the captured input, passes it to the
/// output with a ramped gain and a soft limiter, and hands events and the
/// recording to the control thread through rings.
///
/// The callbacks run on the audio thread and never allocate; `gainTarget`,
/// `isMuted`, `framesProcessed` and the rings are the cross-thread surface.
/// Call `finishMeter` on the control thread once the unit has stopped.
public final class LiveProcessor: DuplexClient, @unchecked Sendable {
  public let format: StreamFormat
  public let outputChannelCount: Int
  public let settings: LiveSettings
  /// Events for the control thread.
  public let events = SPSCRing<LiveEvent>(capacity: 4096)
  /// The captured input, interleaved, for a recording (when enabled).
  public let recording: SPSCRing<Float>?
  /// The captured input folded to mono, for analysis on the control thread.
  public let analysis: SPSCRing<Float>?
  /// Frames captured so far.
  public let framesProcessed = Atomic<Int>(0)
  /// Requested gain (Float bit pattern, linear); ramped on the audio thread.
  public let gainTarget: Atomic<UInt32>
  /// Whether the output is muted (ramped like a gain change).
  public let isMuted = Atomic<Bool>(false)
  /// Extra work on the captured input (tone detection), audio thread.
  public var inputTap: ((UnsafeBufferPointer<Float>, Int64) -> Void)?

  private let meter: MeterProcessor?
  private let input: UnsafeMutableBufferPointer<Float>
  private let mono: UnsafeMutablePointer<Float>
  private var gain: GainRamp
  private var appliedTarget: UInt32
  private var wasMuted = false

  public init(
    format: StreamFormat, outputChannelCount: Int, maximumPeriod: Int, settings: LiveSettings
  ) {
    self.format = format
    self.outputChannelCount = outputChannelCount
    self.settings = settings
    let linear = Float(Decibels.amplitude(settings.gainDecibels))
    gainTarget = Atomic(linear.bitPattern)
    appliedTarget = linear.bitPattern
    // 5 ms ramps: no zipper noise, no audible lag.
    gain = GainRamp(
      gain: linear, rampSamples: max(1, format.sampleRate / 200), isLimiting: settings.isLimiting)
    input = .allocate(capacity: maximumPeriod * format.channelCount)
    input.initialize(repeating: 0)
    mono = .allocate(capacity: maximumPeriod)
    mono.initialize(repeating: 0, count: maximumPeriod)
    analysis =
      settings.isAnalyzing
      ? SPSCRing(capacity: Int(settings.recordingBuffer * Double(format.sampleRate))) : nil
    meter = settings.meter.map {
      MeterProcessor(
        sampleRate: Double(format.sampleRate), channelCount: format.channelCount, settings: $0,
        maximumBlock: maximumPeriod)
    }
    recording =
      settings.isRecording
      ? SPSCRing(
        capacity: Int(settings.recordingBuffer * Double(format.sampleRate)) * format.channelCount)
      : nil
  }

  deinit {
    input.deallocate()
    mono.deallocate()
  }

  /// Sets the gain in dB (any thread).
  public func setGain(decibels: Double) {
    gainTarget.store(Float(Decibels.amplitude(decibels)).bitPattern, ordering: .releasing)
  }

  /// The requested gain in dB.
  public var gainDecibels: Double {
    Decibels.fromAmplitude(Double(Float(bitPattern: gainTarget.load(ordering: .acquiring))))
      ?? -.infinity
  }

  public func inputAvailable(_ captured: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    let frames = captured.frameCount
    let samples = frames * format.channelCount
    let base = input.baseAddress!
    captured.render(into: base)
    recording?.push(base, count: samples)
    if let analysis {
      MonoMix.mix(
        base, frameCount: frames, channelCount: format.channelCount,
        channel: settings.analysisChannel, into: mono)
      analysis.push(mono, count: frames)
    }
    inputTap?(UnsafeBufferPointer(start: base, count: samples), timeStamp.sampleTime)
    if let meter {
      let copy = input.baseAddress!
      meter.process(copy, frameCount: frames) { event in events.push(LiveEvent(event)) }
    }
    framesProcessed.add(frames, ordering: .releasing)
  }

  public func renderOutput(
    _ output: UnsafeMutableBufferPointer<Float>, frameCount: Int, timeStamp: AudioTimeStamp,
    flags: IOFlags,
    isSilence: inout Bool
  ) {
    let muted = isMuted.load(ordering: .relaxed)
    let target = gainTarget.load(ordering: .relaxed)
    if target != appliedTarget || muted != wasMuted {
      appliedTarget = target
      wasMuted = muted
      gain.setTarget(muted ? 0 : Float(bitPattern: target))
    }
    let inChannels = format.channelCount
    let outChannels = outputChannelCount
    if inChannels == outChannels {
      output.baseAddress!.update(from: input.baseAddress!, count: frameCount * inChannels)
    } else if inChannels == 1 {
      for frame in 0..<frameCount {
        for channel in 0..<outChannels { output[frame * outChannels + channel] = input[frame] }
      }
    } else {
      // Fold every input channel into each output channel (average).
      let scale = 1 / Float(inChannels)
      for frame in 0..<frameCount {
        var sum: Float = 0
        for channel in 0..<inChannels { sum += input[frame * inChannels + channel] }
        for channel in 0..<outChannels { output[frame * outChannels + channel] = sum * scale }
      }
    }
    gain.process(
      UnsafeMutableBufferPointer(start: output.baseAddress!, count: frameCount * outChannels))
    isSilence = false
  }

  /// Ends the meter and returns its summary (control thread, after stop).
  public func finishMeter(emit: (MeterEvent) -> Void) {
    meter?.finish(emit: emit)
  }
}
