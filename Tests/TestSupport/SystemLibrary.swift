import Foundation

/// Where the dynamic linker finds a shared library on this machine, from
/// its cache (`ldconfig -p`), so tests name no architecture's folder.
public enum SystemLibrary {
  /// The path of the library file `name` (as `libjack.so.0`), or `nil`
  /// when the linker's cache has none.
  public static func path(of name: String) -> String? {
    guard let listing = try? TestFiles.output(of: ["/sbin/ldconfig", "-p"]) else { return nil }
    // Lines read "\tlibjack.so.0 (libc6,x86-64) => /usr/lib/…/libjack.so.0".
    for line in listing.split(separator: "\n") {
      let parts = line.split(separator: "=>", maxSplits: 1)
      guard parts.count == 2,
        parts[0].trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
          == name
      else { continue }
      return parts[1].trimmingCharacters(in: .whitespaces)
    }
    return nil
  }

  /// The folders of `root` + `/usr/lib/*/` + `subfolder` that exist (the
  /// multiarch folder of an unpacked package, whatever its architecture).
  public static func multiarchFolders(under root: String, _ subfolder: String) -> [String] {
    let lib = root + "/usr/lib"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
    return entries.sorted().map { lib + "/" + $0 + "/" + subfolder }
      .filter { FileManager.default.fileExists(atPath: $0) }
  }
}
