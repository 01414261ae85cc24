internal import CJack
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The JACK backend: one client of a JACK server (the one named at init,
/// or `JACK_DEFAULT_SERVER`, or "default"; never started by micloop), with stably named ports
/// `micloop:capture_1…N` and `micloop:playback_1…N`, driven by the server:
/// its process callback runs the unit's period, input then output, in the
/// same cycle, so the client adds no latency (`jack_iodelay` through it
/// measures what it measures on its own loop).
///
/// What a native client does that the ALSA `jack` plugin cannot:
/// - it is never deactivated on an xrun, so connections made from outside
///   (`jack_connect`, a patchbay) survive every xrun;
/// - xruns come from JACK's xrun callback (an atomic counter) and cycles
///   the graph ran without the client from the jump of its frame time;
///   both are counted and flagged in the next period;
/// - a server that shuts down or dies (`jack_on_info_shutdown`) ends the
///   unit as a lost device, so a live job with `--reconnect` attaches a new
///   client, with the same names, when the server returns; the connections
///   its ports had, followed as they were made and broken (JACK's
///   port-connect notices, `JackConnectionBook`), are made again as their
///   ports come back (`JackConnectionRestorer`);
/// - buffer-size changes are taken from each cycle's frame count: every
///   buffer holds `maximumCycleFrames`, so nothing is reallocated (the
///   buffer-size callback may race the process callback, jack2#437).
///
/// libjack is loaded with `dlopen` (`JackLibrary`). Ports connect as the
/// device name says (`DeviceRoute`): physical ports, none, or a pattern.
/// The process callback always returns 0 and never allocates, locks or
/// logs. Control thread for everything but the cycle.
public final class JackBackend: DuplexBackend, @unchecked Sendable {
  /// The most frames a cycle may hold (JACK2's largest buffer size).
  public static let maximumCycleFrames = 8192
  /// The client name asked for; JACK adds "-01" … when another has it.
  public static let clientName = "micloop"
  /// Cycles `drain` lets pass in silence so the last period reaches the
  /// hardware (the playback latency of an asynchronous JACK2 graph is two).
  static let drainCycles = 4
  /// How long after a loss JACK's further xrun notices still belong to it.
  static let xrunMergeSeconds = 0.1
  /// Seconds a new client waits for the ports of a lost client's
  /// connections to come back (other clients restart after the server).
  public static let restoreTimeout = 10.0

  /// The server connected to; `nil` for libjack's choice.
  public let serverName: String?
  private var jack: UnsafePointer<micloop_jack>?
  private var client: OpaquePointer?
  private var deviceName = "jack"
  private var sampleRate = 0
  private var capturePorts = PortSet()
  private var playbackPorts = PortSet()
  private var captureTarget = DeviceRoute.PortTarget.none
  private var playbackTarget = DeviceRoute.PortTarget.none
  /// Where the client's connections are kept in `JackConnectionBook`:
  /// "SERVER/CLIENT". Set before the client is activated; read by the
  /// notification thread after.
  private var bookKey: String?
  /// The connections a lost client of the same name had, to make again.
  private var lostConnections = [JackPortConnection]()
  private var restorer: JackConnectionRestorer?
  /// Raised by JACK's port-registration notices (its notification thread).
  private let portsAppeared = EventSignal()

  // Audio thread (the server's process thread) only.
  private unowned(unsafe) var handler: (any ServerCycleHandler)?
  private var lastFrameTime: UInt32 = 0
  private var lastFrames = 0
  private var hasCycled = false
  private var seenXruns = 0
  private var framesSinceLoss = Int.max / 2
  private var pendingLostFrames = 0
  private var cycleTime: UInt64 = 0
  private var hasWritten = false

  // Any thread.
  private let xruns = Atomic<Int>(0)
  private let cycles = Atomic<Int>(0)
  private let isStarted = Atomic<Bool>(false)
  private let isActive = Atomic<Bool>(false)
  private let hasEnded = Atomic<Bool>(false)
  private let bufferFrames = Atomic<Int>(0)
  /// Why the server ended the client, written once by the callback that
  /// says so (no allocation there) before `hasEnded` is raised.
  private let endReason = UnsafeMutablePointer<CChar>.allocate(capacity: endReasonCapacity)
  private static let endReasonCapacity = 256

  /// A backend for the server named `serverName`, or, when `nil`, the
  /// one `JACK_DEFAULT_SERVER` names (or "default").
  public init(serverName: String? = nil) {
    self.serverName = serverName
    endReason.initialize(repeating: 0, count: Self.endReasonCapacity)
  }

  deinit {
    close(keepingEndedClient: false)
    endReason.deallocate()
  }

  // MARK: Control thread

  public var isCallbackDriven: Bool { true }

  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    close()
    deviceName = configuration.deviceDescription
    let routes = configuration.routes
    captureTarget = try Self.target(routes.capture, name: configuration.captureDevice) ?? .none
    playbackTarget = try Self.target(routes.playback, name: configuration.playbackDevice) ?? .none
    let api = try JackLibrary.load().api
    jack = api
    var status = JackStatus(0)
    guard let client = micloop_jack_open(api, Self.clientName, serverName, &status) else {
      throw DuplexError(
        .serverUnreachable, operation: "open", device: deviceName, code: ECONNREFUSED,
        reason: "no JACK server '\(serverName ?? JackLibrary.serverName)' is running")
    }
    self.client = client
    do throws(DuplexError) {
      return try configure(client, api: api, configuration)
    } catch {
      close()
      throw error
    }
  }

  private static func target(_ route: DeviceRoute?, name: String) throws(DuplexError)
    -> DeviceRoute.PortTarget?
  {
    guard let route else { return nil }
    guard case .jack(let target) = route else {
      throw DuplexError(
        .unknownDevice, operation: "open", device: name, code: ENODEV,
        reason: "not a JACK device name (jack, jack:none or jack:PATTERN)")
    }
    return target
  }

  private func configure(
    _ client: OpaquePointer, api: UnsafePointer<micloop_jack>,
    _ configuration: DuplexConfiguration
  ) throws(DuplexError) -> GrantedConfiguration {
    let rate = Int(api.pointee.jack_get_sample_rate(client))
    guard rate == configuration.sampleRate else {
      throw DuplexError(
        .rateUnavailable, operation: "set the rate of", device: deviceName,
        value: "\(configuration.sampleRate) Hz", code: EINVAL,
        reason: "the JACK server runs at \(rate) Hz")
    }
    sampleRate = rate
    // A pattern that names no port is a mistake to report now, not silence.
    if case .named(let pattern) = captureTarget,
      serverPorts(matching: pattern, flags: JackPortIsOutput).isEmpty
    {
      throw noPorts(pattern, direction: "output")
    }
    if case .named(let pattern) = playbackTarget,
      serverPorts(matching: pattern, flags: JackPortIsInput).isEmpty
    {
      throw noPorts(pattern, direction: "input")
    }
    let inputs = configuration.isInputEnabled ? configuration.inputChannelCount : 0
    let outputs = configuration.isOutputEnabled ? configuration.outputChannelCount : 0
    capturePorts = try register(inputs, prefix: "capture", flags: JackPortIsInput)
    playbackPorts = try register(outputs, prefix: "playback", flags: JackPortIsOutput)
    let server = serverName ?? JackLibrary.serverName
    let key = "\(server)/\(ownName)"
    bookKey = key
    lostConnections = JackConnectionBook.shared.take(key: key)
    if lostConnections.isEmpty {
      lostConnections = JackConnectionBook.shared.takeSole(server: server)
    }
    let context = Unmanaged.passUnretained(self).toOpaque()
    _ = api.pointee.jack_set_port_connect_callback(client, jackPortConnect, context)
    _ = api.pointee.jack_set_port_registration_callback(client, jackPortRegistration, context)
    _ = api.pointee.jack_set_process_callback(client, jackProcess, context)
    _ = api.pointee.jack_set_xrun_callback(client, jackXrun, context)
    _ = api.pointee.jack_set_buffer_size_callback(client, jackBufferSize, context)
    _ = api.pointee.jack_set_sample_rate_callback(client, jackSampleRate, context)
    api.pointee.jack_on_info_shutdown(client, jackShutdown, context)
    let period = Int(api.pointee.jack_get_buffer_size(client))
    bufferFrames.store(period, ordering: .relaxed)
    return GrantedConfiguration(
      sampleRate: rate, periodFrames: period, inputPeriodCount: inputs > 0 ? 1 : 0,
      outputPeriodCount: outputs > 0 ? 1 : 0, inputFormat: inputs > 0 ? .float : nil,
      outputFormat: outputs > 0 ? .float : nil, inputChannelCount: inputs,
      outputChannelCount: outputs, isLinked: true, maximumPeriodFrames: Self.maximumCycleFrames,
      isServerCycle: true)
  }

  private func noPorts(_ pattern: String, direction: String) -> DuplexError {
    DuplexError(
      .unknownDevice, operation: "open", device: "jack:\(pattern)", code: ENOENT,
      reason: "no JACK audio \(direction) port matches '\(pattern)'")
  }

  /// Registers `count` ports named PREFIX_1….
  private func register(_ count: Int, prefix: String, flags: JackPortFlags) throws(DuplexError)
    -> PortSet
  {
    let ports = PortSet(count: count)
    guard let jack, let client else { return ports }
    for index in 0..<count {
      guard
        let port = jack.pointee.jack_port_register(
          client, "\(prefix)_\(index + 1)", micloop_jack_audio_type(), UInt(flags.rawValue), 0)
      else {
        throw DuplexError(
          .failed, operation: "register the port \(prefix)_\(index + 1) of", device: deviceName,
          code: EBUSY)
      }
      ports.handles[index] = port
    }
    return ports
  }

  public func start(calling handler: any ServerCycleHandler) -> IOResult {
    guard let jack, let client else { return .failed(ENODEV) }
    self.handler = handler
    hasCycled = false
    framesSinceLoss = Int.max / 2
    seenXruns = xruns.load(ordering: .relaxed)
    pendingLostFrames = 0
    guard jack.pointee.jack_activate(client) == 0 else { return .failed(EIO) }
    isActive.store(true, ordering: .releasing)
    // Connected before the unit's first period, which is then heard.
    connect(capturePorts, to: captureTarget, serverFlags: JackPortIsOutput, isCapture: true)
    connect(playbackPorts, to: playbackTarget, serverFlags: JackPortIsInput, isCapture: false)
    if !lostConnections.isEmpty {
      restorer = JackConnectionRestorer(
        lostConnections, timeout: Self.restoreTimeout, portsAppeared: portsAppeared,
        connect: { [unowned self] in restore($0) },
        describe: { [unowned self] in $0.description(client: ownName) })
      lostConnections = []
    }
    isStarted.store(true, ordering: .releasing)
    return .ready
  }

  /// The client's name as the server gave it.
  private var ownName: String {
    guard let jack, let client, let name = jack.pointee.jack_get_client_name(client) else {
      return Self.clientName
    }
    return String(cString: name)
  }

  /// Makes `connection` again (the restorer's thread): true when both its
  /// ports exist and they are connected now.
  private func restore(_ connection: JackPortConnection) -> Bool {
    guard let jack, let client else { return false }
    let name = ownName
    guard connection.isRestorable(asClient: name) else { return false }
    let output = connection.output.name(client: name)
    let input = connection.input.name(client: name)
    guard jack.pointee.jack_port_by_name(client, output) != nil,
      jack.pointee.jack_port_by_name(client, input) != nil
    else { return false }
    let result = jack.pointee.jack_connect(client, output, input)
    return result == 0 || result == EEXIST
  }

  /// What the restorer did with a lost client's connections, once it is done.
  public func takeRestoredConnections() -> RestoredConnections? {
    restorer?.takeReport()
  }

  /// Connects the client's ports as the device name asked; a connection
  /// that already exists is fine, one the server refuses is left out.
  private func connect(
    _ ports: PortSet, to target: DeviceRoute.PortTarget, serverFlags: JackPortFlags,
    isCapture: Bool
  ) {
    guard let jack, let client, ports.count > 0 else { return }
    let names: [String]
    switch target {
    case .none: return
    case .automatic:
      names = serverPorts(
        matching: nil, flags: JackPortFlags(serverFlags.rawValue | JackPortIsPhysical.rawValue))
    case .named(let pattern): names = serverPorts(matching: pattern, flags: serverFlags)
    }
    let own = jack.pointee.jack_get_client_name(client).map { String(cString: $0) + ":" } ?? ":"
    let others = names.filter { !$0.hasPrefix(own) }
    let pairs = portPairs(
      clientPorts: ports.count, serverPorts: others.count,
      fansOut: !isCapture && target == .automatic)
    for (mine, theirs) in pairs {
      guard let port = ports.handles[mine], let full = jack.pointee.jack_port_name(port) else {
        continue
      }
      let name = String(cString: full)
      if isCapture {
        _ = jack.pointee.jack_connect(client, others[theirs], name)
      } else {
        _ = jack.pointee.jack_connect(client, name, others[theirs])
      }
    }
  }

  /// The names of the server's audio ports with `flags` whose names match
  /// `pattern` (all when `nil`), in the server's order.
  private func serverPorts(matching pattern: String?, flags: JackPortFlags) -> [String] {
    guard let jack, let client,
      let list = jack.pointee.jack_get_ports(
        client, pattern, micloop_jack_audio_type(), UInt(flags.rawValue))
    else { return [] }
    defer { jack.pointee.jack_free(UnsafeMutableRawPointer(mutating: list)) }
    var names = [String]()
    var index = 0
    while let name = list[index] {
      names.append(String(cString: name))
      index += 1
    }
    return names
  }

  public var isServerThreadRealtime: Bool {
    guard let jack, let client else { return false }
    return jack.pointee.jack_is_realtime(client) != 0
  }

  public func serverLatency() -> ServerLatency? {
    guard let jack, client != nil else { return nil }
    func range(_ ports: PortSet, _ mode: JackLatencyCallbackMode) -> ClosedRange<Int> {
      var low = Int.max
      var high = 0
      for index in 0..<ports.count {
        guard let port = ports.handles[index] else { continue }
        var latency = jack_latency_range_t()
        jack.pointee.jack_port_get_latency_range(port, mode, &latency)
        low = min(low, Int(latency.min))
        high = max(high, Int(latency.max))
      }
      return low == .max ? 0...0 : low...max(low, high)
    }
    return ServerLatency(
      capture: range(capturePorts, JackCaptureLatency),
      playback: range(playbackPorts, JackPlaybackLatency))
  }

  /// Deactivates the client (not after the server ended it): no cycle runs
  /// once this returns. JACK drops the client's connections only here.
  public func halt() {
    // Connections still waiting for their ports when the server is lost
    // again are the next client's to make.
    if let unfinished = restorer?.stop(wakingWith: portsAppeared), let bookKey,
      hasEnded.load(ordering: .acquiring)
    {
      for connection in unfinished {
        JackConnectionBook.shared.note(connection, isConnected: true, key: bookKey)
      }
    }
    isStarted.store(false, ordering: .releasing)
    guard isActive.exchange(false, ordering: .acquiringAndReleasing) else { return }
    guard let jack, let client, !hasEnded.load(ordering: .acquiring) else { return }
    _ = jack.pointee.jack_deactivate(client)
  }

  /// Lets a few cycles pass in silence so the last period rendered is played.
  public func drain() {
    guard isActive.load(ordering: .acquiring), !hasEnded.load(ordering: .acquiring) else {
      return
    }
    let target = cycles.load(ordering: .acquiring) + Self.drainCycles
    let deadline = MonotonicClock.seconds + 1
    while cycles.load(ordering: .acquiring) < target && MonotonicClock.seconds < deadline
      && !hasEnded.load(ordering: .acquiring)
    {
      usleep(1_000)
    }
  }

  /// Closes the client. One the server ended is left open (libjack 1.9.21
  /// crashes closing a client whose server died and came back), and so is
  /// this backend, which its callbacks still name.
  public func close() { close(keepingEndedClient: true) }

  private func close(keepingEndedClient: Bool) {
    halt()
    if let jack, let client {
      if !hasEnded.load(ordering: .acquiring) {
        _ = jack.pointee.jack_client_close(client)
        // Closed on purpose: its connections are not to be made again.
        if let bookKey { JackConnectionBook.shared.forget(key: bookKey) }
      } else if keepingEndedClient {
        _ = Unmanaged.passRetained(self)
      }
    }
    client = nil
    capturePorts = PortSet()
    playbackPorts = PortSet()
  }

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    if hasEnded.load(ordering: .acquiring) {
      let reason = String(cString: endReason)
      return DuplexError(
        .deviceLost, operation: "run", device: deviceName, code: code,
        reason: reason.isEmpty ? "the JACK server shut down" : reason)
    }
    return DuplexError(.failed, operation: operation.description, device: deviceName, code: code)
  }

  // MARK: Not used by a callback-driven backend

  public func start() -> IOResult { .failed(EINVAL) }
  public func waitForPeriod() -> IOResult { .failed(EINVAL) }
  public func recover() -> IOResult { .ready }
  public func wake() {}
  public func outputDelay() -> Int { 0 }

  // MARK: The server's threads

  public func hostTime() -> UInt64 { cycleTime }

  /// One JACK cycle (the process thread): take the port buffers, tell the
  /// unit what was lost since the last cycle, run its period, and play
  /// silence if it wrote nothing.
  fileprivate func process(frames: Int) {
    guard let jack, let client else { return }
    let count = jack_nframes_t(frames)
    for index in 0..<capturePorts.count {
      capturePorts.buffers[index] = jack.pointee.jack_port_get_buffer(
        capturePorts.handles[index], count)?.assumingMemoryBound(to: Float.self)
    }
    for index in 0..<playbackPorts.count {
      playbackPorts.buffers[index] = jack.pointee.jack_port_get_buffer(
        playbackPorts.handles[index], count)?.assumingMemoryBound(to: Float.self)
    }
    let frameTime = jack.pointee.jack_last_frame_time(client)
    var lost = pendingLostFrames
    pendingLostFrames = 0
    if hasCycled {
      // Frames the graph ran past this client since its last cycle.
      let advanced = Int(frameTime &- lastFrameTime)
      if advanced > lastFrames { lost += advanced - lastFrames }
    }
    hasCycled = true
    lastFrameTime = frameTime
    lastFrames = frames
    cycleTime = UInt64(jack.pointee.jack_frames_to_time(client, frameTime)) &* 1_000
    // JACK sends an xrun notice for every cycle a stall spans, some of them
    // cycles later, from another thread: notices and frame jumps within
    // `xrunMergeSeconds` of a loss already counted are part of it.
    let reported = xruns.load(ordering: .relaxed)
    var losses = CycleLosses(lostFrames: lost)
    if reported != seenXruns || lost > 0 {
      if framesSinceLoss >= Int(Self.xrunMergeSeconds * Double(sampleRate)) { losses.xruns = 1 }
      framesSinceLoss = 0
    } else {
      framesSinceLoss += frames
    }
    seenXruns = reported
    hasWritten = false
    if frames <= Self.maximumCycleFrames, isStarted.load(ordering: .acquiring), let handler {
      handler.runCycle(frames: frames, losses: losses)
    } else if frames > Self.maximumCycleFrames {
      pendingLostFrames += frames
    }
    if !hasWritten {
      for index in 0..<playbackPorts.count {
        playbackPorts.buffers[index]?.update(repeating: 0, count: frames)
      }
    }
    cycles.add(1, ordering: .releasing)
  }

  /// Interleaves the capture ports' period into `destination` (Float).
  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    capturePorts.interleave(into: destination.assumingMemoryBound(to: Float.self), frames: frames)
    return .ready
  }

  /// Spreads the interleaved period in `source` (Float) over the playback ports.
  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    playbackPorts.spread(source.assumingMemoryBound(to: Float.self), frames: frames)
    hasWritten = true
    return .ready
  }

  /// The server ended the client (its own thread, or the process thread;
  /// no allocation): remember why, then end the unit's loop.
  fileprivate func serverEnded(reason: UnsafePointer<CChar>?) {
    if let reason, !hasEnded.load(ordering: .acquiring) {
      strncpy(endReason, reason, Self.endReasonCapacity - 1)
    }
    hasEnded.store(true, ordering: .releasing)
    if isActive.load(ordering: .acquiring), let handler { handler.serverEnded(code: ECONNRESET) }
  }

  fileprivate func noteXrun() { xruns.add(1, ordering: .relaxed) }

  /// A connection was made or broken (JACK's notification thread): one
  /// that involves the client's own ports goes into the book.
  fileprivate func noteConnection(_ first: jack_port_id_t, _ second: jack_port_id_t, isMade: Bool) {
    guard let jack, let client, let bookKey,
      let one = jack.pointee.jack_port_by_id(client, first),
      let other = jack.pointee.jack_port_by_id(client, second)
    else { return }
    let isOutput = jack.pointee.jack_port_flags(one) & Int32(JackPortIsOutput.rawValue) != 0
    let (output, input) = isOutput ? (one, other) : (other, one)
    func end(_ port: OpaquePointer) -> JackPortConnection.End? {
      if jack.pointee.jack_port_is_mine(client, port) != 0 {
        return jack.pointee.jack_port_short_name(port).map { .own(String(cString: $0)) }
      }
      return jack.pointee.jack_port_name(port).map { .other(String(cString: $0)) }
    }
    guard let outputEnd = end(output), let inputEnd = end(input) else { return }
    if case .other = outputEnd, case .other = inputEnd { return }
    JackConnectionBook.shared.note(
      JackPortConnection(output: outputEnd, input: inputEnd), isConnected: isMade, key: bookKey)
  }

  /// A port was registered (JACK's notification thread): a connection
  /// waiting for it may be made now.
  fileprivate func notePortRegistered() { portsAppeared.signal() }

  fileprivate func noteBufferSize(_ frames: Int) { bufferFrames.store(frames, ordering: .relaxed) }

  /// The server's rate changed under a running client: its periods no
  /// longer mean what the client was prepared for, so the unit ends as if
  /// the device went away (a reconnect opens it at the new rate).
  fileprivate func noteSampleRate(_ rate: Int) {
    guard rate != sampleRate, sampleRate != 0, !hasEnded.load(ordering: .acquiring) else { return }
    let reason = "the JACK server's sample rate changed to \(rate) Hz"
    reason.withCString { serverEnded(reason: $0) }
  }
}

/// JACK's ports of one direction.
private typealias PortSet = ServerPorts<OpaquePointer>

// The callbacks JACK calls, with the backend as their argument.

private func backend(_ argument: UnsafeMutableRawPointer?) -> JackBackend {
  Unmanaged<JackBackend>.fromOpaque(argument!).takeUnretainedValue()
}

private let jackProcess: JackProcessCallback = { frames, argument in
  backend(argument).process(frames: Int(frames))
  return 0
}

private let jackXrun: JackXRunCallback = { argument in
  backend(argument).noteXrun()
  return 0
}

private let jackPortConnect: JackPortConnectCallback = { first, second, isMade, argument in
  backend(argument).noteConnection(first, second, isMade: isMade != 0)
}

private let jackPortRegistration: JackPortRegistrationCallback = { _, isRegistered, argument in
  if isRegistered != 0 { backend(argument).notePortRegistered() }
}

private let jackBufferSize: JackBufferSizeCallback = { frames, argument in
  backend(argument).noteBufferSize(Int(frames))
  return 0
}

private let jackSampleRate: JackSampleRateCallback = { rate, argument in
  backend(argument).noteSampleRate(Int(rate))
  return 0
}

private let jackShutdown: JackInfoShutdownCallback = { _, reason, argument in
  backend(argument).serverEnded(reason: reason)
}
