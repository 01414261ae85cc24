import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// A bank of narrow cut-only notches applied in series to interleaved
/// audio, each with its own frequency and depth, for every channel alike.
///
/// A notch is `x − c · bandpass(x)`: a constant-peak band-pass (RBJ's,
/// 0 dB at its centre, bandwidth `frequency / quality`) taken away from
/// the signal in the proportion `c = 1 − 10^(−depth / 20)`. Its centre is
/// cut by exactly `depth` dB while its bandwidth stays the same at any
/// depth (a peaking cut widens as it deepens); the band-pass runs on the
/// signal whatever `c` is, so a depth can change at any moment without a
/// click — `c` moves in a straight line over `rampFrames` — and a notch
/// whose `c` has come back to 0 leaves the bank: a bank with no notch
/// passes the samples untouched, bit for bit.
///
/// Placed, deepened and lifted on the audio thread (no allocation after
/// `init`); one thread at a time.
public final class NotchBank: @unchecked Sendable {
  /// Slots in the bank.
  public let capacity: Int
  public let channelCount: Int
  public let sampleRate: Double
  /// Bandwidth of every notch as a fraction of its frequency, inverted.
  public let quality: Double
  /// Frames a depth change takes.
  public let rampFrames: Int

  private struct Slot {
    var isActive = false
    var frequency = 0.0
    /// The depth asked for, dB (positive: a cut).
    var depth = 0.0
    var shape = NotchShape(frequency: 1, quality: 1, sampleRate: 4)
    /// Proportion of the band taken away now, its target and per-frame step.
    var amount = 0.0, target = 0.0, step = 0.0
    var remaining = 0
  }

  private var slots: [Slot]
  /// Per slot and channel: the band-pass's last two inputs and outputs.
  private let state: UnsafeMutablePointer<Double>
  /// Active notches.
  public private(set) var activeCount = 0

  /// - Parameters:
  ///   - capacity: how many notches the bank holds.
  ///   - quality: centre frequency over bandwidth (7 ≈ 1/5 octave).
  ///   - rampDuration: seconds a depth change takes.
  public init(
    capacity: Int, channelCount: Int, sampleRate: Double, quality: Double,
    rampDuration: Double
  ) {
    self.capacity = capacity
    self.channelCount = channelCount
    self.sampleRate = sampleRate
    self.quality = quality
    rampFrames = max(1, Int((rampDuration * sampleRate).rounded()))
    slots = [Slot](repeating: Slot(), count: capacity)
    state = .allocate(capacity: max(1, capacity * channelCount * 4))
    state.initialize(repeating: 0, count: max(1, capacity * channelCount * 4))
    warmUp()
  }

  /// Places, filters and lifts a notch once, so that whatever the Swift
  /// runtime sets up on first use (type metadata) is done here, not on the
  /// audio thread; the bank is empty and silent again after.
  private func warmUp() {
    guard capacity > 0 else { return }
    let frames = rampFrames + 1
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: frames * channelCount)
    defer { scratch.deallocate() }
    scratch.initialize(repeating: 0, count: frames * channelCount)
    place(0, frequency: sampleRate / 8, depth: 6)
    process(scratch, frameCount: frames)
    setDepth(0, 0)
    process(scratch, frameCount: frames)
    removeAll()
  }

  /// Takes every notch out at once, with no ramp (while the bank is not
  /// in use, as when it is made).
  public func removeAll() {
    for index in 0..<capacity { slots[index] = Slot() }
    activeCount = 0
    state.update(repeating: 0, count: capacity * channelCount * 4)
  }

  deinit { state.deallocate() }

  /// Whether no notch is in the signal path.
  public var isEmpty: Bool { activeCount == 0 }

  /// Whether `slot` holds a notch (lifting or not).
  public func isActive(_ slot: Int) -> Bool { slots[slot].isActive }
  /// The centre frequency of `slot` in Hz.
  public func frequency(_ slot: Int) -> Double { slots[slot].frequency }
  /// The depth `slot` is set to, in dB (positive: a cut; 0 while lifting).
  public func depth(_ slot: Int) -> Double { slots[slot].depth }

  /// A free slot, or `nil` when the bank is full.
  public var freeSlot: Int? {
    for index in 0..<capacity where !slots[index].isActive { return index }
    return nil
  }

  /// The active slot whose centre is nearest `frequency` within `octaves`, if any.
  public func slot(near frequency: Double, within octaves: Double) -> Int? {
    var best: Int?
    var distance = octaves
    for index in 0..<capacity where slots[index].isActive {
      let apart = abs(log2(frequency / slots[index].frequency))
      if apart <= distance {
        distance = apart
        best = index
      }
    }
    return best
  }

  /// Places a notch at `frequency` in `slot` (free), ramping in to `depth` dB.
  public func place(_ slot: Int, frequency: Double, depth: Double) {
    let shape = NotchShape(frequency: frequency, quality: quality, sampleRate: sampleRate)
    var entry = Slot()
    entry.isActive = true
    entry.frequency = frequency
    entry.shape = shape
    slots[slot] = entry
    let base = slot * channelCount * 4
    for index in 0..<channelCount * 4 { state[base + index] = 0 }
    activeCount += 1
    setDepth(slot, depth)
  }

  /// Ramps `slot` to `depth` dB; at 0 the notch leaves the bank once the ramp ends.
  public func setDepth(_ slot: Int, _ depth: Double) {
    guard slots[slot].isActive else { return }
    slots[slot].depth = max(0, depth)
    let target = NotchShape.amount(forDepth: depth)
    slots[slot].target = target
    slots[slot].remaining = rampFrames
    slots[slot].step = (target - slots[slot].amount) / Double(rampFrames)
  }

  /// Filters `frameCount` interleaved frames of `channelCount` (the bank's) in place.
  public func process(_ samples: UnsafeMutablePointer<Float>, frameCount: Int) {
    guard activeCount > 0 else { return }
    let channels = channelCount
    for index in 0..<capacity where slots[index].isActive {
      var slot = slots[index]
      let base = state + index * channels * 4
      let (b0, a1, a2) = (slot.shape.b0, slot.shape.a1, slot.shape.a2)
      // A channel at a time, its state in registers (kept in memory, each
      // output would wait on the store of the one before); the ramp
      // replayed alike for each.
      var ramp = (remaining: slot.remaining, amount: slot.amount)
      for channel in 0..<channels {
        let memory = base + channel * 4
        var (x1, x2, y1, y2) = (memory[0], memory[1], memory[2], memory[3])
        ramp = (slot.remaining, slot.amount)
        var sample = samples + channel
        for _ in 0..<frameCount {
          if ramp.remaining > 0 {
            ramp.remaining -= 1
            ramp.amount = ramp.remaining == 0 ? slot.target : ramp.amount + slot.step
          }
          let x = Double(sample.pointee)
          let y = b0 * (x - x2) - a1 * y1 - a2 * y2
          (x2, x1, y2, y1) = (x1, x, y1, y)
          sample.pointee = Float(x - ramp.amount * y)
          sample += channels
        }
        (memory[0], memory[1], memory[2], memory[3]) = (x1, x2, y1, y2)
      }
      (slot.remaining, slot.amount) = ramp
      if slot.remaining == 0 && slot.target == 0 {
        slot.isActive = false
        activeCount -= 1
      }
      slots[index] = slot
    }
  }

  /// Gain of the whole bank at `frequency` in dB, for checks and tests.
  public func response(at frequency: Double) -> Double {
    let w = 2 * Double.pi * frequency / sampleRate
    var total = 0.0
    for slot in slots where slot.isActive {
      let (re, im) = slot.shape.notch(amount: slot.amount, cosine: cos(w), sine: sin(w))
      total += 10 * log10(re * re + im * im)
    }
    return total
  }
}
