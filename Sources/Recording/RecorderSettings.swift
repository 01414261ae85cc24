import AudioFiles
import Metering
import TonePlans

/// What starts and keeps a recording going.
public enum RecorderTrigger: Sendable, Equatable {
  /// The talk detector (speech-band envelope over an adaptive floor).
  case talk
  /// The level in dBFS (10 ms RMS of all channels): opens at `threshold`,
  /// stays open until it has stayed `hysteresis` dB below for `hold`
  /// seconds. For carriers and squelched audio.
  case level(
    threshold: Double, hysteresis: Double = LevelDefaults.hysteresis,
    hold: Double = LevelDefaults.hold)

  public enum LevelDefaults {
    public static let hysteresis = 6.0
    public static let hold = 0.05
  }

  /// How the index names it.
  public var label: String {
    switch self {
    case .talk: "talk"
    case .level(let threshold, _, _): "level:\(Self.compact(threshold))"
    }
  }

  private static func compact(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}

/// The container of recorded files.
public enum RecordingContainer: String, Sendable, CaseIterable {
  /// WAV, RF64 past 4 GiB, header true after every block: valid at every
  /// moment, even after a crash. The default.
  case wav
  /// FLAC: about half the size, but its header learns the length only when
  /// closed, and libsndfile buffers a frame: after a crash the file says 0
  /// s and the last frame is lost (documented, not crash-proof).
  case flac

  var fileExtension: String { rawValue }
}

/// What is kept on disk (`nil`: no limit).
public struct RetentionPolicy: Sendable, Equatable {
  /// Delete closed recordings older than this many seconds.
  public var maximumAge: Double?
  /// Keep the recordings, their sidecars and the session indexes under
  /// this many bytes, deleting the oldest closed recordings.
  public var maximumBytes: Int64?
  /// Keep this many bytes free on the file system, deleting the oldest
  /// closed recordings; when none is left to delete, stop writing (a
  /// `disk_full` gap) rather than fill it.
  public var minimumFree: Int64?

  public init(maximumAge: Double? = nil, maximumBytes: Int64? = nil, minimumFree: Int64? = nil) {
    self.maximumAge = maximumAge
    self.maximumBytes = maximumBytes
    self.minimumFree = minimumFree
  }
}

/// Settings of a voice- and tone-activated recording; every field has a
/// default.
public struct RecorderSettings: Sendable {
  public var trigger = RecorderTrigger.talk
  /// Calls that start recordings; empty: the trigger starts them. With
  /// calls, talk or level alone starts nothing but keeps a recording going.
  public var startOn: [ToneStart] = []
  /// The CTCSS sub-tone (Hz) the trigger counts under; `nil`: no gate.
  public var subTone: Double?
  /// Other plans decoded only to tag recordings.
  public var tagPlans: [TonePlan] = []
  /// Seconds kept before the first sound.
  public var preRoll = 0.3
  /// Seconds of quiet after which a recording ends (its tail is kept).
  public var hang = 1.5
  /// Shortest transmission, in seconds of activity, that makes a file;
  /// shorter ones are logged as blips.
  public var minimum = 0.3
  /// A file this long is split at the next pause, sample-continuous; one
  /// with no pause at `maximum × forcedSplitFactor`.
  public var maximum = 1800.0
  public static let forcedSplitFactor = 1.1
  /// Seconds a recording started by a call stays open for the
  /// announcement after the call, talk or not.
  public var callHang = 5.0
  /// The talk detector's settings (with the `talk` trigger).
  public var meter = MeterSettings()
  /// How often the open file is forced to disk, in seconds.
  public var syncInterval = 2.0
  public var container = RecordingContainer.wav
  /// The sample encoding of the files; `nil`: that of the input (files)
  /// or 16-bit (devices).
  public var encoding: AudioFileEncoding?
  public var naming = FileNaming()
  public var retention = RetentionPolicy()
  /// The most seconds of audio expected between two `Recorder.update`
  /// calls: a live job's whole capture buffer can arrive at once after a
  /// stall, and the look-back holds it all until it is decided. The
  /// look-back is sized for it at the start; more than this grows it then
  /// (nothing is lost, but the growth allocates).
  public var largestArrival = 1.0
  /// The most seconds of audio the look-back keeps undecided while a
  /// trigger reports later than its delay (a decoder whose analysis
  /// dropped frames, a caller that stopped reporting): it grows to hold
  /// that much, and past it the oldest frames are decided without the
  /// late reports (reported as a problem) rather than held without bound.
  public var largestBacklog = 60.0

  public init() {}

  /// The sample rates a recorder takes: its rings and files are sized by
  /// time, and its triggers hear speech, so a rate below telephony's or
  /// above the fastest converters' is refused rather than sized for.
  public static let sampleRates = 4_000.0...768_000.0

  /// Every plan the decoder needs.
  public var decodedPlans: [TonePlan] {
    var plans = [TonePlan]()
    func add(_ plan: TonePlan) { if !plans.contains(plan) { plans.append(plan) } }
    for start in startOn { add(start.plan) }
    if subTone != nil { add(.ctcss) }
    for plan in tagPlans { add(plan) }
    return plans
  }

  /// Seconds from the start of a call or sub-tone until its report.
  var toneLatency: Double {
    var latency = 1.0
    for start in startOn { latency = max(latency, start.reportLatency) }
    if subTone != nil { latency = max(latency, SubToneGate.reportLatency) }
    return latency
  }

  /// Seconds a tag may be reported after the sound it names (a call's
  /// report follows its end), so a closed file waits that long for them.
  var tagLatency: Double {
    decodedPlans.isEmpty ? 0 : min(toneLatency, 6)
  }
}
