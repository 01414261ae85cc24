import ArgumentParser
import AudioFiles
import DuplexIO
import MicLoopKit

/// Device options, as aplay/arecord spell them; `jack…` and `pw…` names
/// choose the native JACK and PipeWire backends (`DeviceRoute`). Every
/// job's but record's (`CaptureDeviceOptions`).
struct DeviceOptions: ParsableArguments, DeviceChoice {
  @Option(
    name: [.customShort("D"), .long],
    help:
      "Device for capture and playback: ALSA (default, hw:1,0, plughw:1, pulse, pulse:NAME …), JACK (jack, jack:none, jack:PORT-PATTERN) or PipeWire (pw, pw:none, pw:NODE)."
  )
  var device: String?
  @Option(help: "Capture device (overrides --device).")
  var capture: String?
  @Option(help: "Playback device (overrides --device).")
  var playback: String?
  @OptionGroup var stream: StreamOptions
  @Flag(
    help:
      "With --reconnect and a recording: fill the gap with silence of the same length, so the file's timeline stays true."
  )
  var fillGaps = false

  func validate() throws {
    if fillGaps && !reconnect {
      throw ValidationError("--fill-gaps fills the gaps --reconnect bridges; give --reconnect too")
    }
  }
}

/// The device options of a job that only captures and keeps no
/// recording of its own stream (record): no playback device, no
/// silence to fill a lost device's span with.
struct CaptureDeviceOptions: ParsableArguments, DeviceChoice {
  @Option(
    name: [.customShort("D"), .long],
    help:
      "Capture device: ALSA (default, hw:1,0, plughw:1, pulse, pulse:NAME …), JACK (jack, jack:none, jack:PORT-PATTERN) or PipeWire (pw, pw:none, pw:NODE)."
  )
  var device: String?
  @Option(help: "Capture device (the same as --device).")
  var capture: String?
  @OptionGroup var stream: StreamOptions
  var playback: String? { nil }
  var fillGaps: Bool { false }
}

/// How the device's stream runs: rate, channels, buffering, format,
/// memory locking and what happens when the device goes away.
struct StreamOptions: ParsableArguments {
  @Option(
    name: .customLong("rate"), parsing: .unconditional, help: "Sample rate in Hz (default 48000).")
  var rateOption: Int?
  @Option(parsing: .unconditional, help: "Channels.")
  var channels = 1
  @Option(
    parsing: .unconditional,
    help:
      "Frames per period (the device may grant another size; default 256 for loopback, 1024 when only capturing or only playing)."
  )
  var period: Int?
  @Option(
    parsing: .unconditional,
    help: "Periods per buffer (default 2 for loopback, 4 when only capturing or only playing).")
  var periods: Int?
  @Option(
    help: "Device sample format: s16, s24, s24_3, s32 or float (default: the most precise offered)."
  )
  var format: SampleFormat?
  @Flag(help: "Lock memory (mlockall) so the audio thread never waits for a page fault.")
  var lockMemory = false
  @Flag(
    help:
      "When the device or its sound server goes away, wait for it to come back and carry on (device_lost and device_back events; on JACK, connections made to its ports are restored: connections_restored) instead of ending."
  )
  var reconnect = false

  /// The rate asked for, 48000 Hz unless `--rate` says otherwise.
  var rate: Int { rateOption ?? 48_000 }

  func validate() throws {
    guard (1_000...768_000).contains(rate) else {
      throw ValidationError("--rate \(rate) is not a sample rate; use for example 44100 or 48000")
    }
    guard (1...64).contains(channels) else {
      throw ValidationError("--channels must be between 1 and 64")
    }
    if let period, !(16...65_536).contains(period) {
      throw ValidationError("--period must be 16 to 65536 frames")
    }
    if let periods, !(2...64).contains(periods) {
      throw ValidationError("--periods must be 2 to 64")
    }
  }
}

/// What every set of device options offers a command: the devices asked
/// for, the stream's settings, and the configuration, input and recovery
/// they make.
protocol DeviceChoice {
  var device: String? { get }
  var capture: String? { get }
  var stream: StreamOptions { get }
  var playback: String? { get }
  var fillGaps: Bool { get }
}

extension DeviceChoice {
  var rateOption: Int? { stream.rateOption }
  var rate: Int { stream.rate }
  var channels: Int { stream.channels }
  var period: Int? { stream.period }
  var periods: Int? { stream.periods }
  var format: SampleFormat? { stream.format }
  var lockMemory: Bool { stream.lockMemory }
  var reconnect: Bool { stream.reconnect }

  /// What a live job does when its device goes away.
  var recovery: DeviceRecovery { DeviceRecovery(reconnects: reconnect, fillsGaps: fillGaps) }

  var captureDevice: String { capture ?? device ?? "default" }
  var playbackDevice: String { playback ?? device ?? "default" }

  /// A configuration with these devices; inputs and outputs as asked. A
  /// job that only plays (tone, send) or only captures (meter, tones) has
  /// no round trip to keep short, so it buffers about 85 ms unless told
  /// otherwise: on a busy machine nothing it plays can underrun and a
  /// sound server never drops what it captured (a server's overrun is
  /// invisible to ALSA).
  func configuration(_ direction: DuplexConfiguration.Direction) -> DuplexConfiguration {
    let oneWay = direction != .duplex
    var configuration = DuplexConfiguration(direction)
    configuration.captureDevice = captureDevice
    configuration.playbackDevice = playbackDevice
    configuration.sampleRate = rate
    configuration.inputChannelCount = channels
    configuration.outputChannelCount = channels
    configuration.periodFrames = period ?? (oneWay ? 1024 : 256)
    configuration.periodCount = periods ?? (oneWay ? 4 : 2)
    configuration.alsa.format = format
    configuration.alsa.locksMemory = lockMemory
    return configuration
  }

  /// Refuses an `--input` given together with a capture device, and
  /// `--raw` without an input or without what it needs to describe one.
  func validate(input: String?, raw: Bool) throws {
    if input != nil && (device != nil || capture != nil) {
      throw ValidationError("use either --input FILE or -D DEVICE, not both")
    }
    if raw {
      guard input != nil else {
        throw ValidationError("--raw describes an input: add --input FILE, or --input - for a pipe")
      }
      _ = try rawFormat()
    }
  }

  /// Opens `--input` (headerless PCM with `--raw`) as a command fails on it.
  func openInput(_ path: String, raw: Bool) throws -> AudioFileReader {
    let format = raw ? try rawFormat() : nil
    do { return try AudioFileReader(path: path, raw: format) } catch {
      throw CommandFailure(error, readsRaw: format == nil)
    }
  }

  /// The layout of a headerless input, from `--rate` (required: nothing in
  /// the data says it), `--channels` (1) and `--format` (s16).
  func rawFormat() throws -> RawPCMFormat {
    guard rateOption != nil else {
      throw ValidationError(
        "--raw needs --rate: the sample rate of the raw samples, for example --rate 22050")
    }
    let encoding: AudioFileEncoding
    switch format {
    case nil, .s16: encoding = .pcm16
    case .s24Packed: encoding = .pcm24
    case .s32: encoding = .pcm32
    case .float: encoding = .float
    case .s24:
      throw ValidationError(
        "--format s24 (24 bits in 4 bytes) cannot be read raw; use s24_3 (3 bytes) or s32")
    }
    return RawPCMFormat(sampleRate: rate, channelCount: channels, encoding: encoding)
  }
}

extension SampleFormat: ExpressibleByArgument {}
