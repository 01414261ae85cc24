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
    guard let parsed, parsed.isFinite, parsed >= 0 else { return nil }
    value = parsed
  }

  var defaultValueDescription: String { "\(value)s" }
}
