import AudioFiles
import Foundation
import MicLoopCLI
import TestSupport
import Testing

/// What a hostile or careless user does: absurd numbers, closed or full
/// outputs, readers that leave, pipes given as paths, damaged files. Each
/// gets one line and a non-zero exit; nothing crashes, hangs or loses data.
@Suite struct HostileUseTests {
  let directory: URL
  let tone: String

  init() throws {
    directory = try MicLoopBinary.temporaryDirectory()
    tone = directory.appendingPathComponent("tone.wav").path
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
  let directory: URL

  init() throws { directory = try MicLoopBinary.temporaryDirectory() }

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
}
