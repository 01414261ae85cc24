/// How recordings are named: a template of the first sample's time, in
/// UTC by default, to the millisecond. Codes: `%Y` year, `%m` month, `%d`
/// day, `%H` hour, `%M` minute, `%S` second, `%f` milliseconds, `%j` day
/// of the year, `%z` the UTC offset (`Z` in UTC, else `+0100`), `%L` the
/// label, `%T` the trigger, `%n` the session's file count (0001…), `%%`
/// a per cent sign. A `/` makes subdirectories. Pure data; any thread.
public struct FileNaming: Sendable, Equatable {
  /// `2026-11-25T12-00-03.417Z` (colons are awkward in file names).
  public static let defaultTemplate = "%Y-%m-%dT%H-%M-%S.%f%z"
  public var template = defaultTemplate
  /// Name by local time instead of UTC.
  public var usesLocalTime = false
  /// A word for `%L`; when the template has no `%L`, a label is added
  /// after an underscore.
  public var label: String?

  public init(template: String = defaultTemplate, usesLocalTime: Bool = false, label: String? = nil)
  {
    self.template = template
    self.usesLocalTime = usesLocalTime
    self.label = label
  }

  /// Why a template cannot name files; the description says what to write.
  public struct TemplateError: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// Refuses templates that cannot name distinct, safe files.
  public func check() throws(TemplateError) {
    var previousWasPercent = false
    for character in template {
      if previousWasPercent {
        guard "YmdHMSfjzLTn%".contains(character) else {
          throw TemplateError(
            description:
              "%\(character) is not a name code; use %Y %m %d %H %M %S %f %j %z %L %T %n or %%")
        }
        previousWasPercent = false
      } else if character == "%" {
        previousWasPercent = true
      }
    }
    if previousWasPercent {
      throw TemplateError(description: "the name ends in a lone %; write %% for a per cent sign")
    }
    if template.hasPrefix("/") || template.split(separator: "/").contains("..") {
      throw TemplateError(
        description: "names stay inside the recording directory: no leading / and no ..")
    }
    if template.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
      throw TemplateError(
        description:
          "a name or folder beginning with . would be hidden; begin it with another character")
    }
    if template.isEmpty || template.hasSuffix("/") {
      throw TemplateError(description: "the name template needs a file name after its last /")
    }
    if let label, label.contains("/") || label.isEmpty {
      throw TemplateError(description: "a label is one word without /")
    }
  }

  /// The name (without extension) of a file whose first sample was at
  /// `epochSeconds`; `count` numbers the session's files from 1.
  public func name(epochSeconds: Double, trigger: String, count: Int) -> String {
    let time = WallClockTime(epochSeconds: epochSeconds, local: usesLocalTime)
    var result = ""
    var iterator = template.makeIterator()
    while let character = iterator.next() {
      guard character == "%", let code = iterator.next() else {
        result.append(character)
        continue
      }
      switch code {
      case "Y": result += WallClockTime.pad(time.year, 4)
      case "m": result += WallClockTime.pad(time.month)
      case "d": result += WallClockTime.pad(time.day)
      case "H": result += WallClockTime.pad(time.hour)
      case "M": result += WallClockTime.pad(time.minute)
      case "S": result += WallClockTime.pad(time.second)
      case "f": result += WallClockTime.pad(time.millisecond, 3)
      case "j": result += WallClockTime.pad(time.dayOfYear, 3)
      case "z": result += time.offsetText(separator: "")
      case "L": result += label ?? ""
      case "T": result += Self.safe(trigger)
      case "n": result += WallClockTime.pad(count, 4)
      default: result.append(code)
      }
    }
    if let label, !template.contains("%L") { result += "_" + label }
    return result
  }

  /// `text` with the characters file names should not hold replaced.
  static func safe(_ text: String) -> String {
    String(text.map { "/\\:*?\"<>| ".contains($0) ? "-" : $0 })
  }
}
