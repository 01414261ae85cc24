import ArgumentParser
import Console
import Metering
import MicLoopKit
import ToneDecoding
import TonePlans

/// `micloop tones`: decode DTMF, 5-tone calls, Handshake text … from a
/// capture device or a file.
struct Tones: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tones",
    abstract: "Decode signalling tones (DTMF, 5-tone selective call, Handshake …).",
    discussion: """
      Plans: \(TonePlan.names); several at once separated by commas \
      (--plan dtmf,ccir). Prints a line per tone and per call or message; \
      --json prints JSON Lines (tone, sequence, summary). 5-tone calls are \
      reported whole with the repeat tone E expanded; Handshake needs 44100 Hz or more.
      """)

  @Option(help: "Tone plan(s): \(TonePlan.names).")
  var plan: String
  @Option(
    name: [.short, .long],
    help:
      "Audio file to decode (WAV, FLAC, OGG …); - reads standard input (any format; headerless PCM with --raw)."
  )
  var input: String?
  @Flag(
    help:
      "The input is headerless little-endian PCM, as rtl_fm writes: give --rate; --channels and --format default to 1 and s16."
  )
  var raw = false
  @OptionGroup(title: "Devices (without --input: decode live from the capture device)")
  var devices: DeviceOptions
  @Option(parsing: .unconditional, help: "Live: stop after this long (e.g. 30, 30s, 1500ms).")
  var duration: Seconds?
  @Flag(help: "Print JSON Lines instead of text.")
  var json = false
  @Option(
    parsing: .unconditional,
    help: "Decode only this channel (1 = first); default: the mix of all channels.")
  var channel: Int?
  @OptionGroup(title: "Decisions") var decisions: ToneReportOptions
  @OptionGroup(title: "Monitoring station (live)") var station: StationOptions

  func validate() throws {
    _ = try TonePlanList.parse(plan)
    try devices.validate(input: input, raw: raw)
    if input != nil && station.http != nil {
      throw ValidationError("--http serves a live job; leave out --input to decode the device")
    }
    if let channel, !(1...64).contains(channel) {
      throw ValidationError("--channel counts from 1 to 64; use --channel 1 for the first channel")
    }
    try duration?.require("--duration", atLeast: 0.001)
  }

  func run() throws {
    let plans = try TonePlanList.parse(plan)
    guard let input else {
      let tones = ToneReporting(plans: plans, decisions: decisions, printsSummary: true)
      var settings = LiveSettings()
      // The station shows levels too; without it the decoder runs alone.
      settings.meter = station.http == nil ? nil : MeterSettings()
      settings.analysisChannel = try ChannelChoice.index(channel, capturing: devices.channels)
      let deviceGiven = devices.device != nil || devices.capture != nil
      do {
        try LiveRunner.run(
          configuration: devices.configuration(.capture), settings: settings,
          record: nil, duration: duration?.value, json: json, showsMeter: false,
          acceptsKeys: false, tones: tones, recovery: devices.recovery, station: station)
      } catch var failure as CommandFailure where !deviceGiven {
        failure.message += "; or decode a file with --input FILE"
        throw failure
      }
      return
    }
    let reader = try devices.openInput(input, raw: raw)
    let fileChannel = try ChannelChoice.index(
      channel, in: input, channelCount: reader.channelCount)
    let decoder: ToneDecoder
    do {
      decoder = try ToneDecoder(
        plans: plans, sampleRate: reader.sampleRate, settings: decisions.settings)
    } catch {
      throw CommandFailure(message: "\(input): " + error.commandLineMessage(isFile: true))
    }
    let reporting = ToneReporting(plans: plans, decisions: decisions, printsSummary: true)
    let tally = reporting.makeTally()
    func report(_ event: ToneDecoderEvent) {
      // Each event reaches the output when it is decoded (a pipe or a
      // file watched with tail -f sees it at once; a stop loses nothing).
      StandardOutput.write(
        json ? ToneEventFormat.json(event) : ToneEventFormat.text(event), flush: true)
      reporting.reported(event)
    }
    let outcome: FileToneDecoder.Outcome
    do {
      outcome = try FileToneDecoder.run(
        reader, decoder: decoder, channel: fileChannel,
        shouldStop: { interruptRequested.load(ordering: .relaxed) }
      ) { event in
        tally.admit(event) { report($0) }
      }
    } catch {
      throw CommandFailure(error)
    }
    tally.finish { report($0) }
    StandardOutput.write(
      json
        ? ToneEventFormat.jsonSummary(
          duration: outcome.duration, tones: tally.toneCount, sequences: tally.sequenceCount)
        : ToneReporting.summaryLine(tally, duration: outcome.duration))
    StandardOutput.flush()
    reporting.waitForCommands()
    try CommandFailure.checkDamage(
      of: input, problem: outcome.problem, invalidSamples: outcome.invalidSamples,
      treatment:
        "NaN, infinite or impossibly loud (beyond +60 dBFS) samples were decoded as silence")
  }
}
