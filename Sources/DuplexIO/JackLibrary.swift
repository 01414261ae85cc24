internal import CJack

#if canImport(Glibc)
  import Glibc
#endif

/// libjack.so.0, loaded the first time a JACK device is asked for, and the
/// table of its functions every JACK call goes through (`micloop_jack`;
/// Sources/CJack). Its own diagnostics are silenced: failures reach the
/// user as one line. Any thread; the table is read-only once loaded.
final class JackLibrary: @unchecked Sendable {
  static let soname = "libjack.so.0"

  /// The functions, resolved once and never released.
  let api: UnsafePointer<micloop_jack>

  private init(api: UnsafePointer<micloop_jack>) { self.api = api }

  /// The library, or why it cannot be used.
  private static let shared: Result<JackLibrary, DuplexError> = {
    do throws(DuplexError) {
      let handle = try DynamicLibrary.open(soname, for: "jack")
      let table = UnsafeMutablePointer<micloop_jack>.allocate(capacity: 1)
      if let missing = micloop_jack_resolve(table, handle) {
        return .failure(
          DynamicLibrary.unavailable(
            soname, for: "jack", reason: "it lacks \(String(cString: missing))"))
      }
      micloop_jack_silence(table)
      return .success(JackLibrary(api: table))
    } catch {
      return .failure(error)
    }
  }()

  /// The loaded library (control thread).
  static func load() throws(DuplexError) -> JackLibrary { try shared.get() }

  /// The name of the server clients connect to: `JACK_DEFAULT_SERVER`, or
  /// "default", as libjack chooses it.
  static var serverName: String {
    getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) } ?? "default"
  }
}
