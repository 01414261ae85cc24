import Synchronization

/// When a period was captured or will be played.
public struct AudioTimeStamp: Sendable, Equatable {
  /// Frames since the unit started; advances by exactly the period each time.
  public var sampleTime: Int64
  /// Monotonic host time in nanoseconds (ALSA's status time stamp).
  public var hostTime: UInt64

  public init(sampleTime: Int64, hostTime: UInt64) {
    self.sampleTime = sampleTime
    self.hostTime = hostTime
  }
}

/// Conditions reported with a period.
public struct IOFlags: OptionSet, Sendable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  /// Captured audio was lost before this period (capture overrun).
  public static let inputOverrun = IOFlags(rawValue: 1)
  /// Playback ran dry before this period (playback underrun).
  public static let outputUnderrun = IOFlags(rawValue: 2)
  /// Frames were dropped or repeated to keep two clocks together.
  public static let driftCorrected = IOFlags(rawValue: 4)
}

/// The format of one bus as micloop sees it: interleaved Float32.
public struct StreamFormat: Sendable, Equatable {
  public var sampleRate: Int
  public var channelCount: Int
  public init(sampleRate: Int, channelCount: Int) {
    self.sampleRate = sampleRate
    self.channelCount = channelCount
  }
}

/// What a unit asks for. Every field has a default; ALSA-only knobs are in
/// `alsa`. Bus 1 is input (capture, off until enabled), bus 0 is output
/// (playback, on by default), as in RemoteIO.
public struct DuplexConfiguration: Sendable, Equatable {
  /// ALSA-specific settings.
  public struct ALSA: Sendable, Equatable {
    /// Device sample format; `nil` picks the most precise the device offers.
    public var format: SampleFormat?
    /// Run the audio thread with SCHED_FIFO when permitted.
    public var usesRealtimePriority = true
    /// SCHED_FIFO priority (1–99).
    public var realtimePriority: Int32 = 70
    /// Lock the process's memory (mlockall) when permitted.
    public var locksMemory = false
    public init() {}
  }

  /// Which buses a unit runs: both, or one alone.
  public enum Direction: Sendable, Equatable {
    /// Capture (bus 1) and playback (bus 0), as a monitor or a loopback needs.
    case duplex
    /// Capture only: a meter, a recorder, a decoder.
    case capture
    /// Playback only: a tone generator.
    case playback
  }

  /// The buses the unit runs; chosen when the configuration is made, so an
  /// input can never be forgotten (a unit with no input plays silence).
  public var direction: Direction
  public var captureDevice = "default"
  public var playbackDevice = "default"
  /// Whether the capture bus (1) runs.
  public var isInputEnabled: Bool { direction != .playback }
  /// Whether the playback bus (0) runs.
  public var isOutputEnabled: Bool { direction != .capture }
  public var sampleRate = 48_000
  public var inputChannelCount = 1
  public var outputChannelCount = 1
  /// Preferred frames per period (ALSA may grant another size).
  public var periodFrames = 256
  /// Preferred periods per buffer.
  public var periodCount = 2
  /// Seconds after start during which playback underruns are recovered
  /// and counted as settling, not as underruns: sound servers (pulse)
  /// report an underflow while their sink first fills its own queue. A
  /// capture overrun always counts: its restart loses captured audio.
  public var settlingTime = 0.25
  public var alsa = ALSA()

  /// A configuration of `direction` with every other field at its default.
  public init(_ direction: Direction) { self.direction = direction }

  /// Capture and playback.
  public static var duplex: DuplexConfiguration { DuplexConfiguration(.duplex) }
  /// Capture only.
  public static var capture: DuplexConfiguration { DuplexConfiguration(.capture) }
  /// Playback only.
  public static var playback: DuplexConfiguration { DuplexConfiguration(.playback) }

  /// The preferred I/O buffer duration in seconds (period × count).
  public var preferredBufferDuration: Double {
    Double(periodFrames * periodCount) / Double(sampleRate)
  }
}

/// What the devices granted.
public struct GrantedConfiguration: Sendable, Equatable {
  public var sampleRate: Int
  public var periodFrames: Int
  public var inputPeriodCount: Int
  public var outputPeriodCount: Int
  public var inputFormat: SampleFormat?
  public var outputFormat: SampleFormat?
  public var inputChannelCount: Int
  public var outputChannelCount: Int
  /// Whether capture and playback start and stop together (snd_pcm_link).
  public var isLinked: Bool
  /// The most frames a period may hold: `periodFrames` on ALSA; on a sound
  /// server that may change its cycle while running (JACK, PipeWire), the
  /// largest cycle it can run, for which every buffer is allocated.
  public var maximumPeriodFrames: Int
  /// Whether a sound server's cycle drives the periods (JACK, PipeWire):
  /// the unit then runs inside the cycle and holds no buffer of its own;
  /// the period counts are the server's one period per direction.
  public var isServerCycle: Bool

  public init(
    sampleRate: Int, periodFrames: Int, inputPeriodCount: Int, outputPeriodCount: Int,
    inputFormat: SampleFormat?,
    outputFormat: SampleFormat?, inputChannelCount: Int, outputChannelCount: Int, isLinked: Bool,
    maximumPeriodFrames: Int? = nil, isServerCycle: Bool = false
  ) {
    self.maximumPeriodFrames = max(periodFrames, maximumPeriodFrames ?? periodFrames)
    self.isServerCycle = isServerCycle
    self.sampleRate = sampleRate
    self.periodFrames = periodFrames
    self.inputPeriodCount = inputPeriodCount
    self.outputPeriodCount = outputPeriodCount
    self.inputFormat = inputFormat
    self.outputFormat = outputFormat
    self.inputChannelCount = inputChannelCount
    self.outputChannelCount = outputChannelCount
    self.isLinked = isLinked
  }

  /// Frames of playback queued after the start (all periods, or one fewer
  /// when there are three or more; see `ALSADevicePair.start`).
  public var outputPrefillFrames: Int {
    guard outputFormat != nil, !isServerCycle else { return 0 }
    return periodFrames * (outputPeriodCount >= 3 ? outputPeriodCount - 1 : outputPeriodCount)
  }

  /// Frames of buffering in the loop: one capture period plus the
  /// playback pre-fill; none when the unit runs inside a server's cycle.
  public var loopBufferFrames: Int {
    (inputFormat != nil && !isServerCycle ? periodFrames : 0) + outputPrefillFrames
  }
}

/// Counters the audio thread keeps and any thread may read.
public final class IOStatistics: Sendable {
  /// Periods processed.
  public let periods = Atomic<Int>(0)
  /// Capture overruns recovered.
  public let overruns = Atomic<Int>(0)
  /// Playback underruns recovered.
  public let underruns = Atomic<Int>(0)
  /// Xruns recovered while the streams settled just after start.
  public let settlingXruns = Atomic<Int>(0)
  /// Frames dropped (positive) or repeated (negative) to follow clock drift.
  public let driftCorrectedFrames = Atomic<Int>(0)
  /// Largest playback delay seen, in frames.
  public let maximumOutputDelay = Atomic<Int>(0)
  /// Frames of input a sound server lost: cycles its graph ran without the
  /// unit, or buffers that were missing (native JACK and PipeWire backends,
  /// which see the graph's clock; 0 where a backend cannot tell).
  public let lostFrames = Atomic<Int>(0)

  public init() {}

  public var xruns: Int { overruns.load(ordering: .relaxed) + underruns.load(ordering: .relaxed) }

  /// The counters as plain values, read now (any thread).
  public func snapshot() -> IOStatisticsSnapshot {
    IOStatisticsSnapshot(
      periods: periods.load(ordering: .relaxed), overruns: overruns.load(ordering: .relaxed),
      underruns: underruns.load(ordering: .relaxed),
      settlingXruns: settlingXruns.load(ordering: .relaxed),
      driftCorrectedFrames: driftCorrectedFrames.load(ordering: .relaxed),
      maximumOutputDelay: maximumOutputDelay.load(ordering: .relaxed),
      lostFrames: lostFrames.load(ordering: .relaxed))
  }
}

/// `IOStatistics` at one moment, as plain values.
public struct IOStatisticsSnapshot: Sendable, Equatable {
  public var periods: Int
  public var overruns: Int
  public var underruns: Int
  public var settlingXruns: Int
  public var driftCorrectedFrames: Int
  public var maximumOutputDelay: Int
  public var lostFrames: Int
  /// Overruns and underruns.
  public var xruns: Int { overruns + underruns }
}

/// A bus of the unit, numbered as in RemoteIO: 0 plays, 1 captures.
public enum Bus: Int, Sendable, CaseIterable {
  case output = 0
  case input = 1

  /// "input" or "output", as the JSON Lines contract names it.
  public var name: String { self == .input ? "input" : "output" }
}
