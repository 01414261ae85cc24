#if canImport(Glibc)
  import Glibc
#endif

/// Opens a sound server's client library with `dlopen` by its soname, so
/// micloop never links it: the program starts, and runs ALSA commands,
/// where the library is not installed, and says which one is missing when
/// a device needs it. Control thread.
enum DynamicLibrary {
  /// The handle of `soname` (never closed: the library stays loaded for
  /// the life of the process), or the failure `devices` devices report.
  static func open(_ soname: String, for devices: String) throws(DuplexError)
    -> UnsafeMutableRawPointer
  {
    guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
      throw unavailable(soname, for: devices, reason: dlerror().map { String(cString: $0) })
    }
    return handle
  }

  /// The error for a library that cannot be used.
  static func unavailable(_ soname: String, for devices: String, reason: String?) -> DuplexError {
    DuplexError(
      .libraryUnavailable, operation: "load", device: devices, value: soname, code: ENOENT,
      reason: reason ?? "not found")
  }
}
