internal import CPipeWire

/// The latency the PipeWire graph reports for the node's ports, and the
/// node's own part in passing it on. The node does its own latency
/// (`PW_FILTER_FLAG_CUSTOM_LATENCY`): the graph sets on each input port the
/// capture latency of what is linked to it (from the source hardware to the
/// port) and on each output port the playback latency of what it feeds (from
/// the port to the sink hardware); the node keeps both and, adding nothing of
/// its own (it runs inside the graph's cycle), publishes the inputs' capture
/// latency on its outputs and the outputs' playback latency on its inputs, as
/// PipeWire's default algorithm would. Values are kept as PipeWire gives them
/// (quanta, frames and nanoseconds) and become frames at the quantum and rate
/// the graph runs when read, the way PipeWire's JACK layer converts them
/// (`jack_port_get_latency_range`). PipeWire's loop thread; read under the
/// loop's lock.
final class PipeWirePortLatencies {
  /// What each input port was told: the capture latency linked to it.
  private var capture: [spa_latency_info]
  /// What each output port was told: the playback latency it feeds.
  private var playback: [spa_latency_info]

  init(inputCount: Int, outputCount: Int) {
    capture = Array(repeating: micloop_pw_no_latency(SPA_DIRECTION_OUTPUT), count: inputCount)
    playback = Array(repeating: micloop_pw_no_latency(SPA_DIRECTION_INPUT), count: outputCount)
  }

  /// Notes a Latency parameter the graph set on a port, and returns the
  /// combined latency to publish on the ports of the other direction
  /// (`nil` when the parameter says nothing new).
  func note(_ info: spa_latency_info, on port: FilterPortTag) -> (
    spa_latency_info, publishOnInputs: Bool
  )? {
    switch port {
    case .input(let index) where info.direction == SPA_DIRECTION_OUTPUT && index < capture.count:
      capture[index] = info
      return (Self.combined(capture, direction: SPA_DIRECTION_OUTPUT), false)
    case .output(let index) where info.direction == SPA_DIRECTION_INPUT && index < playback.count:
      playback[index] = info
      return (Self.combined(playback, direction: SPA_DIRECTION_INPUT), true)
    default:
      return nil
    }
  }

  /// The latencies in frames at `quantum` frames a cycle and `rate` Hz.
  func frames(quantum: Int, rate: Int) -> ServerLatency {
    func range(_ info: spa_latency_info) -> ClosedRange<Int> {
      let low = Self.frames(
        info.min_quantum, info.min_rate, info.min_ns, quantum: quantum, rate: rate)
      let high = Self.frames(
        info.max_quantum, info.max_rate, info.max_ns, quantum: quantum, rate: rate)
      return low...max(low, high)
    }
    return ServerLatency(
      capture: range(Self.combined(capture, direction: SPA_DIRECTION_OUTPUT)),
      playback: range(Self.combined(playback, direction: SPA_DIRECTION_INPUT)))
  }

  /// PipeWire's combination of several ports' latency: the smallest of the
  /// minima and the largest of the maxima (`spa_latency_info_combine`).
  private static func combined(_ infos: [spa_latency_info], direction: spa_direction)
    -> spa_latency_info
  {
    var result = spa_latency_info()
    spa_latency_info_combine_start(&result, direction)
    for var info in infos { _ = spa_latency_info_combine(&result, &info) }
    spa_latency_info_combine_finish(&result)
    return result
  }

  /// One bound of a latency in frames: quanta × quantum + frames + ns at `rate`.
  static func frames(
    _ quanta: Float, _ frames: UInt32, _ nanoseconds: UInt64, quantum: Int, rate: Int
  )
    -> Int
  {
    Int(quanta * Float(quantum)) + Int(frames) + Int(nanoseconds * UInt64(rate) / 1_000_000_000)
  }
}

/// What a filter port's user data says it is: input (capture) port `index`
/// or output (playback) port `index`.
enum FilterPortTag: Equatable {
  case input(Int)
  case output(Int)

  /// The value stored in the port's user data: the index of an input,
  /// minus one less the index of an output.
  var storedValue: Int {
    switch self {
    case .input(let index): return index
    case .output(let index): return -1 - index
    }
  }

  init(storedValue: Int) {
    self = storedValue >= 0 ? .input(storedValue) : .output(-1 - storedValue)
  }
}
