import ArgumentParser

/// A duration on the command line: seconds ("0.5", "0.5s") or milliseconds ("10ms").
struct Seconds: ExpressibleByArgument, Sendable {
  var value: Double

  init(_ value: Double) { self.value = value }

  init?(argument: String) {
    let text = argument.lowercased()
    let parsed: Double?
    if text.hasSuffix("ms") {
      parsed = Double(text.dropLast(2)).map { $0 / 1000 }
    } else if text.hasSuffix("s") {
      parsed = Double(text.dropLast())
    } else {
      parsed = Double(text)
    }
    // Ranges are the commands' to check, so they can say what fits.
    guard let parsed, !parsed.isNaN else { return nil }
    value = parsed
  }

  var defaultValueDescription: String { "\(value)s" }
}

extension Seconds {
  /// The longest duration any option takes: about three years of audio,
  /// far inside every frame counter at every rate.
  static let longest = 100_000_000.0

  /// Refuses a value of `option` outside `shortest…longest` seconds.
  func require(_ option: String, atLeast shortest: Double, atMost longest: Double = longest)
    throws
  {
    guard value >= shortest && value <= longest else {
      throw ValidationError(
        "\(option) must be \(Seconds.describe(shortest)) to \(Seconds.describe(longest)), not \(Seconds.describe(value))"
      )
    }
  }

  /// A duration as a person writes it: 0 s, 5 ms, 2.5 s, 100000000 s.
  static func describe(_ seconds: Double) -> String {
    if seconds > 0 && seconds < 1 {
      let milliseconds = seconds * 1000
      return
        (milliseconds == milliseconds.rounded()
        ? String(Int(milliseconds)) : String(milliseconds)) + " ms"
    }
    if seconds <= 1e15 && seconds == seconds.rounded() { return String(Int(seconds)) + " s" }
    return String(seconds) + " s"
  }
}
