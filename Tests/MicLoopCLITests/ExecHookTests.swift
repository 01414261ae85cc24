import Foundation
import TestSupport
import Testing

/// `micloop tones --exec`: a command per decoded event, which never holds
/// up decoding and whose failures are reported, not fatal.
@Suite struct ExecHookTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// Two CCIR calls, 12345 and 67890, one second apart.
  func twoCalls() throws -> String {
    let first = file("first.wav")
    let second = file("second.wav")
    let padded = file("first-padded.wav")
    let both = file("both.wav")
    #expect(try MicLoopBinary.run(["send", "--plan", "ccir", "12345", "-o", first]).status == 0)
    #expect(try MicLoopBinary.run(["send", "--plan", "ccir", "67890", "-o", second]).status == 0)
    try MicLoopBinary.shell(["sox", "-V1", first, padded, "pad", "0", "1"])
    try MicLoopBinary.shell(["sox", "-V1", padded, second, both])
    return both
  }

  @Test func eachCallRunsTheCommandWithItsVariablesAndItsJSONLine() throws {
    let log = file("log.txt")
    let lines = file("lines.jsonl")
    let result = try MicLoopBinary.run([
      "tones", "--plan", "ccir", "--input", try twoCalls(), "--json", "--exec",
      // Each tone of a call is an event too; these lines keep the calls.
      "[ \"$MICLOOP_EVENT\" = sequence ] || exit 0; echo \"$MICLOOP_EVENT $MICLOOP_PLAN $MICLOOP_TEXT\" >> \(log); cat >> \(lines)",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let logged = try String(contentsOfFile: log, encoding: .utf8)
      .split(separator: "\n").sorted()
    #expect(logged == ["sequence ccir-1 12345", "sequence ccir-1 67890"], "\(logged)")
    // The command read the same JSON line micloop printed.
    let printed = result.output.split(separator: "\n").filter { $0.contains("\"sequence\"") }
    let received = try String(contentsOfFile: lines, encoding: .utf8).split(separator: "\n")
    #expect(Set(received) == Set(printed) && printed.count == 2, "\(received) vs \(printed)")
  }

  @Test func aSlowCommandDoesNotHoldUpTheNextCall() throws {
    let starts = file("starts.txt")
    let result = try MicLoopBinary.run([
      "tones", "--plan", "ccir", "--input", try twoCalls(), "--exec",
      "[ \"$MICLOOP_EVENT\" = sequence ] || exit 0; date +%s.%N >> \(starts); sleep 5",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let times = try String(contentsOfFile: starts, encoding: .utf8)
      .split(separator: "\n").compactMap { Double($0) }
    #expect(times.count == 2)
    // Both commands started before the first one's sleep was over.
    if times.count == 2 { #expect(abs(times[1] - times[0]) < 2.5, "\(times)") }
    // micloop waited for them before exiting, and said so.
    #expect(result.errorOutput.contains("waiting for"), "\(result.errorOutput)")
  }

  @Test func aFailingCommandIsReportedNotFatal() throws {
    let result = try MicLoopBinary.run([
      "tones", "--plan", "ccir", "--input", try twoCalls(), "--exec",
      "[ \"$MICLOOP_EVENT\" = sequence ] || exit 0; exit 3",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("CALL \"12345\"") && result.output.contains("CALL \"67890\""))
    #expect(
      result.errorOutput.contains("--exec: the command for the ccir-1 call \"12345\"")
        && result.errorOutput.contains("exited with status 3"), "\(result.errorOutput)")
  }

  @Test func anEmptyCommandIsRefused() throws {
    let result = try MicLoopBinary.run([
      "tones", "--plan", "dtmf", "--input", "x.wav", "--exec", " ",
    ])
    #expect(result.status != 0)
    #expect(result.errorOutput.contains("--exec needs a command"), "\(result.errorOutput)")
  }

  /// Five ZVEI calls in a row, half a second apart.
  func fiveCalls() throws -> String {
    var parts = [String]()
    for call in ["12345", "23456", "34567", "45678", "56789"] {
      let sent = file("call-\(call).wav")
      let padded = file("padded-\(call).wav")
      #expect(try MicLoopBinary.run(["send", "--plan", "zvei1", call, "-o", sent]).status == 0)
      try MicLoopBinary.shell(["sox", "-V1", sent, padded, "pad", "0", "0.5"])
      parts.append(padded)
    }
    let all = file("five.wav")
    try MicLoopBinary.shell(["sox", "-V1"] + parts + [all])
    return all
  }

  @Test func callsWaitForAFreeSlotInsteadOfBeingDropped() throws {
    // Every tone takes a slot too: with a slow command the slots fill
    // before the later calls come.
    let log = file("calls.txt")
    let result = try MicLoopBinary.run([
      "tones", "--plan", "zvei1", "--input", try fiveCalls(), "--exec",
      "sleep 0.2; [ \"$MICLOOP_EVENT\" = sequence ] && echo \"$MICLOOP_TEXT\" >> \(log); exit 0",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").sorted()
    #expect(calls == ["12345", "23456", "34567", "45678", "56789"], "\(result.errorOutput)")
  }

  @Test func aCommandThatNeverEndsIsStoppedByAStopRequest() throws {
    let started = Date()
    let result = try MicLoopBinary.script(
      """
      $M tones --plan zvei1 --input '\(try fiveCalls())' --exec 'sleep 100000' > /dev/null &
      pid=$!
      sleep 1.5
      kill -INT $pid
      wait $pid
      echo "status $?"
      pgrep -x sleep -a | grep -q 100000 && echo "still running"
      exit 0
      """, directory: directory)
    #expect(result.output.contains("status 0"), "\(result.output) \(result.errorOutput)")
    #expect(!result.output.contains("still running"))
    #expect(Date().timeIntervalSince(started) < 6)
  }

  @Test func aCommandInheritsNoDescriptorButTheStandardThree() throws {
    let listing = file("descriptors.txt")
    let result = try MicLoopBinary.run([
      "tones", "--plan", "ccir", "--input", try twoCalls(), "--exec",
      "[ \"$MICLOOP_EVENT\" = sequence ] || exit 0; ls -l /proc/$$/fd/ > \(listing)",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let listed = try String(contentsOfFile: listing, encoding: .utf8)
    // The shell's own three, and the listing it writes: not the input file.
    #expect(listed.contains("pipe:") && !listed.contains("both.wav"), "\(listed)")
  }
}
