import ArgumentParser
import AudioFiles
import Console
import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Parses the command line, runs the subcommand and turns every failure into
/// one line on standard error with a non-zero exit status. Main thread.
public func runMicLoop() -> Never {
  StandardOutput.guardStandardDescriptors()
  // Tone decoding and plots analyse spectra: the FFT planner gets ready
  // while the command line is read.
  SpectrumAnalyzer.prepareInBackground()
  if let position = firstArgumentNotUTF8() {
    // Swift reads such an argument with its bytes replaced: a path would
    // name another file.
    StandardOutput.writeError(
      "micloop: error: argument \(position) is not UTF-8 text; rename the file or pass it through a symbolic link with a UTF-8 name (see 'micloop help')"
    )
    exit(64)
  }
  var command: ParsableCommand
  do {
    command = try MicLoop.parseAsRoot()
  } catch {
    let code = MicLoop.exitCode(for: error)
    if code == .success {
      // --help, help SUBCOMMAND, --version.
      StandardOutput.write(MicLoop.fullMessage(for: error), flush: true)
      exitAfterOutput(0)
    }
    let message = oneLine(MicLoop.message(for: error))
    StandardOutput.writeError("micloop: error: \(message) (see 'micloop help')")
    exit(code.rawValue)
  }
  // Every job stops cleanly on SIGINT, SIGTERM and SIGHUP: it polls
  // `interruptRequested`, writes what it has and ends with status 0.
  SignalTrap.install()
  // A stream that waits for data (a squelched receiver's silent pipe)
  // still ends on a stop request.
  StreamStop.install { interruptRequested.load(ordering: .relaxed) }
  do {
    try command.run()
    exitAfterOutput(0)
  } catch let failure as CommandFailure where failure.status == 0 {
    exitAfterOutput(0)
  } catch let failure as CommandFailure {
    StandardOutput.flush()
    if !failure.message.isEmpty { StandardOutput.writeError("micloop: error: \(failure.message)") }
    exit(failure.status)
  } catch {
    let code = MicLoop.exitCode(for: error)
    if code == .success {
      StandardOutput.write(MicLoop.fullMessage(for: error), flush: true)
      exitAfterOutput(0)
    }
    StandardOutput.flush()
    StandardOutput.writeError("micloop: error: \(error)")
    exit(code.rawValue == 0 ? 1 : code.rawValue)
  }
}

/// The position (1 for the first after the program) of the first
/// command-line argument whose bytes are not valid UTF-8, if any.
func firstArgumentNotUTF8() -> Int? {
  for index in 1..<Int(CommandLine.argc) {
    guard let argument = CommandLine.unsafeArgv[index] else { continue }
    if String(validatingCString: argument) == nil { return index }
  }
  return nil
}

/// A parser's message in one line: its lines joined, a list of choices
/// ("- 'digital'" lines) as one comma-separated list, so that nothing after
/// the first line is lost.
func oneLine(_ message: String) -> String {
  var line = ""
  var isListing = false
  for part in message.split(whereSeparator: \.isNewline) {
    var text = Substring(part)
    while text.first == " " || text.first == "\t" { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    guard !text.isEmpty else { continue }
    if text.hasPrefix("- ") {
      line += (isListing ? ", " : " ") + text.dropFirst(2)
      isListing = true
    } else {
      line += (line.isEmpty ? "" : isListing ? "; " : " ") + text
      isListing = false
    }
  }
  return line
}

/// Exits with `status` once standard output has taken everything, or
/// reports in one line why it did not: a job whose output was lost has failed.
func exitAfterOutput(_ status: Int32) -> Never {
  StandardOutput.flush()
  if let message = StandardOutput.failureMessage {
    StandardOutput.writeError("micloop: error: \(message)")
    exit(1)
  }
  // The reader went away (`| head`): end as a process killed by SIGPIPE would.
  // All output is flushed and every file closed: end without the C
  // library's exit handlers, which only tear down what the system frees.
  _exit(StandardOutput.readerIsGone ? 128 + SIGPIPE : status)
}

/// Checks a command line as `micloop` would before running it: parsing and
/// every option's validation, nothing opened or run. Returns the one-line
/// error micloop would print, or `nil` when it would run. Any thread.
public func commandLineProblem(_ arguments: [String]) -> String? {
  do {
    _ = try MicLoop.parseAsRoot(arguments)
    return nil
  } catch {
    if MicLoop.exitCode(for: error) == .success { return nil }
    return oneLine(MicLoop.message(for: error))
  }
}
