/// The pair of streams a duplex unit drives: ALSA devices, a JACK client, a
/// PipeWire filter, or a simulated pair in tests (`DuplexIOTesting`).
///
/// Two kinds of backend exist. A *polled* backend (ALSA, the simulated
/// pair) is driven by the unit's own audio thread, which waits for each
/// period and then reads and writes. A *callback-driven* backend (JACK,
/// PipeWire; `isCallbackDriven`) is driven by its sound server, which calls
/// it once per graph cycle on the server's real-time thread; it runs the
/// unit's period there (`ServerCycleHandler.runCycle`), so input and output
/// of one cycle meet in the same call and the unit adds no period of
/// latency. In both, `read` and `write` move one period in the device
/// format and the unit calls them in the same order.
///
/// `open`, `close`, `drain`, `serverLatency` and `error(code:during:)` run
/// on the control thread; `wake` on any thread; everything else on the
/// audio thread (the unit's, or the server's), where it must not allocate.
public protocol DuplexBackend: AnyObject {
  /// Opens and configures the streams the configuration enables.
  func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  /// Pre-fills playback with silence and starts the streams (again after an
  /// xrun): `.ready` or `.failed`.
  func start() -> IOResult
  /// Waits for a period: capture readable, or (output only) playback writable.
  func waitForPeriod() -> IOResult
  /// Reads exactly `frames` frames in the device format, waiting as needed.
  func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult
  /// Writes exactly `frames` frames in the device format, waiting for room.
  func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult
  /// Stops both streams and prepares them for `start` after an xrun.
  func recover() -> IOResult
  /// Restarts playback alone after it underran, leaving capture running so
  /// that nothing it captured is lost: `.ready` or `.failed`.
  func restartPlayback() -> IOResult
  /// Monotonic host time (ns) of the period just captured or written.
  func hostTime() -> UInt64
  /// Frames queued for playback ahead of the speaker.
  func outputDelay() -> Int
  /// Makes a pending or the next wait return `.woken` (any thread).
  func wake()
  /// Stops the streams at once (audio thread at the end of the loop; for a
  /// callback-driven backend, the control thread, and no cycle runs after it returns).
  func halt()
  /// Plays what is queued, then stops (control thread, after the loop).
  func drain()
  /// Releases the devices (control thread).
  func close()
  /// Describes a failure the loop met (`IOResult.failed`) in library words
  /// (control thread, after the loop).
  func error(code: Int32, during operation: LoopOperation) -> DuplexError

  /// Whether a sound server drives the periods by calling the backend once
  /// per cycle on a thread of its own, instead of the unit's thread waiting.
  var isCallbackDriven: Bool { get }
  /// Callback-driven backends: starts the streams and, until `halt`, calls
  /// `handler.runCycle` once per server cycle (and `handler.serverEnded`
  /// if the server goes away). The backend keeps `handler` without owning
  /// it; the unit outlives the streams. Control thread: `.ready` or `.failed`.
  func start(calling handler: any ServerCycleHandler) -> IOResult
  /// Callback-driven backends: whether the server's thread that runs the
  /// cycles has real-time priority (known once started).
  var isServerThreadRealtime: Bool { get }
  /// The latency the sound server reports for the ports the streams are
  /// connected to, or `nil` when it reports none (ALSA). Control thread,
  /// while started.
  func serverLatency() -> ServerLatency?
  /// What the backend did, once it is done, with the connections others had
  /// made to the ports of a client its sound server lost (`nil` until then,
  /// after it was taken, and where nothing was to be made again). Control thread.
  func takeRestoredConnections() -> RestoredConnections?
}

extension DuplexBackend {
  /// Recovers both streams and starts them again (after an xrun).
  public func restartBoth() -> IOResult {
    let recovered = recover()
    return recovered == .ready ? start() : recovered
  }

  /// Backends whose streams cannot restart apart restart both.
  public func restartPlayback() -> IOResult { restartBoth() }

  /// Polled unless a backend says otherwise.
  public var isCallbackDriven: Bool { false }
  public func start(calling handler: any ServerCycleHandler) -> IOResult { start() }
  public var isServerThreadRealtime: Bool { false }
  public func serverLatency() -> ServerLatency? { nil }
  public func takeRestoredConnections() -> RestoredConnections? { nil }
}

/// What a callback-driven backend calls: the unit's side of a server cycle.
public protocol ServerCycleHandler: AnyObject {
  /// Runs one period of `frames` frames on the calling thread (the
  /// server's real-time thread): the backend's `read`, the client's input
  /// callback, its render callback and the backend's `write`, in that
  /// order. `losses` tells what the server lost since the last cycle; the
  /// unit counts it and flags this period. When the unit does not run the
  /// period (stopping, or stopped) it writes nothing: the backend plays
  /// silence. Never allocates, locks or blocks.
  func runCycle(frames: Int, losses: CycleLosses)
  /// The server ended the streams (shut down, killed, or dropped the
  /// client): the unit's loop ends with this failure code, which the
  /// backend's `error(code:during:)` describes. Any thread but the one
  /// running cycles; it returns at once.
  func serverEnded(code: Int32)
}

/// What a sound server lost between two cycles, as the backend saw it.
public struct CycleLosses: Sendable, Equatable {
  /// Losses to count as xruns: those the server reported (JACK's xrun
  /// callback) or the backend detected itself (cycles skipped, a buffer
  /// missing), one for each stall however many notices it brought.
  public var xruns: Int
  /// Frames of input the graph ran without this client, or whose buffer was
  /// missing (0 when the server lost time but no frames, or cannot tell).
  public var lostFrames: Int

  public init(xruns: Int = 0, lostFrames: Int = 0) {
    self.xruns = xruns
    self.lostFrames = lostFrames
  }

  /// Nothing lost.
  public static let none = CycleLosses()

  /// Whether anything was lost.
  public var isEmpty: Bool { xruns == 0 && lostFrames == 0 }
}

/// The latency a sound server reports for a client's ports, in frames at
/// the server's rate (JACK's `jack_port_get_latency_range`, PipeWire's
/// latency parameters): how long captured audio took to reach the client,
/// and how long what it plays takes to reach the speaker.
public struct ServerLatency: Sendable, Equatable {
  /// From the capture hardware to the client's input.
  public var capture: ClosedRange<Int>
  /// From the client's output to the playback hardware.
  public var playback: ClosedRange<Int>

  public init(capture: ClosedRange<Int>, playback: ClosedRange<Int>) {
    self.capture = capture
    self.playback = playback
  }

  /// The server's estimate of a loop through the hardware (largest values).
  public var roundTrip: Int { capture.upperBound + playback.upperBound }
}
