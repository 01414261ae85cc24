import AudioFiles
import Foundation
import MicLoopCLI
import TestSupport
import Testing

/// What a hostile or careless user does: absurd numbers, closed or full
/// outputs, readers that leave, pipes given as paths, damaged files. Each
/// gets one line and a non-zero exit; nothing crashes, hangs or loses data.
@Suite struct HostileUseTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }
  let tone: String

  init() throws {
    scratch = try ScratchDirectory("cli")
    tone = scratch.url.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-n", "-r", "48000", "-b", "16", tone, "synth", "2", "sine", "1000", "vol", "0.5",
    ])
  }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  func shell(_ script: String) throws -> MicLoopBinary.Result {
    try MicLoopBinary.script(script, directory: directory)
  }

  @Test func absurdNumbersAreRefusedInOneLine() throws {
    let output = file("out.wav")
    let cases: [(arguments: [String], mentions: String)] = [
      (["tone", "-f", "1000", "--duration", "1e20", "--output", output], "--duration"),
      (["meter", "--input", tone, "--interval", "1e308"], "--interval"),
      (["meter", "--input", tone, "--interval", "0"], "--interval"),
      (["meter", "--duration", "0"], "--duration"),
      (["meter", "--duration", "1e20"], "--duration"),
      (["loopback", "--duration", "1e20"], "--duration"),
      (["loopback", "--duration", "inf"], "--duration"),
      (["tones", "--plan", "dtmf", "--duration", "1e20"], "--duration"),
      (["tone", "-f", "1000", "--duration", "-1", "--output", output], "--duration"),
      (["tone", "--rate", "-1", "-f", "1000", "--duration", "1", "--output", output], "--rate"),
      (["tone", "-f", "-1", "--duration", "1", "--output", output], "--frequency"),
      (
        ["tone", "-f", "1000", "--level-db", "-1e308", "--duration", "1", "--output", output],
        "--level-db"
      ),
      (["tones", "--plan", "freq:1e308", "--input", tone], "freq:"),
      (["tones", "--plan", "dtmf", "--input", tone, "--min-level-db", "-1e308"], "--min-level-db"),
      (["meter", "--input", tone, "--attack", "1e300"], "--attack"),
      (["meter", "--input", tone, "--hold", "-3"], "--hold"),
      (["meter", "--input", tone, "--open", "-1e400"], "--open"),
      (["meter", "--input", tone, "--channel", "99999999999"], "--channel"),
      (["meter", "--input", tone, "--channel", "-2"], "--channel"),
      (["send", "--plan", "dtmf", "--tone-ms", "-5", "--output", output, "12"], "--tone-ms"),
      (["loopback", "--periods", "-4"], "--periods"),
      (["loopback", "--gain-db", "1e999"], "--gain-db"),
    ]
    for item in cases {
      let result = try MicLoopBinary.run(item.arguments)
      #expect(result.exitedNormally, "\(item.arguments) crashed")
      #expect(result.status == 64, "\(item.arguments) exited \(result.status)")
      #expect(result.errorLines.count == 1, "\(item.arguments): \(result.errorOutput)")
      #expect(
        result.errorOutput.contains(item.mentions), "\(item.arguments): \(result.errorOutput)")
    }
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test func commandLinesAreCheckedWithoutRunning() {
    #expect(commandLineProblem(["meter", "--input", "x.wav", "--interval", "0.05"]) == nil)
    #expect(commandLineProblem(["tone", "-f", "1000", "--duration", "2"]) == nil)
    let problem = commandLineProblem(["meter", "--interval", "0"])
    #expect(problem?.contains("--interval") == true, "\(problem ?? "nil")")
    #expect(commandLineProblem(["send", "--plan", "dtmf", "--tone-ms", "nan", "1"]) != nil)
  }

  @Test func aClosedStandardOutputIsReportedAndFilesStillWritten() throws {
    let version = try shell(#""$M" --version >&-"#)
    #expect(version.exitedNormally && version.status == 1)
    #expect(version.errorLines.count == 1 && version.errorOutput.contains("closed"))
    // The file is the job: it is written in full before the error.
    let sent = file("sent.wav")
    let send = try shell("\"$M\" send --plan dtmf --output '\(sent)' 1234 >&-")
    #expect(send.exitedNormally && send.status == 1, "\(send.errorOutput)")
    let reader = try AudioFileReader(path: sent)
    #expect(reader.declaredFrameCount ?? 0 > 48_000 / 4)
    // With standard error closed too, the failure is the exit status alone.
    let missing = try shell(#""$M" meter --input "$DIR/none.wav" 2>&-"#)
    #expect(missing.exitedNormally && missing.status == 1)
  }

  @Test func aFullDiskOnStandardOutputFailsTheJob() throws {
    for command in [
      "\"$M\" meter --input '\(tone)' > /dev/full",
      "\"$M\" meter --input '\(tone)' --json > /dev/full",
      "\"$M\" tones --plan dtmf --input '\(tone)' > /dev/full",
    ] {
      let result = try shell(command)
      #expect(result.exitedNormally && result.status == 1, "\(command): \(result.status)")
      #expect(
        result.errorLines.count == 1 && result.errorOutput.contains("No space left"),
        "\(command): \(result.errorOutput)")
    }
  }

  @Test func aReaderThatLeavesEndsAnEndlessJob() throws {
    // An endless WAV stream on standard input: only the reader leaving can end it.
    let result = try shell(
      #"sox -n -r 48000 -c 1 -b 16 -t wav - synth 1000000 sine 440 2>/dev/null | (timeout 60 "$M" meter --input - --json; echo $? > "$DIR/status") | head -1"#
    )
    #expect(result.output.hasPrefix(#"{"event":"level""#), "\(result.output)")
    let status = try String(contentsOfFile: file("status"), encoding: .utf8)
    // 141: ended as a process whose pipe closed; 124 would be the timeout.
    #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "141", "\(status)")
  }

  @Test func pipesAndFIFOsGivenAsPathsAreRead() throws {
    let flac = file("tone.flac")
    try MicLoopBinary.shell(["sox", tone, flac])
    for script in [
      "\"$M\" meter --input - --json < '\(flac)'",
      "cat '\(flac)' | \"$M\" meter --input - --json",
      "cat '\(tone)' | \"$M\" meter --input /dev/stdin --json",
      "cat '\(flac)' | \"$M\" meter --input /dev/stdin --json",
      "rm -f \"$DIR/fifo\"; mkfifo \"$DIR/fifo\"; cat '\(flac)' > \"$DIR/fifo\" & \"$M\" meter --input \"$DIR/fifo\" --json",
    ] {
      let result = try shell(script)
      #expect(result.status == 0, "\(script): \(result.errorOutput)")
      let summary = result.output.split(separator: "\n").last.map(String.init) ?? ""
      #expect(summary.contains(#""duration":2.000"#), "\(script): \(summary)")
      #expect(summary.contains(#""peak_dbfs":-6.02"#), "\(script): \(summary)")
    }
  }

  /// sox and ffmpeg writing a WAV to a pipe cannot go back to fill in its
  /// length, and leave about the largest a WAV can hold in its header: the
  /// stream is read to its end, whole, in every command. A WAV cut short on
  /// its way through a pipe still says so.
  @Test func aWAVStreamedFromAPipeIsWholeAtItsEnd() throws {
    let sox = #"sox -V1 -n -r 16000 -c 1 -b 16 -t wav - synth 2 sine 440 vol 0.5"#
    let ffmpeg = #"ffmpeg -v error -f lavfi -i sine=frequency=440:duration=2 -f wav -"#
    for script in [
      "\(sox) | \"$M\" meter --input - --json",
      "\(ffmpeg) | \"$M\" meter --input - --json",
      "\(sox) | \"$M\" tones --plan dtmf --input - --json",
      "\(sox) | \"$M\" plot --input - --output \"$DIR/piped.png\"",
    ] {
      let result = try shell(script)
      #expect(result.exitedNormally && result.status == 0, "\(script): \(result.errorOutput)")
      #expect(!result.errorOutput.contains("truncated"), "\(script): \(result.errorOutput)")
      let summary = result.output.split(separator: "\n").last.map(String.init) ?? ""
      #expect(
        summary.contains(#""duration":2.000"#) || summary.contains("2.00 s"),
        "\(script): \(summary)")
    }
    let cut = try shell("head -c 40000 '\(tone)' | \"$M\" meter --input - --json")
    #expect(cut.exitedNormally && cut.status == 65, "\(cut.errorOutput)")
    #expect(cut.errorOutput.contains("truncated"), "\(cut.errorOutput)")
  }

  @Test func aDamagedFileGivesItsResultsAndTheSameErrorInEveryCommand() throws {
    let flac = file("whole.flac")
    try MicLoopBinary.shell(["sox", tone, flac])
    let whole = try Data(contentsOf: URL(fileURLWithPath: flac))
    let cut = file("cut.flac")
    try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
    let meter = try MicLoopBinary.run(["meter", "--input", cut, "--json"])
    let tones = try MicLoopBinary.run(["tones", "--plan", "dtmf", "--input", cut])
    for result in [meter, tones] {
      #expect(result.exitedNormally && result.status == 65, "\(result.errorOutput)")
      #expect(result.errorLines.count == 1, "\(result.errorOutput)")
      #expect(result.errorOutput.contains("the results cover"), "\(result.errorOutput)")
    }
    // The part before the damage was metered.
    let summary = meter.output.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary.contains(#""event":"summary""#) && summary.contains(#""peak_dbfs":-6.02"#))
  }

  @Test func aDeviceWithoutAClockIsPacedToRealTime() throws {
    // ALSA's null device takes and gives samples at once; a job on it must
    // still last as long as the audio it claims.
    let started = Date()
    let result = try MicLoopBinary.run(["loopback", "-D", "null", "--duration", "1.5"])
    let elapsed = Date().timeIntervalSince(started)
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("Ran 1.5"), "\(result.output)")
    #expect(elapsed >= 1.0, "ran \(elapsed) s for 1.5 s of audio")
  }

  @Test func controlCharactersInNamesStayOnOneLine() throws {
    let result = try MicLoopBinary.run(["meter", "--input", file("two\nlines.wav")])
    #expect(result.status == 1 && result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains(#"two\nlines.wav"#))
  }

  @Test func aWAVBeyondFourGibibytesKeepsItsLength() throws {
    // 1450 s of 8 channels at 192 kHz in 16 bits: 4.45 GB, past the 32-bit size field.
    let big = file("big.wav")
    defer { try? FileManager.default.removeItem(atPath: big) }
    let result = try MicLoopBinary.run([
      "tone", "-f", "1000", "--duration", "1450", "--rate", "192000", "--channels", "8",
      "--output", big,
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let reader = try AudioFileReader(path: big)
    #expect(reader.declaredFrameCount.map { Int($0) } == 278_400_000)
    #expect(reader.channelCount == 8)
  }
}

/// Sample rates far from audio's: an SDR's megahertz files and headers
/// that claim absurd rates.
@Suite struct ExtremeRateTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  @Test func keysAtAnSDRsRateAreDecodedByEveryPlanWithoutHarm() throws {
    let keys = file("keys.wav")
    let sdr = file("sdr.wav")
    let sent = try MicLoopBinary.run(["send", "--plan", "dtmf", "159#", "--output", keys])
    #expect(sent.status == 0, "\(sent.errorOutput)")
    try MicLoopBinary.shell(["sox", keys, "-r", "2048000", sdr])
    let dtmf = try MicLoopBinary.run(["tones", "--plan", "dtmf", "--input", sdr, "--json"])
    #expect(dtmf.exitedNormally && dtmf.status == 0, "\(dtmf.errorOutput)")
    let symbols = dtmf.output.split(separator: "\n").compactMap { line -> String? in
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["event"] as? String == "tone" ? object?["symbol"] as? String : nil
    }
    #expect(symbols.joined() == "159#", "\(dtmf.output)")
    for plan in ["ccir", "zvei1", "ctcss", "handshake", "siren", "twotone:1000,1200"] {
      let result = try MicLoopBinary.run(["tones", "--plan", plan, "--input", sdr])
      #expect(result.exitedNormally && result.status == 0, "\(plan): \(result.errorOutput)")
    }
  }

  @Test func ratesAboveTheDecodersAreRefusedInOneLine() throws {
    let path = file("twenty-megahertz.wav")
    try TestFiles.writeWAVHeaderClaiming(rate: 20_000_000, samples: 4_000, to: path)
    let result = try MicLoopBinary.run(["tones", "--plan", "dtmf", "--input", path])
    #expect(result.exitedNormally && result.status != 0, "\(result.output)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("10000000 Hz"), "\(result.errorOutput)")
  }

  /// Below telephone rate BS.1770 loudness is not defined (the weighting
  /// runs away): meter and plot refuse --loudness in one line; the level
  /// meter alone still reads the file.
  @Test func loudnessBelowTelephoneRateIsRefusedInOneLine() throws {
    let path = file("four-kilohertz.wav")
    try MicLoopBinary.shell(["sox", "-n", "-r", "4000", path, "synth", "2", "sine", "440"])
    for command in [["meter"], ["plot", "--output", file("low.png")]] {
      let result = try MicLoopBinary.run(command + ["--input", path, "--loudness"])
      #expect(result.exitedNormally && result.status != 0, "\(command): \(result.output)")
      #expect(result.errorLines.count == 1, "\(command): \(result.errorOutput)")
      #expect(result.errorOutput.contains("8000 Hz"), "\(result.errorOutput)")
    }
    let levels = try MicLoopBinary.run(["meter", "--input", path])
    #expect(levels.status == 0, "\(levels.errorOutput)")
  }
}

/// Inputs that are not what they seem: endless devices, live streams,
/// containers that must be whole, interrupted and damaged files, MPEG in a
/// WAV. Each command gives what it could read and one line.
@Suite struct HostileInputFileTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }
  let tone: String

  init() throws {
    scratch = try ScratchDirectory("cli")
    tone = scratch.url.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-n", "-r", "48000", "-b", "16", tone, "synth", "2", "sine", "1000", "vol", "0.5",
    ])
  }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  func shell(_ script: String) throws -> MicLoopBinary.Result {
    try MicLoopBinary.script(script, directory: directory)
  }

  func converted(_ name: String) throws -> String {
    try MicLoopBinary.shell(["sox", tone, file(name)])
    return file(name)
  }

  @Test func zerosWithoutAHeaderAreRefusedAtOnceInOneLine() throws {
    // `timeout` bounds what used to copy standard input to /tmp for ever.
    for command in [
      "timeout 20 \"$M\" meter --input - < /dev/zero",
      "timeout 20 \"$M\" tones --plan dtmf --input - < /dev/zero",
      "timeout 20 \"$M\" meter --input /dev/zero",
      "timeout 20 \"$M\" plot --input - --output \"$DIR/zeros.png\" < /dev/zero",
    ] {
      let result = try shell(command)
      #expect(result.status == 65, "\(command): \(result.status) \(result.errorOutput)")
      #expect(result.errorLines.count == 1, "\(command): \(result.errorOutput)")
      #expect(result.errorOutput.contains("not an audio file"), "\(command): \(result.errorOutput)")
      if !command.contains("plot") {
        #expect(result.errorOutput.contains("--raw --rate"), "\(command): \(result.errorOutput)")
      }
    }
  }

  @Test func endlessHeaderlessZerosStream() throws {
    for command in [
      "\"$M\" meter --input - --raw --rate 8000 --json < /dev/zero | head -1",
      "\"$M\" meter --input /dev/zero --raw --rate 8000 --json | head -1",
    ] {
      let result = try shell(command)
      #expect(
        result.output.hasPrefix(#"{"event":"level","time":0.100"#), "\(command): \(result.output)")
      #expect(!result.errorOutput.contains("empty"), "\(command): \(result.errorOutput)")
    }
  }

  /// A live stream (a radio's encoder, a recorder's pipe) is decoded as it
  /// arrives: the first reading comes while the writer still holds the
  /// pipe open.
  @Test(arguments: ["flac", "ogg"])
  func aLiveStreamIsDecodedBeforeItEnds(_ format: String) throws {
    let path = try converted("live.\(format)")
    let result = try shell(
      "(cat '\(path)'; sleep 3; touch \"$DIR/closed-\(format)\") | \"$M\" meter --input - --json | (head -1; test -e \"$DIR/closed-\(format)\" && echo late || echo early)"
    )
    let lines = result.output.split(separator: "\n")
    #expect(lines.first?.hasPrefix(#"{"event":"level""#) == true, "\(result.output)")
    #expect(lines.last == "early", "\(result.output)")
  }

  @Test func aContainerThatMustBeWholeIsHeldInTMPDIR() throws {
    let aiff = try converted("tone.aiff")
    let held = try shell(
      "mkdir -p \"$DIR/held\"; cat '\(aiff)' | TMPDIR=\"$DIR/held\" \"$M\" meter --input - --json | tail -1"
    )
    #expect(held.status == 0 && held.output.contains(#""duration":2.000"#), "\(held.output)")
    // Nothing is left behind in it.
    let left = try FileManager.default.contentsOfDirectory(atPath: file("held"))
    #expect(left.isEmpty, "\(left)")
    let refused = try shell(
      "cat '\(aiff)' 2>/dev/null | TMPDIR=\"$DIR/missing\" \"$M\" meter --input -")
    #expect(refused.status == 1, "\(refused.errorOutput)")
    #expect(refused.errorLines.count == 1, "\(refused.errorOutput)")
    #expect(refused.errorOutput.contains(file("missing")), "\(refused.errorOutput)")
    #expect(refused.errorOutput.contains("TMPDIR"), "\(refused.errorOutput)")
  }

  /// A FLAC whose writer was killed has 0 ("unknown") as its length: every
  /// command reads it whole, as sox does.
  @Test func anInterruptedFLACIsReadWhole() throws {
    let cut = file("killed.flac")
    _ = try shell(
      "\"$M\" tone -f 1000 --duration 3600 --output '\(cut)' & sleep 0.3; kill -KILL $!; wait")
    let sox = try shell("sox '\(cut)' -n stat 2>&1 | grep 'Samples read'")
    let samples = Double(sox.output.split(whereSeparator: \.isWhitespace).last ?? "") ?? 0
    #expect(samples > 4_800, "\(sox.output)")
    let meter = try MicLoopBinary.run(["meter", "--input", cut, "--json"])
    #expect(meter.status == 0 && meter.errorOutput.isEmpty, "\(meter.errorOutput)")
    let duration = meter.lastJSONObject?["duration"] as? Double ?? 0
    #expect(abs(duration - samples / 48_000) < 0.001, "\(duration) s, sox \(samples) samples")
    for arguments in [
      ["tones", "--plan", "dtmf", "--input", cut], ["plot", "--input", cut, "-o", file("k.png")],
    ] {
      let result = try MicLoopBinary.run(arguments)
      #expect(
        result.status == 0 && result.errorOutput.isEmpty, "\(arguments): \(result.errorOutput)")
    }
  }

  @Test func mpegInAWAVGetsMicloopsLineAlone() throws {
    let path = file("mpeg.wav")
    try TestFiles.wavClaimingMPEG().write(to: URL(fileURLWithPath: path))
    for command in [
      "\"$M\" meter --input '\(path)'", "\"$M\" tones --plan dtmf --input '\(path)'",
      "\"$M\" plot --input '\(path)' -o \"$DIR/mpeg.png\"", "\"$M\" meter --input - < '\(path)'",
      "cat '\(path)' 2>/dev/null | \"$M\" meter --input -",
    ] {
      let result = try shell(command)
      #expect(result.status == 65, "\(command): \(result.status)")
      #expect(result.errorLines.count == 1, "\(command): \(result.errorOutput)")
      #expect(result.errorOutput.hasPrefix("micloop: error:"), "\(command): \(result.errorOutput)")
      #expect(result.errorOutput.contains("0x55"), "\(command): \(result.errorOutput)")
    }
  }

  /// meter, tones and plot on the same cut file: each gives its results
  /// (plot draws), then the same line, status 65.
  @Test func everyCommandSaysTheSameOfACutFile() throws {
    let flac = try converted("whole.flac")
    var cuts = [String]()
    for (source, fractions) in [(tone, [0.3, 0.52, 0.9]), (flac, [0.11, 0.27, 0.5, 0.78])] {
      let whole = try Data(contentsOf: URL(fileURLWithPath: source))
      for fraction in fractions {
        let cut = file("cut-\(fraction)-" + (source.split(separator: "/").last ?? ""))
        try whole.prefix(Int(Double(whole.count) * fraction)).write(to: URL(fileURLWithPath: cut))
        cuts.append(cut)
      }
    }
    for cut in cuts {
      let picture = cut + ".png"
      let results = [
        try MicLoopBinary.run(["meter", "--input", cut, "--json"]),
        try MicLoopBinary.run(["tones", "--plan", "dtmf", "--input", cut, "--json"]),
        try MicLoopBinary.run(["plot", "--input", cut, "--output", picture, "--json"]),
      ]
      for result in results {
        #expect(result.exitedNormally && result.status == 65, "\(cut): \(result.status)")
        #expect(result.errorLines.count == 1, "\(cut): \(result.errorOutput)")
        #expect(result.errorOutput.contains("the results cover"), "\(cut): \(result.errorOutput)")
        // The results came first.
        #expect(result.lastJSONObject != nil, "\(cut): \(result.output)")
      }
      #expect(Set(results.map(\.errorOutput)).count == 1, "\(cut): \(results.map(\.errorOutput))")
      #expect(FileManager.default.fileExists(atPath: picture))
    }
  }
}

/// `plot` on absurd data and into outputs that fail.
@Suite struct HostilePlotTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }
  let tone: String

  init() throws {
    scratch = try ScratchDirectory("cli")
    tone = scratch.url.appendingPathComponent("tone.wav").path
    try MicLoopBinary.shell([
      "sox", "-n", "-r", "48000", "-b", "16", tone, "synth", "1", "sine", "1000", "vol", "0.5",
    ])
  }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  func shell(_ script: String) throws -> MicLoopBinary.Result {
    try MicLoopBinary.script(script, directory: directory)
  }

  /// Samples of 1e23 and more overflow the spectrum to infinity; the plot
  /// is still drawn (`timeout` bounds what used to spin for ever).
  @Test(arguments: [(1e23, 1), (1e38, 50), (Double(Float.greatestFiniteMagnitude), 1)])
  func absurdSamplesAreDrawn(_ value: Double, _ count: Int) throws {
    var samples = (0..<48_000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    for index in 0..<count { samples[1_000 + index * 900] = Float(value) }
    let path = file("absurd-\(count).wav")
    let writer = try AudioFileWriter(
      path: path, sampleRate: 48_000, channelCount: 1, encoding: .float)
    try writer.write(samples)
    writer.close()
    let picture = file("absurd-\(count).png")
    let result = try shell("timeout 30 \"$M\" plot --input '\(path)' --output '\(picture)'")
    #expect(result.status == 0 || result.status == 65, "\(result.status): \(result.errorOutput)")
    #expect(result.errorLines.count <= 1, "\(result.errorOutput)")
    #expect(FileManager.default.fileExists(atPath: picture))
  }

  /// Float samples beyond +60 dBFS are damaged data, like NaN: the meter
  /// reads the tone around them and says so in one line (status 65), and
  /// so does the tone decoder;
  /// subnormal samples are silence, with neither peak nor RMS.
  @Test func damagedAndSubnormalSamplesAreNotMeteredAsSound() throws {
    var samples = (0..<48_000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    samples[1_000] = 3.4e38
    samples[2_000] = 1e38
    let damaged = file("damaged.wav")
    let subnormal = file("subnormal.wav")
    for (path, content) in [
      (damaged, samples),
      (subnormal, (0..<48_000).map { Float.leastNonzeroMagnitude * Float($0 % 3) }),
    ] {
      let writer = try AudioFileWriter(
        path: path, sampleRate: 48_000, channelCount: 1, encoding: .float)
      try writer.write(content)
      writer.close()
    }
    let loud = try MicLoopBinary.run(["meter", "--input", damaged, "--json"])
    #expect(loud.status == 65 && loud.errorLines.count == 1, "\(loud.errorOutput)")
    #expect(loud.errorOutput.contains("2 NaN, infinite or impossibly loud"), "\(loud.errorOutput)")
    let summary = loud.lastJSONObject
    #expect(abs(((summary?["peak_dbfs"] as? Double) ?? 99) - -6.02) < 0.1, "\(loud.output)")
    // The tone decoder takes the same samples for damage, not for a tone.
    let decoded = try MicLoopBinary.run([
      "tones", "--plan", "freq:1000", "--input", damaged, "--json",
    ])
    #expect(decoded.status == 65 && decoded.errorLines.count == 1, "\(decoded.errorOutput)")
    #expect(
      decoded.errorOutput.contains("2 NaN, infinite or impossibly loud"), "\(decoded.errorOutput)")
    let quiet = try MicLoopBinary.run(["meter", "--input", subnormal, "--json"])
    #expect(quiet.status == 0, "\(quiet.errorOutput)")
    #expect(
      quiet.lastJSONObject?["peak_dbfs"] is NSNull && quiet.lastJSONObject?["rms_dbfs"] is NSNull,
      "\(quiet.output)")
  }

  /// Every failure to write names its reason and fix in one line, and
  /// leaves no file, partial or temporary, behind.
  @Test func writeFailuresNameTheReasonAndLeaveNothing() throws {
    let full = file("full.png")
    try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")
    var cases: [(script: String, reason: String)] = [
      ("\"$M\" plot --input '\(tone)' --output \"$DIR/missing/p.png\"", "does not exist"),
      ("\"$M\" plot --input '\(tone)' --output '\(full)'", "No space left"),
    ]
    for format in ["png", "svg", "pdf"] {
      // A file size limit fails the writes part-way, as a full disk does.
      cases.append(
        (
          "mkdir -p \"$DIR/small\"; trap '' XFSZ; ulimit -f 16; \"$M\" plot --input '\(tone)' --output \"$DIR/small/p.\(format)\"",
          "File too large"
        ))
    }
    for item in cases {
      let result = try shell(item.script)
      #expect(result.status == 1, "\(item.script): \(result.status)")
      #expect(result.errorLines.count == 1, "\(item.script): \(result.errorOutput)")
      #expect(result.errorOutput.contains(item.reason), "\(item.script): \(result.errorOutput)")
      #expect(!result.errorOutput.contains("output stream"), "\(result.errorOutput)")
    }
    let left = try FileManager.default.contentsOfDirectory(atPath: file("small"))
    #expect(left.isEmpty, "\(left)")
    // The symbolic link still points at the device.
    let link = try FileManager.default.destinationOfSymbolicLink(atPath: full)
    #expect(link == "/dev/full")
  }

  @Test func aPlotReplacesAnOlderOneWhole() throws {
    let picture = file("p.svg")
    try Data("old".utf8).write(to: URL(fileURLWithPath: picture))
    let result = try MicLoopBinary.run(["plot", "--input", tone, "--output", picture])
    #expect(result.status == 0, "\(result.errorOutput)")
    let text = try String(contentsOfFile: picture, encoding: .utf8)
    #expect(text.hasPrefix("<?xml") && text.hasSuffix("</svg>\n"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 2)
  }

  @Test func optionsPlotDoesNotUseAreRefused() throws {
    for option in [["--exec", "true"], ["--repeat-window", "1"]] {
      let result = try MicLoopBinary.run(
        ["plot", "--input", tone, "--output", file("x.png")] + option)
      #expect(result.status == 64, "\(option): \(result.status)")
      #expect(result.errorLines.count == 1, "\(option): \(result.errorOutput)")
    }
    let help = try MicLoopBinary.run(["plot", "--help"])
    #expect(!help.output.contains("--exec") && !help.output.contains("--repeat-window"))
    #expect(help.output.contains("--tolerance"))
  }

  /// A header claiming 2^31 − 1 Hz on 200 kB of audio: memory follows the
  /// audio's length, not the rate (it took 2.4 GB).
  @Test func aClaimedRateDoesNotSizeThePlot() throws {
    let path = file("fast.wav")
    try TestFiles.writeWAVHeaderClaiming(rate: 2_147_483_647, samples: 100_000, to: path)
    let result = try shell(
      "/usr/bin/time -f 'peak %M KB' \"$M\" plot --input '\(path)' --output \"$DIR/fast.png\"")
    #expect(result.status == 0, "\(result.errorOutput)")
    let peak =
      result.errorOutput.split(separator: "\n").last { $0.hasPrefix("peak") }
      .flatMap { Int($0.split(separator: " ")[1]) } ?? .max
    #expect(peak < 300_000, "\(result.errorOutput)")
  }

  /// A path whose bytes are not UTF-8 would reach the file system with
  /// them replaced (another file, or a new one beside it): it is refused in
  /// one line, and nothing is written.
  @Test func anArgumentThatIsNotUTF8IsRefused() throws {
    let result = try shell(
      #"cp "$DIR/tone.wav" "$DIR/$(printf 'caf\351').wav" && "$M" tone -f 1000 --duration 0.1 --output "$DIR/$(printf 'out\351').wav""#
    )
    #expect(result.status == 64, "exited \(result.status): \(result.errorOutput)")
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("not UTF-8"), "\(result.errorOutput)")
    let written = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(!written.contains { $0.hasPrefix("out") }, "\(written)")
  }
}
