internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

/// An ALSA PCM device name with what it is for, as `aplay -L` lists it.
public struct DeviceInfo: Sendable, Equatable {
  /// The name to pass to -D (e.g. "default", "hw:CARD=PCH,DEV=0", "pulse").
  public var name: String
  /// The description lines ALSA gives.
  public var description: String
  public var canCapture: Bool
  public var canPlay: Bool
}

/// Lists the PCM devices ALSA knows (control thread).
public enum DeviceCatalog {
  public static func devices() -> [DeviceInfo] {
    micloop_silence_alsa_diagnostics()
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
    defer { snd_device_name_free_hint(hints) }
    var devices = [DeviceInfo]()
    var index = 0
    while let hint = hints[index] {
      index += 1
      func value(_ key: String) -> String? {
        guard let text = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(text) }
        return String(cString: text)
      }
      guard let name = value("NAME") else { continue }
      let direction = value("IOID")
      devices.append(
        DeviceInfo(
          name: name, description: value("DESC") ?? "",
          canCapture: direction == nil || direction == "Input",
          canPlay: direction == nil || direction == "Output"))
    }
    return devices
  }
}
