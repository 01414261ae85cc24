import SignalDSP

/// The `level` trigger: active while the signal is loud, for a carrier or
/// squelched audio. Each 10 ms frame's power (all channels) in dBFS opens
/// it at `threshold` or above; it stays open until frames have stayed
/// below `threshold − hysteresis` for `hold`. A start is placed where the
/// level last rose above the lower threshold before reaching the upper
/// one, an end where it last fell below it, so neither is padded.
/// Control thread.
struct LevelTrigger {
  let openPower: Double
  let closePower: Double
  let frameLength: Int
  let holdFrames: Int
  let channelCount: Int
  /// Seconds of one frame.
  static let frameSeconds = 0.01
  private var sum = 0.0
  private var filled = 0
  /// The timeline frame the current 10 ms frame starts at.
  private var frameStart: Int64 = 0
  private(set) var isOpen = false
  private var wasAboveClose = false
  private var lastRise: Int64 = 0
  private var lastFall: Int64 = 0
  private var framesBelow = 0

  init(
    threshold: Double, hysteresis: Double, hold: Double, sampleRate: Double, channelCount: Int
  ) {
    openPower = Decibels.amplitude(threshold) * Decibels.amplitude(threshold)
    closePower =
      Decibels.amplitude(threshold - hysteresis) * Decibels.amplitude(threshold - hysteresis)
    frameLength = max(1, Int((sampleRate * Self.frameSeconds).rounded()))
    holdFrames = max(1, Int((hold / Self.frameSeconds).rounded()))
    self.channelCount = channelCount
  }

  /// Moves the trigger to timeline frame `frame` (after a gap), closing
  /// it where the audio stopped.
  mutating func jump(to frame: Int64, onChange: (_ isStart: Bool, _ frame: Int64) -> Void) {
    if isOpen {
      isOpen = false
      onChange(false, wasAboveClose ? frameStart + Int64(filled) : lastFall)
    }
    sum = 0
    filled = 0
    frameStart = frame
    wasAboveClose = false
    framesBelow = 0
  }

  /// Feeds the next frames of the timeline; `onChange` gets each start and end.
  mutating func process(
    _ samples: UnsafePointer<Float>, frameCount: Int,
    onChange: (_ isStart: Bool, _ frame: Int64) -> Void
  ) {
    var index = 0
    while index < frameCount {
      let run = min(frameCount - index, frameLength - filled)
      var total: Float = 0
      let base = samples + index * channelCount
      for sample in 0..<run * channelCount { total += base[sample] * base[sample] }
      sum += Double(total)
      filled += run
      index += run
      if filled == frameLength { endFrame(onChange: onChange) }
    }
  }

  private mutating func endFrame(onChange: (Bool, Int64) -> Void) {
    let power = sum / Double(frameLength * channelCount)
    let start = frameStart
    frameStart += Int64(frameLength)
    sum = 0
    filled = 0
    let aboveClose = power >= closePower
    if aboveClose && !wasAboveClose { lastRise = start }
    if !aboveClose && wasAboveClose { lastFall = start }
    wasAboveClose = aboveClose
    if isOpen {
      framesBelow = aboveClose ? 0 : framesBelow + 1
      if framesBelow >= holdFrames {
        isOpen = false
        onChange(false, lastFall)
      }
    } else if power >= openPower {
      isOpen = true
      framesBelow = 0
      onChange(true, lastRise)
    }
  }

  /// Seconds from an end to its report.
  var endLatency: Double { Double(holdFrames + 1) * Self.frameSeconds }
}
