import ArgumentParser
import AudioFiles

/// The root command: only configuration; each job is a subcommand.
struct MicLoop: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "micloop",
    abstract: "Live microphone monitoring, level metering and tone signalling on ALSA.",
    version: "0.1.0",
    subcommands: [
      Meter.self, Loopback.self, Tones.self, Record.self, Tone.self, Send.self, Plot.self,
      Devices.self,
      Latency.self,
    ])
}

/// A failure to report as one line on standard error with an exit status.
struct CommandFailure: Error {
  var message: String
  /// 1: the job failed (device, file); 65: the input data is damaged.
  var status: Int32 = 1
}

extension CommandFailure {
  /// A job that failed after saying why on standard error as it happened:
  /// status 1, no further line.
  static let alreadyReported = CommandFailure(message: "", status: 1)

  /// An audio file problem: status 65 when the data is at fault. A job
  /// that reads headerless PCM (`readsRaw`) says how to, for input that
  /// is not audio it knows.
  init(_ error: AudioFileError, readsRaw: Bool = false) {
    if case .stoppedBeforeAudio = error {
      // Ctrl-C before the stream said anything: a clean stop, nothing to report.
      self.init(message: "", status: 0)
      return
    }
    var message = error.description
    if readsRaw, case .notAudio = error {
      message += "; for headerless PCM give its layout: --raw --rate HZ"
    }
    self.init(message: message, status: error.isDataError ? 65 : 1)
  }

  /// The end of a job on a file whose results were given: the problem
  /// found reading it, else `invalidSamples` that were not sound
  /// (`treatment` says what became of them), each as status 65 — one
  /// rule for every command.
  static func checkDamage(
    of input: String, problem: AudioFileError?, invalidSamples: Int, treatment: String
  ) throws(CommandFailure) {
    if let problem { throw CommandFailure(message: problem.description, status: 65) }
    if invalidSamples > 0 {
      throw CommandFailure(
        message:
          "\(input): \(invalidSamples) \(treatment); the file is damaged, re-export it",
        status: 65)
    }
  }
}
