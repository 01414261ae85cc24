import CPipeWire
import Testing

@testable import DuplexIO

/// How the PipeWire node keeps, combines, passes on and converts the
/// Latency parameters the graph sets on its ports.
@Suite struct PipeWirePortLatenciesTests {
  static func latency(
    _ direction: spa_direction, quanta: Float = 0, frames: UInt32 = 0, nanoseconds: UInt64 = 0,
    maxFrames: UInt32? = nil
  ) -> spa_latency_info {
    spa_latency_info(
      direction: direction, min_quantum: quanta, max_quantum: quanta, min_rate: frames,
      max_rate: maxFrames ?? frames, min_ns: nanoseconds, max_ns: nanoseconds)
  }

  @Test func nothingLinkedIsNoLatency() {
    let latencies = PipeWirePortLatencies(inputCount: 2, outputCount: 2)
    #expect(
      latencies.frames(quantum: 256, rate: 48_000) == ServerLatency(capture: 0...0, playback: 0...0)
    )
  }

  /// One quantum plus 240 frames on one input and nothing on the other:
  /// capture ranges from 0 to 496 at a 256-frame quantum, and that is
  /// passed on to the outputs; a sink 480 frames plus 5 ms away is 720.
  @Test func portsCombineAndConvertAsPipeWireDoes() throws {
    let latencies = PipeWirePortLatencies(inputCount: 2, outputCount: 1)
    let capture = try #require(
      latencies.note(Self.latency(SPA_DIRECTION_OUTPUT, quanta: 1, frames: 240), on: .input(1)))
    #expect(!capture.publishOnInputs)
    #expect(capture.0.direction == SPA_DIRECTION_OUTPUT)
    #expect(capture.0.min_quantum == 0 && capture.0.max_quantum == 1)
    #expect(capture.0.min_rate == 0 && capture.0.max_rate == 240)
    let playback = try #require(
      latencies.note(
        Self.latency(SPA_DIRECTION_INPUT, frames: 480, nanoseconds: 5_000_000), on: .output(0)))
    #expect(playback.publishOnInputs)
    #expect(
      latencies.frames(quantum: 256, rate: 48_000)
        == ServerLatency(capture: 0...496, playback: 720...720))
    #expect(
      latencies.frames(quantum: 1024, rate: 48_000)
        == ServerLatency(capture: 0...1264, playback: 720...720))
  }

  /// A port's own direction (what it publishes) and ports it does not
  /// have are not what the graph measures for it: ignored.
  @Test func latencyOfThePortsOwnDirectionOrAnUnknownPortIsIgnored() {
    let latencies = PipeWirePortLatencies(inputCount: 1, outputCount: 1)
    #expect(latencies.note(Self.latency(SPA_DIRECTION_INPUT, frames: 100), on: .input(0)) == nil)
    #expect(latencies.note(Self.latency(SPA_DIRECTION_OUTPUT, frames: 100), on: .output(0)) == nil)
    #expect(latencies.note(Self.latency(SPA_DIRECTION_OUTPUT, frames: 100), on: .input(3)) == nil)
    #expect(
      latencies.frames(quantum: 256, rate: 48_000) == ServerLatency(capture: 0...0, playback: 0...0)
    )
  }

  @Test(arguments: [FilterPortTag.input(0), .input(5), .output(0), .output(7)])
  func aPortTagSurvivesItsStoredValue(tag: FilterPortTag) {
    #expect(FilterPortTag(storedValue: tag.storedValue) == tag)
  }
}
