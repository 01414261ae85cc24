import DuplexIO
import DuplexIOTesting
import Testing

/// The simulated pair itself: what it grants, what it captures in each
/// format, and the playback queue its drifting clock reports.
@Suite struct SimulatedDevicePairTests {
  @Test(arguments: SampleFormat.allCases)
  func capturesTheRampInEveryFormat(format: SampleFormat) throws {
    let device = SimulatedDevicePair(periodFrames: 16, format: format)
    var configuration = DuplexConfiguration(.duplex)
    configuration.inputChannelCount = 2
    let granted = try device.open(configuration)
    #expect(granted.inputFormat == format && granted.outputFormat == format)
    #expect(granted.periodFrames == 16 && granted.inputChannelCount == 2)
    let raw = UnsafeMutableRawPointer.allocate(byteCount: 16 * 2 * 4, alignment: 16)
    defer { raw.deallocate() }
    #expect(device.read(raw, frames: 16) == .ready)
    var samples = [Float](repeating: -1, count: 32)
    samples.withUnsafeMutableBufferPointer { format.decode(raw, into: $0.baseAddress!, count: 32) }
    for frame in 0..<16 {
      #expect(samples[2 * frame] == SimulatedDevicePair.capturedSample(frame))
      #expect(samples[2 * frame + 1] == samples[2 * frame])
    }
  }

  @Test func faultsAreTakenOnce() throws {
    let device = SimulatedDevicePair(periodFrames: 8)
    var configuration = DuplexConfiguration(.duplex)
    _ = try device.open(configuration)
    let raw = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
    defer { raw.deallocate() }
    device.inject(.overrun)
    #expect(device.read(raw, frames: 8) == .xrun)
    #expect(device.read(raw, frames: 8) == .ready)
    device.inject(.underrun)
    #expect(device.write(raw, frames: 8) == .xrun)
    #expect(device.write(raw, frames: 8) == .ready)
  }
}
