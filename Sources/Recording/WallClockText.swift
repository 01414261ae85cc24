#if canImport(Glibc)
  import Glibc
#endif

/// Calendar fields of an instant, in UTC or in the local time zone, to the
/// millisecond: what file names, `bext` chunks and the index print. Any thread.
public struct WallClockTime: Sendable, Equatable {
  public var year: Int
  public var month: Int
  public var day: Int
  public var hour: Int
  public var minute: Int
  public var second: Int
  public var millisecond: Int
  /// Day of the year, 1-366.
  public var dayOfYear: Int
  /// Seconds east of UTC (0 in UTC).
  public var utcOffset: Int
  /// Seconds since midnight, with the fraction.
  public var secondsSinceMidnight: Double

  /// The instant `seconds` after 1970-01-01T00:00:00Z, in UTC or local time.
  public init(epochSeconds seconds: Double, local: Bool = false) {
    // Milliseconds rounded first, so 59.9996 s is the next minute, not "60.000".
    let totalMilliseconds = Int64((seconds * 1000).rounded(.down))
    var whole = time_t(
      totalMilliseconds >= 0 ? totalMilliseconds / 1000 : (totalMilliseconds - 999) / 1000)
    let milliseconds = Int(totalMilliseconds - Int64(whole) * 1000)
    var fields = tm()
    if local { localtime_r(&whole, &fields) } else { gmtime_r(&whole, &fields) }
    year = Int(fields.tm_year) + 1900
    month = Int(fields.tm_mon) + 1
    day = Int(fields.tm_mday)
    hour = Int(fields.tm_hour)
    minute = Int(fields.tm_min)
    second = Int(fields.tm_sec)
    millisecond = milliseconds
    dayOfYear = Int(fields.tm_yday) + 1
    utcOffset = local ? Int(fields.tm_gmtoff) : 0
    let fraction = seconds - Double(Int64(whole))
    secondsSinceMidnight = Double(hour * 3600 + minute * 60 + second) + fraction
  }

  /// `2026-11-25T12:00:03.417Z` (UTC) or `2026-11-25T13:00:03.417+01:00`.
  public var iso8601: String {
    "\(Self.pad(year, 4))-\(Self.pad(month))-\(Self.pad(day))T\(Self.pad(hour)):\(Self.pad(minute)):\(Self.pad(second)).\(Self.pad(millisecond, 3))"
      + offsetText(separator: ":")
  }

  /// `Z` in UTC, else `+hh:mm` / `+hhmm`.
  func offsetText(separator: String) -> String {
    guard utcOffset != 0 else { return "Z" }
    let minutes = abs(utcOffset) / 60
    return (utcOffset < 0 ? "-" : "+") + Self.pad(minutes / 60) + separator + Self.pad(minutes % 60)
  }

  static func pad(_ value: Int, _ width: Int = 2) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
  }
}

/// The system's real-time clock, in seconds since 1970. Any thread.
public enum SystemClock {
  public static var now: Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
