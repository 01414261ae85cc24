import Foundation
import TestSupport
import Testing

/// Every job stopped by SIGINT, SIGTERM or SIGHUP, once or twice, keeps
/// what it decoded and wrote before the signal, leaves valid files and
/// exits with status 0.
@Suite struct StopSignalTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// A shell line that writes `seconds` of raw 48 kHz 16-bit mono to
  /// standard output at real-time pace: the keys 123# first, then silence.
  func slowStream(seconds: Int) throws -> String {
    let keys = file("keys.wav")
    #expect(try MicLoopBinary.run(["send", "--plan", "dtmf", "123#", "-o", keys]).status == 0)
    let raw = file("stream.raw")
    try MicLoopBinary.shell([
      "sox", "-V1", keys, "-t", "raw", "-e", "signed", "-b", "16", raw, "pad", "0",
      String(seconds),
    ])
    return
      "for i in $(seq 0 \(seconds * 10)); do dd if='\(raw)' bs=9600 skip=$i count=1 status=none; sleep 0.1; done"
  }

  @Test(arguments: ["INT", "TERM", "HUP"])
  func aStreamDecodedIntoAFileKeepsItsEventsWhenStopped(signal: String) throws {
    let calls = file("calls-\(signal).jsonl")
    let result = try MicLoopBinary.script(
      """
      (\(try slowStream(seconds: 20))) | $M tones --plan dtmf --input - --raw --rate 48000 --json > '\(calls)' &
      pid=$!
      sleep 3
      kill -\(signal) $pid
      wait $pid
      echo "status $?"
      """, directory: directory)
    #expect(result.output.contains("status 0"), "\(result.output) \(result.errorOutput)")
    let lines = try String(contentsOfFile: calls, encoding: .utf8).split(separator: "\n")
    let keys = lines.filter { $0.contains("\"event\":\"tone\"") }.count
    #expect(keys == 4, "\(lines)")
    #expect(lines.last?.contains("\"event\":\"summary\"") == true, "\(lines)")
  }

  @Test func twoStopRequestsTogetherStillWriteEverything() throws {
    // A closed terminal sends SIGHUP twice (the kernel's and the shell's).
    let readings = file("readings.txt")
    let result = try MicLoopBinary.script(
      """
      (\(try slowStream(seconds: 20))) | $M meter --input - --raw --rate 48000 > '\(readings)' &
      pid=$!
      sleep 2
      kill -HUP $pid; kill -HUP $pid
      wait $pid
      echo "status $?"
      """, directory: directory)
    #expect(result.output.contains("status 0"), "\(result.output) \(result.errorOutput)")
    let text = try String(contentsOfFile: readings, encoding: .utf8)
    #expect(text.contains("Duration"), "\(text)")
  }

  @Test func aFileBeingWrittenEndsEarlyAndValidOnCtrlC() throws {
    let tone = file("long.wav")
    let result = try MicLoopBinary.script(
      """
      $M tone -f 1000 --duration 36000 --rate 8000 --output '\(tone)' &
      pid=$!
      sleep 0.3
      kill -INT $pid
      wait $pid
      echo "status $?"
      """, directory: directory)
    #expect(result.output.contains("status 0"), "\(result.output) \(result.errorOutput)")
    let frames = try MicLoopBinary.samples(tone).count
    #expect(frames > 0 && frames < 36000 * 8000, "\(frames) frames")
  }

  @Test func aLiveJobEndsWhenTheReaderOfItsOutputLeaves() throws {
    // `| head -1` takes the start line; nothing is written after it.
    let started = Date()
    let result = try MicLoopBinary.script(
      "$M tones --plan dtmf -D null --json --duration 60 | head -1", directory: directory)
    #expect(result.output.contains("\"event\":\"start\""), "\(result.output)")
    #expect(Date().timeIntervalSince(started) < 10)
  }

  @Test func aStoppedProcessIsAPauseNotALostDevice() throws {
    // Ctrl-Z for longer than the stall limit (8 s), then fg.
    let result = try MicLoopBinary.script(
      """
      $M loopback -D null --duration 11 --json > "$DIR/events.jsonl" &
      pid=$!
      # Stopped once it runs: a stop before its first cycle is no pause.
      for _ in $(seq 300); do grep -q '"level"' "$DIR/events.jsonl" && break; sleep 0.1; done
      kill -STOP $pid
      sleep 9
      kill -CONT $pid
      wait $pid
      echo "status $?"
      """, directory: directory)
    #expect(result.output.contains("status 0"), "\(result.output) \(result.errorOutput)")
    let events = try String(contentsOfFile: file("events.jsonl"), encoding: .utf8)
    #expect(events.contains("\"event\":\"pause\""), "\(events)")
  }

  @Test func aRecordingRefusesAFIFOAndAPathAnotherRunIsWriting() throws {
    let fifo = file("fifo.wav")
    #expect(mkfifo(fifo, 0o600) == 0)
    let refused = try MicLoopBinary.run([
      "loopback", "-D", "null", "--duration", "1", "--record", fifo,
    ])
    #expect(refused.status != 0 && refused.errorLines.count == 1, "\(refused.errorOutput)")
    #expect(refused.errorOutput.contains("FIFO"), "\(refused.errorOutput)")
    let shared = file("shared.wav")
    let result = try MicLoopBinary.script(
      """
      $M loopback -D null --duration 3 --record '\(shared)' > /dev/null &
      first=$!
      sleep 1
      $M loopback -D null --duration 1 --record '\(shared)' > /dev/null
      echo "second $?"
      wait $first
      echo "first $?"
      """, directory: directory)
    #expect(result.output.contains("second 1"), "\(result.output)")
    #expect(result.output.contains("first 0"), "\(result.output)")
    #expect(result.errorOutput.contains("another program is writing"), "\(result.errorOutput)")
    #expect(try MicLoopBinary.samples(shared).count == 3 * 48_000)
  }

  @Test func aStreamThatWaitsForDataStillStops() throws {
    // A squelched receiver's pipe: a WAV that delivers a call, then nothing.
    let keys = file("call.wav")
    #expect(try MicLoopBinary.run(["send", "--plan", "dtmf", "123#", "-o", keys]).status == 0)
    let result = try MicLoopBinary.script(
      """
      (cat '\(keys)'; sleep 30) | $M tones --plan dtmf --input - --json > "$DIR/call.jsonl" &
      pid=$!
      (sleep 30) | $M meter --input - --raw --rate 8000 > /dev/null &
      silent=$!
      sleep 1.5
      kill -TERM $pid $silent
      wait $pid; echo "call $?"
      wait $silent; echo "silent $?"
      """, directory: directory)
    #expect(result.output.contains("call 0"), "\(result.output) \(result.errorOutput)")
    #expect(result.output.contains("silent 0"), "\(result.output) \(result.errorOutput)")
    #expect(result.errorOutput.isEmpty, "\(result.errorOutput)")
    let lines = try String(contentsOfFile: file("call.jsonl"), encoding: .utf8)
    #expect(lines.components(separatedBy: "\"event\":\"tone\"").count - 1 == 4, "\(lines)")
  }
}
