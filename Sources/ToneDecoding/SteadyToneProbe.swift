import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Measures one steady sinusoid in the last second or so of a stream: its
/// frequency to a fraction of a hertz, where it began, and whether it still
/// sounds where louder sounds hide it. A detector that needed several
/// frames (or a pause in the voice over a tone) to be sure of it asks how
/// far back it goes, and follows its phase through the voice afterwards.
///
/// Windows (Hann, `windowLength` samples) ending `step` samples apart are
/// measured at the tone's frequency, their phase referred to the stream's
/// start: a steady tone's phase then stays put from window to window (it
/// turns by 2π × the frequency error × the time between), and voice or
/// noise at that frequency keeps neither its phase nor its level.
///
/// Owned by one thread (the tone decoder's).
struct SteadyToneProbe {
  /// A tone followed: the frequency its windows are measured at, and the
  /// straight line its unwrapped phase has followed so far (least squares
  /// over the windows that held it, seconds from `anchor`): the slope is
  /// its frequency error, which a few windows alone leave uncertain by a
  /// few tenths of a hertz, too much to follow it for a second.
  struct Lock {
    var frequency: Double
    var amplitude: Double
    /// Sample where the first window ended; the time origin of the fit.
    let anchor: Int
    private var count = 0.0
    private var sumT = 0.0
    private var sumP = 0.0
    private var sumTT = 0.0
    private var sumTP = 0.0
    private var lastPhase = 0.0

    init(frequency: Double, amplitude: Double, anchor: Int) {
      self.frequency = frequency
      self.amplitude = amplitude
      self.anchor = anchor
    }

    /// The phase the line predicts `seconds` after the anchor.
    func phase(at seconds: Double) -> Double {
      guard count >= 2 else { return lastPhase }
      let slope = (count * sumTP - sumT * sumP) / max(count * sumTT - sumT * sumT, 1e-12)
      return (sumP - slope * sumT) / count + slope * seconds
    }

    /// The frequency the line says, in Hz.
    var refinedFrequency: Double {
      guard count >= 2 else { return frequency }
      let slope = (count * sumTP - sumT * sumP) / max(count * sumTT - sumT * sumT, 1e-12)
      return frequency + slope / (2 * Double.pi)
    }

    /// Adds a window's phase (any turn of it: it is unwrapped to the line).
    mutating func add(phase: Double, at seconds: Double) {
      let predicted = count == 0 ? phase : self.phase(at: seconds)
      let unwrapped = predicted + remainder(phase - predicted, 2 * Double.pi)
      count += 1
      sumT += seconds
      sumP += unwrapped
      sumTT += seconds * seconds
      sumTP += seconds * unwrapped
      lastPhase = unwrapped
    }

    /// How far `phase` is from the line `seconds` after the anchor.
    func error(of phase: Double, at seconds: Double) -> Double {
      remainder(phase - self.phase(at: seconds), 2 * Double.pi)
    }
  }

  let rate: Double
  let windowLength: Int
  let step: Int
  /// The last samples, a ring; `written` samples went in so far.
  private var past: [Float]
  private var written = 0
  private let window: [Double]
  /// The window of `sounds(_:)`: three short ones long.
  private let longWindow: [Double]
  /// Windows `start` looks back through at most.
  private let windows: Int
  /// The largest phase error (radians) of a window that still holds the tone.
  private static let phaseTolerance = Double.pi / 4
  /// Windows in a row off the line that `start` looks past (100 ms).
  private static let bridged = 5

  /// - Parameters:
  ///   - rate: samples per second.
  ///   - windowLength: samples per window.
  ///   - step: samples between window ends.
  ///   - seconds: how far back a start may be found (window included).
  init(rate: Double, windowLength: Int, step: Int, seconds: Double) {
    self.rate = rate
    self.windowLength = windowLength
    self.step = step
    let length = max(windowLength + 3 * step, Int((seconds * rate).rounded()))
    past = [Float](repeating: 0, count: length)
    window = HannWindow.values(length: windowLength)
    longWindow = HannWindow.values(length: min(length, 3 * windowLength))
    windows = (length - windowLength) / step + 1
  }

  mutating func append(_ sample: Float) {
    past[written % past.count] = sample
    written += 1
  }

  /// The tone near `frequency` Hz in three windows half a window apart
  /// ending now, its phase line started from them; `nil` unless it holds
  /// its level (within 30 %) and its phase turns less than an eighth of a
  /// turn from window to window. Windows that overlapped more would agree
  /// on noise too.
  func lock(near frequency: Double) -> Lock? {
    let spacing = windowLength / 2
    guard written >= windowLength + 2 * spacing else { return nil }
    let anchor = written - 2 * spacing
    let values = (
      value(at: frequency, endingAt: anchor), value(at: frequency, endingAt: anchor + spacing),
      value(at: frequency, endingAt: written)
    )
    let magnitudes = (
      Self.magnitude(values.0), Self.magnitude(values.1), Self.magnitude(values.2)
    )
    let loudest = max(magnitudes.0, magnitudes.1, magnitudes.2)
    let softest = min(magnitudes.0, magnitudes.1, magnitudes.2)
    guard loudest > 0, softest >= 0.7 * loudest else { return nil }
    let middle = magnitudes.0 + magnitudes.1 + magnitudes.2 - loudest - softest
    var lock = Lock(frequency: frequency, amplitude: middle, anchor: anchor)
    for (index, value) in [values.0, values.1, values.2].enumerated() {
      let phase = atan2(value.im, value.re)
      let seconds = Double(index * spacing) / rate
      if index > 0 && abs(lock.error(of: phase, at: seconds)) > Self.phaseTolerance { return nil }
      lock.add(phase: phase, at: seconds)
    }
    return lock
  }

  /// Seconds from the stream's start to where the tone of `lock` began:
  /// the earliest window going back that keeps to its phase line (which it
  /// refines) and holds more than half its level is where it fills half a
  /// window (between windows, by level), and it began half a window before
  /// that window's end. A voice over the tone may throw up to `bridged`
  /// windows in a row off the line; two in a row back on it carry on.
  func start(of lock: Lock) -> Double {
    var line = lock
    let available = (min(written, past.count) - windowLength) / step + 1
    let newest = (written - lock.anchor + step - 1) / step
    var earliest = lock.anchor
    var earliestCentre = Int.max
    var previousLevel = 1.0
    var misses = 0
    var pending: (end: Int, phase: Double)?
    for index in 1..<max(1, min(windows, available - newest)) {
      let end = lock.anchor - index * step
      let value = value(at: lock.frequency, endingAt: end)
      let level = Self.magnitude(value) / lock.amplitude
      let phase = atan2(value.im, value.re)
      let seconds = Double(end - lock.anchor) / rate
      let isOnLine = abs(line.error(of: phase, at: seconds)) <= Self.phaseTolerance
      if isOnLine && level >= 0.5 {
        if misses > 0 {
          guard let back = pending, back.end == end + step else {
            pending = (end, phase)
            continue
          }
          line.add(phase: back.phase, at: Double(back.end - lock.anchor) / rate)
          misses = 0
          pending = nil
        }
        line.add(phase: phase, at: seconds)
        earliest = end
        previousLevel = level
        continue
      }
      if misses == 0 && isOnLine {
        // The tone fades out of the windows: half of it at the crossing.
        let between = (previousLevel - 0.5) / max(previousLevel - level, 1e-9)
        let crossing = Double(earliest) / rate - between * Double(step) / rate - half
        return min(crossing, Double(earliestCentre) / rate)
      }
      if longWindowHolds(line, centredAt: end - windowLength / 2) {
        // A voice over it: the long window centred here still holds it.
        earliestCentre = end - windowLength / 2
        misses = 0
        pending = nil
        continue
      }
      misses += 1
      pending = nil
      if misses > Self.bridged { break }
    }
    return Double(min(earliest - windowLength / 2, earliestCentre)) / rate
  }

  /// Whether the tone of `lock` still sounds in the latest window: within
  /// half to twice its level, its phase on the line. If so, the lock
  /// takes the window in (phase line, level).
  func follows(_ lock: inout Lock) -> Bool {
    let value = value(at: lock.frequency, endingAt: written)
    let magnitude = Self.magnitude(value)
    let phase = atan2(value.im, value.re)
    let seconds = Double(written - lock.anchor) / rate
    guard magnitude >= 0.5 * lock.amplitude, magnitude <= 2 * lock.amplitude,
      abs(lock.error(of: phase, at: seconds)) <= Self.phaseTolerance
    else { return false }
    lock.add(phase: phase, at: seconds)
    lock.amplitude = 0.9 * lock.amplitude + 0.1 * magnitude
    return true
  }

  /// Whether the tone of `lock` sounds through the long window ending now
  /// (three short ones), where a voice over it throws the short windows
  /// off its line: there the tone adds up along its line while a voice,
  /// whose pitch glides, spreads. Measured at the line's frequency, its
  /// phase on the line at the window's centre within the same tolerance,
  /// at least 0.6 of the tone's level: a tone that stopped in the window's
  /// first half no longer does.
  func sounds(_ lock: Lock) -> Bool {
    longWindowHolds(lock, centredAt: written - longWindow.count / 2)
  }

  /// Whether the long window centred on sample `centre` holds the tone of
  /// `lock` (see `sounds`).
  private func longWindowHolds(_ lock: Lock, centredAt centre: Int) -> Bool {
    let length = longWindow.count
    let end = centre + length / 2
    guard end <= written, end - length >= max(0, written - past.count) else { return false }
    let refined = lock.refinedFrequency
    let value = value(at: refined, endingAt: end, window: longWindow)
    let magnitude = Self.magnitude(value) * Double(windowLength) / Double(length)
    // The phase measured at `lock.frequency` instead, where the line is.
    let seconds = Double(end - length / 2) / rate
    let phase = atan2(value.im, value.re) + 2 * Double.pi * (refined - lock.frequency) * seconds
    // The short window with the same centre ends half of one later.
    let lineSeconds = Double(end - length / 2 + windowLength / 2 - lock.anchor) / rate
    return magnitude >= 0.6 * lock.amplitude
      && abs(lock.error(of: phase, at: lineSeconds)) <= Self.phaseTolerance
  }

  /// Seconds from the end of the long window to its centre.
  var soundingLag: Double { Double(longWindow.count) / 2 / rate }

  /// Half a window, in seconds.
  private var half: Double { Double(windowLength) / 2 / rate }

  private static func magnitude(_ value: (re: Double, im: Double)) -> Double {
    (value.re * value.re + value.im * value.im).squareRoot()
  }

  /// The windowed value at `frequency` of the samples before sample `end`
  /// (as many as `window` has, `self.window` unless given), its phase
  /// referred to the stream's start.
  private func value(at frequency: Double, endingAt end: Int, window: [Double]? = nil) -> (
    re: Double, im: Double
  ) {
    let window = window ?? self.window
    let first = end - window.count
    let turn = 2 * Double.pi * frequency / rate
    let rotation = (re: cos(turn), im: -sin(turn))
    var sum = (re: 0.0, im: 0.0)
    var rotor = (re: 1.0, im: 0.0)
    for n in 0..<window.count {
      // Restarted from the exact angle now and then: no drift from rounding.
      if n % 64 == 0 {
        let angle = -turn * Double(first + n)
        rotor = (cos(angle), sin(angle))
      }
      let sample = Double(past[(first + n) % past.count]) * window[n]
      sum.re += sample * rotor.re
      sum.im += sample * rotor.im
      rotor = (
        rotor.re * rotation.re - rotor.im * rotation.im,
        rotor.re * rotation.im + rotor.im * rotation.re
      )
    }
    return sum
  }
}
