import ArgumentParser
import AudioFiles

/// The root command: only configuration; each job is a subcommand.
struct MicLoop: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "micloop",
    abstract: "Live microphone monitoring, level metering and tone signalling on ALSA.",
    version: "0.1.0",
    subcommands: [
      Meter.self, Loopback.self, Tones.self, Tone.self, Send.self, Plot.self, Devices.self,
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
  /// An audio file problem: status 65 when the data is at fault.
  init(_ error: AudioFileError) {
    self.init(message: error.description, status: error.isDataError ? 65 : 1)
  }
}
