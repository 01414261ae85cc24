import DuplexIO
import DuplexIOTesting
import Testing

/// The simulated room: its microphone hears the talker, and what the pair
/// plays through the room's response after the loop's buffering.
@Suite struct SimulatedRoomTests {
  @Test(arguments: [1, 2])
  func theSpeakerReachesTheMicrophoneAfterTheLoopBuffering(channels: Int) throws {
    let talker: [Float] = [0.125, 0.25, 0.375]
    let room = SimulatedRoom(
      impulseResponse: [0, 0.5, 0, -0.25], talker: talker, recordingCapacity: 256)
    let device = SimulatedDevicePair(periodFrames: 16, format: .float, room: room)
    var configuration = DuplexConfiguration(.duplex)
    configuration.inputChannelCount = channels
    configuration.outputChannelCount = channels
    let granted = try device.open(configuration)
    #expect(room.playbackDelay == granted.loopBufferFrames && granted.loopBufferFrames == 48)
    let raw = UnsafeMutableRawPointer.allocate(byteCount: 16 * channels * 4, alignment: 16)
    defer { raw.deallocate() }
    var heard = [Float]()
    for period in 0..<8 {
      #expect(device.read(raw, frames: 16) == .ready)
      let samples = raw.assumingMemoryBound(to: Float.self)
      for frame in 0..<16 {
        heard.append(samples[frame * channels])
        #expect(samples[frame * channels + channels - 1] == samples[frame * channels])
      }
      // Played: an impulse of 0.8 in every channel at frame 3 of the first period.
      for index in 0..<(16 * channels) { samples[index] = 0 }
      if period == 0 { for channel in 0..<channels { samples[3 * channels + channel] = 0.8 } }
      #expect(device.write(raw, frames: 16) == .ready)
    }
    #expect(Array(heard.prefix(3)) == talker)
    #expect(abs(heard[48 + 3 + 1] - 0.4) < 1e-6)
    #expect(abs(heard[48 + 3 + 3] - -0.2) < 1e-6)
    let elsewhere = heard.enumerated().filter { ![0, 1, 2, 52, 54].contains($0.offset) }
    #expect(elsewhere.allSatisfy { abs($0.element) < 1e-6 })
    #expect(room.speakerPeak == 0.8)
    #expect(room.microphoneSignal() == heard)
    #expect(room.speakerSignal()[51] == 0.8)
  }
}
