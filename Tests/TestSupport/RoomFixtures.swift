import AudioFiles
import Foundation

/// The simulated rooms' impulse responses committed in Tests/Fixtures/rooms
/// (made by Scripts/eval/room_impulse_responses.py): living, office, hall.
public enum RoomFixtures {
  /// The three rooms' names.
  public static let names = ["living", "office", "hall"]

  /// The path of a room's response file.
  public static func path(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/rooms/\(name).wav").path
  }

  /// A room's impulse response (48 kHz, mono).
  public static func response(_ name: String) throws -> [Float] {
    let reader = try AudioFileReader(path: path(name))
    var samples = [Float](repeating: 0, count: Int(reader.declaredFrameCount ?? 0))
    let read = try samples.withUnsafeMutableBufferPointer {
      (buffer) throws(AudioFileError) -> Int in
      try reader.read(into: buffer.baseAddress!, frameCount: buffer.count)
    }
    return Array(samples.prefix(read))
  }
}
