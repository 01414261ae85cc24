internal import CPipeWire

#if canImport(Glibc)
  import Glibc
#endif

/// libpipewire-0.3.so.0, loaded the first time a PipeWire device is asked
/// for, initialised once (`pw_init`), and the table of its functions every
/// PipeWire call goes through (`micloop_pw`; Sources/CPipeWire). Its log is
/// silenced unless `PIPEWIRE_DEBUG` asks for it: failures reach the user as
/// one line. Any thread; the table is read-only once loaded.
final class PipeWireLibrary: @unchecked Sendable {
  static let soname = "libpipewire-0.3.so.0"

  /// The functions, resolved once and never released.
  let api: UnsafePointer<micloop_pw>

  private init(api: UnsafePointer<micloop_pw>) { self.api = api }

  private static let shared: Result<PipeWireLibrary, DuplexError> = {
    do throws(DuplexError) {
      let handle = try DynamicLibrary.open(soname, for: "pw")
      let table = UnsafeMutablePointer<micloop_pw>.allocate(capacity: 1)
      if let missing = micloop_pw_resolve(table, handle) {
        return .failure(
          DynamicLibrary.unavailable(
            soname, for: "pw", reason: "it lacks \(String(cString: missing))"))
      }
      table.pointee.initialize(nil, nil)
      if getenv("PIPEWIRE_DEBUG") == nil { table.pointee.log_set_level(0) }
      return .success(PipeWireLibrary(api: table))
    } catch {
      return .failure(error)
    }
  }()

  /// The loaded library (control thread).
  static func load() throws(DuplexError) -> PipeWireLibrary { try shared.get() }
}

/// Properties for a PipeWire object, made from key–value pairs.
func pipeWireProperties(_ api: UnsafePointer<micloop_pw>, _ pairs: KeyValuePairs<String, String>)
  -> OpaquePointer?
{
  var empty = spa_dict(flags: 0, n_items: 0, items: nil)
  guard let properties = api.pointee.properties_new_dict(&empty) else { return nil }
  for (key, value) in pairs { _ = api.pointee.properties_set(properties, key, value) }
  return properties
}
