import AudioFiles
import SignalDSP

/// The files of a simulated room on the command line: its impulse
/// response and a talker, read whole and folded to mono. Control thread.
enum RoomFiles {
  /// The longest impulse response taken, in seconds (a large hall rings
  /// for a few seconds; longer is a wrong file).
  static let longestResponse = 10.0

  /// The frames of `path` folded to mono (the mean of its channels), and
  /// its rate; with `seconds`, no more than one frame past that many
  /// seconds is read (a stream an hour long is refused after 10 s of it).
  static func readMono(_ path: String, seconds: Double? = nil) throws -> (
    samples: [Float], rate: Int
  ) {
    let reader: AudioFileReader
    do { reader = try AudioFileReader(path: path) } catch { throw CommandFailure(error) }
    let channels = reader.channelCount
    let block = 16_384
    var buffer = [Float](repeating: 0, count: block * channels)
    var samples = [Float]()
    let limit = seconds.map { Int(min($0 * reader.sampleRate, 1e12)) + 1 } ?? Int.max
    while samples.count < limit {
      let frames: Int
      do {
        frames = try buffer.withUnsafeMutableBufferPointer { (pointer) throws(AudioFileError) in
          try reader.read(into: pointer.baseAddress!, frameCount: block)
        }
      } catch { throw CommandFailure(error) }
      if frames == 0 { break }
      for frame in 0..<frames {
        var sum: Float = 0
        for channel in 0..<channels { sum += buffer[frame * channels + channel] }
        samples.append(sum / Float(channels))
      }
    }
    return (samples, Int(reader.sampleRate.rounded()))
  }

  /// The room's impulse response: at most `longestResponse` seconds, not
  /// silent, no damaged samples.
  static func response(_ path: String) throws -> (samples: [Float], rate: Int) {
    let response = try readMono(path, seconds: longestResponse)
    guard !response.samples.isEmpty, response.samples.contains(where: { $0 != 0 }) else {
      throw CommandFailure(
        message:
          "\(path): the impulse response is silent; give a room's response (speaker to microphone)")
    }
    guard response.samples.allSatisfy(DamagedSamples.isSound) else {
      throw CommandFailure(
        message:
          "\(path): the impulse response holds damaged samples (not a number, or beyond +60 dBFS); measure it again"
      )
    }
    guard Double(response.samples.count) <= longestResponse * Double(response.rate) else {
      throw CommandFailure(
        message:
          "\(path): the impulse response is longer than \(Int(longestResponse)) s; cut it (sox \(path) short.wav trim 0 2)"
      )
    }
    return response
  }

  /// The talker, at the room's rate: some audio, no damaged samples.
  static func talker(_ path: String, rate: Int, room: String) throws -> [Float] {
    let talker = try readMono(path)
    guard talker.rate == rate else {
      throw CommandFailure(
        message:
          "\(path) is \(talker.rate) Hz but the room \(room) is \(rate) Hz; resample it (sox \(path) -r \(rate) talker-\(rate).wav)"
      )
    }
    guard !talker.samples.isEmpty else {
      throw CommandFailure(
        message: "\(path) holds no audio; give a recording of the talker", status: 65)
    }
    try CommandFailure.checkDamage(
      of: path, problem: nil,
      invalidSamples: talker.samples.count { !DamagedSamples.isSound($0) },
      treatment: "damaged samples (not a number, or beyond +60 dBFS) in the talker")
    return talker.samples
  }
}
