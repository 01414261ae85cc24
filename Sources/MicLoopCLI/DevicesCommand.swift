import ArgumentParser
import Console
import DuplexIO
import TextFormatting

/// `micloop devices`: the capture and playback devices, like arecord -L / aplay -L.
struct Devices: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "devices",
    abstract:
      "List capture and playback devices: ALSA PCMs, JACK ports and PipeWire nodes (names to use with -D)."
  )

  @Flag(help: "Print JSON Lines, one device per line.")
  var json = false

  func run() throws {
    let devices = DeviceCatalog.allDevices()
    if json {
      for device in devices {
        var object = JSONObject(event: "device", capacity: 128)
        object.add("name", device.name)
        object.add("description", device.description)
        object.add("capture", device.canCapture)
        object.add("playback", device.canPlay)
        StandardOutput.write(object.finished)
      }
      return
    }
    for (title, keep) in [
      ("Capture devices:", \DeviceInfo.canCapture), ("Playback devices:", \DeviceInfo.canPlay),
    ] {
      StandardOutput.write(title)
      let listed = devices.filter { $0[keyPath: keep] }
      if listed.isEmpty { StandardOutput.write("  (none)") }
      for device in listed {
        StandardOutput.write("  \(device.name)")
        for line in device.description.split(separator: "\n") {
          StandardOutput.write("      \(line)")
        }
      }
    }
  }
}
