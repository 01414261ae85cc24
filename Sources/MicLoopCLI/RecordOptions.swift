import ArgumentParser
import AudioFiles
import Recording

/// A size on the command line: bytes, or with K, M, G or T (powers of
/// 1024; a trailing B or iB is allowed): "30M", "2G", "500KiB".
struct ByteCount: ExpressibleByArgument, Sendable {
  var value: Int64

  init?(argument: String) {
    var text = Substring(argument.uppercased())
    if text.hasSuffix("IB") {
      text = text.dropLast(2)
    } else if text.hasSuffix("B") {
      text = text.dropLast()
    }
    var scale: Int64 = 1
    if let unit = text.last, let power = "KMGT".firstIndex(of: unit) {
      scale = Int64(1) << (10 * ("KMGT".distance(from: "KMGT".startIndex, to: power) + 1))
      text = text.dropLast()
    }
    // A negative size parses, so that validation can say what is wrong with it.
    guard let number = Double(text), number.isFinite, abs(number * Double(scale)) < 9e18
    else { return nil }
    value = Int64((number * Double(scale)).rounded())
  }

  var defaultValueDescription: String { "\(value)" }
}

/// `--trigger talk` or `--trigger level:-40`.
struct TriggerChoice: ExpressibleByArgument, Sendable {
  var trigger: RecorderTrigger

  init?(argument: String) {
    let lowered = argument.lowercased()
    if lowered == "talk" {
      trigger = .talk
    } else if lowered.hasPrefix("level:"), let threshold = Double(lowered.dropFirst(6)),
      threshold.isFinite, threshold < 0, threshold >= -150
    {
      trigger = .level(threshold: threshold)
    } else {
      return nil
    }
  }

  var defaultValueDescription: String { trigger.label }
  static var allValueStrings: [String] { ["talk", "level:-40"] }
}

extension RecordingContainer: ExpressibleByArgument {}
extension AudioFileEncoding: ExpressibleByArgument {}
