internal import CPipeWire
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The PipeWire backend: one `pw_filter` node ("micloop") with DSP ports
/// `capture_1…N` (inputs) and `playback_1…N` (outputs), processed on
/// PipeWire's real-time data thread (`PW_FILTER_FLAG_RT_PROCESS`, in a
/// context of the client-rt configuration: Debian 12's default client
/// configuration gives the data thread no real-time priority). Its process
/// callback runs the unit's period, input then output, in the same graph
/// cycle, so the node adds no latency to a loop through it.
///
/// - The quantum asked for (`periodFrames`) is requested with
///   `node.force-quantum` (and `node.latency`); the period granted is the
///   one the graph then runs, and a change while running is followed cycle
///   by cycle (every buffer holds `maximumCycleFrames`).
/// - Losses are seen where PipeWire's ALSA plugin sees none: a jump of the
///   graph clock's position (`spa_io_position.clock.position`) past the
///   last cycle's end means cycles ran without this node, and a linked
///   input that has delivered and then brings no buffer lost that cycle;
///   both are reported with their length (`CycleLosses`).
/// - A server that goes away (the filter leaves the connected states)
///   ends the unit as a lost device.
/// - Ports link as the device name says (`DeviceRoute`): the default source
///   and sink (the session manager's "default" metadata), none, or a node
///   by name; links are made through the server's link factory.
///
/// libpipewire is loaded with `dlopen` (`PipeWireLibrary`). The process
/// callback never allocates, locks or logs. Control thread for everything
/// but the cycle; filter events arrive on PipeWire's loop thread.
public final class PipeWireBackend: DuplexBackend, @unchecked Sendable {
  /// The most frames a cycle may hold; every buffer is allocated for it.
  public static let maximumCycleFrames = 8192
  /// The node name asked for; a second micloop node gets "micloop-2" ….
  public static let nodeName = "micloop"
  /// Cycles `drain` lets pass in silence so the last period is played.
  static let drainCycles = 4
  /// Seconds `open` waits for the node to be set up and run its first cycle.
  static let setUpTimeout = 5.0
  /// Seconds `start` waits for the links it made to carry buffers; past
  /// it the unit starts anyway (a peer that is late is not an error).
  static let linkTimeout = 3.0
  /// The failure code of a graph whose sample rate changed under the unit.
  static let rateChangedCode = EDOM

  /// The server's socket (a path, or a name in `XDG_RUNTIME_DIR`); `nil`
  /// for PipeWire's choice (`PIPEWIRE_REMOTE`, or "pipewire-0").
  public let remote: String?
  var connection: PipeWireConnection?
  var api: UnsafePointer<micloop_pw>?
  var filter: OpaquePointer?
  private let filterHook = PipeWireHook()
  private let filterEvents: UnsafeMutablePointer<micloop_pw_filter_events>
  var inputs = FilterPorts()
  var outputs = FilterPorts()
  var links = [OpaquePointer]()
  /// The latency the graph reports for the ports (PipeWire's loop thread,
  /// read under the loop's lock).
  private var latencies = PipeWirePortLatencies(inputCount: 0, outputCount: 0)
  private var deviceName = "pw"
  private var sampleRate = 0
  private var captureTarget = DeviceRoute.PortTarget.none
  private var playbackTarget = DeviceRoute.PortTarget.none

  // PipeWire's loop thread, read under the loop's lock.
  fileprivate var filterState = MICLOOP_PW_FILTER_STATE_UNCONNECTED
  fileprivate var filterError: String?

  // Audio thread (PipeWire's data thread) only.
  private unowned(unsafe) var handler: (any ServerCycleHandler)?
  private var lastPosition: UInt64 = 0
  private var lastDuration: UInt64 = 0
  private var lastClock: UInt32 = 0
  private var hasCycled = false
  private var deliveredInputs: UInt64 = 0
  private var cycleTime: UInt64 = 0
  private var hasWritten = false

  // Any thread.
  private let isStarted = Atomic<Bool>(false)
  private let isInCycle = Atomic<Bool>(false)
  private let hasEnded = Atomic<Bool>(false)
  private let cycles = Atomic<Int>(0)
  private let graphQuantum = Atomic<Int>(0)
  private let graphRate = Atomic<Int>(0)
  /// Inputs with a link (bit per port), as the registry's links say.
  let linkedInputs = Atomic<UInt64>(0)
  /// The ports `start` linked (inputs in the low bits of the first,
  /// outputs of the second), and whether a cycle has had a buffer on each.
  private let awaitedInputs = Atomic<UInt64>(0)
  private let awaitedOutputs = Atomic<UInt64>(0)
  private let areLinksFlowing = Atomic<Bool>(false)
  /// Whether the data thread runs real-time: 0 unknown, 1 no, 2 yes.
  private let realtimeState = Atomic<Int>(0)

  public init(remote: String? = nil) {
    self.remote = remote
    filterEvents = .allocate(capacity: 1)
    filterEvents.initialize(
      to: micloop_pw_filter_events(
        version: 1, destroy: nil, state_changed: pipeWireFilterState,
        io_changed: nil, param_changed: pipeWireFilterParam, add_buffer: nil, remove_buffer: nil,
        process: pipeWireFilterProcess, drained: nil, command: nil))
  }

  deinit {
    close()
    filterEvents.deallocate()
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
    let connection = try PipeWireConnection(realtime: true, device: deviceName, remote: remote)
    self.connection = connection
    api = connection.api
    connection.onGraphChange = { [unowned self] in noteLinks() }
    do throws(DuplexError) {
      return try configure(connection, configuration)
    } catch {
      close()
      throw error
    }
  }

  private static func target(_ route: DeviceRoute?, name: String) throws(DuplexError)
    -> DeviceRoute.PortTarget?
  {
    guard let route else { return nil }
    guard case .pipeWire(let target) = route else {
      throw DuplexError(
        .unknownDevice, operation: "open", device: name, code: ENODEV,
        reason: "not a PipeWire device name (pw, pw:none or pw:NODE)")
    }
    return target
  }

  private func configure(_ connection: PipeWireConnection, _ configuration: DuplexConfiguration)
    throws(DuplexError) -> GrantedConfiguration
  {
    let api = connection.api
    let inputCount = configuration.isInputEnabled ? configuration.inputChannelCount : 0
    let outputCount = configuration.isOutputEnabled ? configuration.outputChannelCount : 0
    // Targets that name nothing are mistakes to report now, not silence.
    _ = try targetNode(captureTarget, isCapture: true)
    _ = try targetNode(playbackTarget, isCapture: false)
    let name = uniqueNodeName(connection)
    let period = configuration.periodFrames
    let rate = configuration.sampleRate
    let created = connection.withLock { () -> Bool in
      guard
        let properties = pipeWireProperties(
          api,
          [
            "media.type": "Audio", "media.category": "Duplex", "media.role": "DSP",
            "node.name": name, "node.description": "micloop",
            "node.latency": "\(period)/\(rate)", "node.force-quantum": "\(period)",
            "node.rate": "1/\(rate)", "node.always-process": "true",
          ]),
        let filter = api.pointee.filter_new(connection.core, name, properties)
      else { return false }
      self.filter = filter
      api.pointee.filter_add_listener(
        filter, filterHook.hook, filterEvents, Unmanaged.passUnretained(self).toOpaque())
      latencies = PipeWirePortLatencies(inputCount: inputCount, outputCount: outputCount)
      inputs = addPorts(inputCount, prefix: "capture", direction: 0, filter: filter, api: api)
      outputs = addPorts(outputCount, prefix: "playback", direction: 1, filter: filter, api: api)
      let flags = MICLOOP_PW_FILTER_FLAG_RT_PROCESS | MICLOOP_PW_FILTER_FLAG_CUSTOM_LATENCY
      return api.pointee.filter_connect(filter, flags, nil, 0) == 0
    }
    guard created, inputs.count == inputCount, outputs.count == outputCount else {
      throw DuplexError(
        .setUpRefused, operation: "create the PipeWire node for", device: deviceName, code: EIO)
    }
    // Running once the node has had its first cycle: its quantum and rate
    // are the graph's. The data thread cannot signal the loop, so look.
    let deadline = MonotonicClock.seconds + Self.setUpTimeout
    while graphQuantum.load(ordering: .acquiring) == 0 && MonotonicClock.seconds < deadline
      && connection.withLock({
        filterState != MICLOOP_PW_FILTER_STATE_ERROR && connection.serverError == nil
      })
    {
      usleep(2_000)
    }
    guard graphQuantum.load(ordering: .acquiring) > 0 else {
      let reason = connection.withLock { filterError ?? connection.serverError }
      throw DuplexError(
        .setUpRefused, operation: "run the PipeWire node for", device: deviceName, code: EIO,
        reason: reason ?? "the graph never ran it")
    }
    let graphRate = graphRate.load(ordering: .acquiring)
    guard graphRate == rate else {
      throw DuplexError(
        .rateUnavailable, operation: "set the rate of", device: deviceName, value: "\(rate) Hz",
        code: EINVAL, reason: "the PipeWire graph runs at \(graphRate) Hz")
    }
    sampleRate = rate
    return GrantedConfiguration(
      sampleRate: rate, periodFrames: graphQuantum.load(ordering: .acquiring),
      inputPeriodCount: inputCount > 0 ? 1 : 0, outputPeriodCount: outputCount > 0 ? 1 : 0,
      inputFormat: inputCount > 0 ? .float : nil, outputFormat: outputCount > 0 ? .float : nil,
      inputChannelCount: inputCount, outputChannelCount: outputCount, isLinked: true,
      maximumPeriodFrames: Self.maximumCycleFrames, isServerCycle: true)
  }

  /// Adds `count` mono float ports PREFIX_1… (loop lock held); each port's
  /// user data holds its `FilterPortTag`, for the parameter events.
  private func addPorts(
    _ count: Int, prefix: String, direction: UInt32, filter: OpaquePointer,
    api: UnsafePointer<micloop_pw>
  ) -> FilterPorts {
    let ports = FilterPorts(count: count)
    for index in 0..<count {
      let properties = pipeWireProperties(
        api, ["format.dsp": "32 bit float mono audio", "port.name": "\(prefix)_\(index + 1)"])
      guard
        let data = api.pointee.filter_add_port(
          filter, direction, MICLOOP_PW_FILTER_PORT_FLAG_MAP_BUFFERS, MemoryLayout<Int>.size,
          properties, nil, 0)
      else { return FilterPorts() }
      let tag: FilterPortTag = direction == 0 ? .input(index) : .output(index)
      data.storeBytes(of: tag.storedValue, as: Int.self)
      ports.handles[index] = data
    }
    return ports
  }

  /// Links the ports, waits until a cycle has carried buffers on every
  /// port it linked (a link the server made is not yet one that flows),
  /// then hands the cycles to the unit: its first period is already heard.
  public func start(calling handler: any ServerCycleHandler) -> IOResult {
    guard filter != nil, let connection else { return .failed(ENODEV) }
    self.handler = handler
    areLinksFlowing.store(false, ordering: .sequentiallyConsistent)
    awaitedInputs.store(0, ordering: .relaxed)
    awaitedOutputs.store(0, ordering: .relaxed)
    let inputs = link(inputs, to: captureTarget, isCapture: true)
    let outputs = link(outputs, to: playbackTarget, isCapture: false)
    _ = connection.roundTrip()
    // Outputs first: a cycle that sees the inputs also sees the outputs.
    awaitedOutputs.store(outputs, ordering: .releasing)
    awaitedInputs.store(inputs, ordering: .releasing)
    let deadline = MonotonicClock.seconds + Self.linkTimeout
    while inputs | outputs != 0 && !areLinksFlowing.load(ordering: .sequentiallyConsistent)
      && MonotonicClock.seconds < deadline
      && connection.withLock({
        filterState != MICLOOP_PW_FILTER_STATE_ERROR && connection.serverError == nil
      })
    {
      usleep(2_000)
    }
    isStarted.store(true, ordering: .sequentiallyConsistent)
    return .ready
  }

  public var isServerThreadRealtime: Bool { realtimeState.load(ordering: .acquiring) == 2 }

  /// The latency the graph set on the ports (`PipeWirePortLatencies`), in
  /// frames at the quantum and rate the graph runs now: capture from the
  /// linked sources' hardware to the inputs, playback from the outputs to the
  /// linked sinks' hardware, 0 where nothing is linked.
  public func serverLatency() -> ServerLatency? {
    guard let connection, filter != nil else { return nil }
    let quantum = graphQuantum.load(ordering: .acquiring)
    let rate = graphRate.load(ordering: .acquiring)
    return connection.withLock { latencies.frames(quantum: quantum, rate: rate) }
  }

  /// Stops calling the unit (no cycle runs the unit once this returns) and
  /// removes the links this node made; the node stays, playing silence.
  public func halt() {
    isStarted.store(false, ordering: .sequentiallyConsistent)
    let deadline = MonotonicClock.seconds + 1
    while isInCycle.load(ordering: .sequentiallyConsistent) && MonotonicClock.seconds < deadline {
      usleep(100)
    }
    guard let connection, let api, !links.isEmpty else { return }
    connection.withLock {
      for proxy in links { api.pointee.proxy_destroy(proxy) }
    }
    links = []
  }

  /// Lets a few cycles pass in silence so the last period rendered is played.
  public func drain() {
    guard filter != nil, !hasEnded.load(ordering: .acquiring) else { return }
    let target = cycles.load(ordering: .acquiring) + Self.drainCycles
    let deadline = MonotonicClock.seconds + 1
    while cycles.load(ordering: .acquiring) < target && MonotonicClock.seconds < deadline {
      usleep(1_000)
    }
  }

  public func close() {
    halt()
    if let connection, let api, let filter {
      connection.withLock {
        filterHook.remove()
        api.pointee.filter_destroy(filter)
      }
    }
    filter = nil
    connection?.close()
    connection = nil
    inputs = FilterPorts()
    outputs = FilterPorts()
  }

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    if code == Self.rateChangedCode {
      return DuplexError(
        .deviceLost, operation: "run", device: deviceName, code: code,
        reason: "the PipeWire graph's rate changed to \(graphRate.load(ordering: .acquiring)) Hz")
    }
    if hasEnded.load(ordering: .acquiring) {
      let reason = connection?.withLock { filterError ?? connection?.serverError }
      return DuplexError(
        .deviceLost, operation: "run", device: deviceName, code: code,
        reason: reason ?? "the PipeWire server went away")
    }
    return DuplexError(.failed, operation: operation.description, device: deviceName, code: code)
  }

  // MARK: Not used by a callback-driven backend

  public func start() -> IOResult { .failed(EINVAL) }
  public func waitForPeriod() -> IOResult { .failed(EINVAL) }
  public func recover() -> IOResult { .ready }
  public func wake() {}
  public func outputDelay() -> Int { 0 }

  // MARK: PipeWire's threads

  public func hostTime() -> UInt64 { cycleTime }

  /// One graph cycle (the data thread): take the port buffers, find what
  /// was lost since the last cycle, run the unit's period, and play silence
  /// if it wrote nothing.
  fileprivate func process(_ position: UnsafeMutablePointer<spa_io_position>?) {
    isInCycle.store(true, ordering: .sequentiallyConsistent)
    defer { isInCycle.store(false, ordering: .releasing) }
    guard let position, let api else { return }
    let duration = position.pointee.clock.duration
    let frames = Int(duration)
    guard frames > 0, frames <= Self.maximumCycleFrames else { return }
    let linked = linkedInputs.load(ordering: .acquiring)
    var isMissing = false
    for index in 0..<inputs.count {
      let buffer = api.pointee.filter_get_dsp_buffer(inputs.handles[index], UInt32(frames))
      inputs.buffers[index] = buffer?.assumingMemoryBound(to: Float.self)
      let bit: UInt64 = 1 << UInt64(index)
      if buffer != nil {
        deliveredInputs |= bit
      } else if linked & deliveredInputs & bit != 0 {
        isMissing = true
      }
    }
    // A port unlinked forgets it delivered: its next link starts afresh.
    deliveredInputs &= linked
    for index in 0..<outputs.count {
      outputs.buffers[index] = api.pointee.filter_get_dsp_buffer(
        outputs.handles[index], UInt32(frames))?.assumingMemoryBound(to: Float.self)
    }
    if !areLinksFlowing.load(ordering: .relaxed) { noteFlowingLinks() }
    let clock = position.pointee.clock.position
    let clockID = position.pointee.clock.id
    var lost = 0
    if hasCycled, clockID == lastClock, clock > lastPosition &+ lastDuration {
      lost = Int(clock - lastPosition - lastDuration)
    }
    hasCycled = true
    lastPosition = clock
    lastDuration = duration
    lastClock = clockID
    if isMissing { lost += frames }
    let rate = Int(position.pointee.clock.rate.denom)
    graphRate.store(rate, ordering: .relaxed)
    graphQuantum.store(frames, ordering: .releasing)
    cycleTime = position.pointee.clock.nsec
    if realtimeState.load(ordering: .relaxed) == 0 { noteThreadPriority() }
    hasWritten = false
    if isStarted.load(ordering: .sequentiallyConsistent), let handler {
      if rate != sampleRate {
        if !hasEnded.exchange(true, ordering: .acquiringAndReleasing) {
          handler.serverEnded(code: Self.rateChangedCode)
        }
      } else {
        handler.runCycle(
          frames: frames, losses: CycleLosses(xruns: lost > 0 ? 1 : 0, lostFrames: lost))
      }
    }
    if !hasWritten {
      for index in 0..<outputs.count { outputs.buffers[index]?.update(repeating: 0, count: frames) }
    }
    cycles.add(1, ordering: .releasing)
  }

  /// Notes when every port `start` linked has a buffer this cycle.
  private func noteFlowingLinks() {
    var inputsWithBuffers: UInt64 = 0
    for index in 0..<min(inputs.count, 64) where inputs.buffers[index] != nil {
      inputsWithBuffers |= 1 << UInt64(index)
    }
    var outputsWithBuffers: UInt64 = 0
    for index in 0..<min(outputs.count, 64) where outputs.buffers[index] != nil {
      outputsWithBuffers |= 1 << UInt64(index)
    }
    let inputs = awaitedInputs.load(ordering: .acquiring)
    let outputs = awaitedOutputs.load(ordering: .acquiring)
    if inputs | outputs != 0, inputsWithBuffers & inputs == inputs,
      outputsWithBuffers & outputs == outputs
    {
      areLinksFlowing.store(true, ordering: .sequentiallyConsistent)
    }
  }

  /// Notes once whether the data thread runs with a real-time policy.
  private func noteThreadPriority() {
    var policy: Int32 = 0
    var parameters = sched_param()
    pthread_getschedparam(pthread_self(), &policy, &parameters)
    let isRealtime = policy == SCHED_FIFO || policy == SCHED_RR
    realtimeState.store(isRealtime ? 2 : 1, ordering: .releasing)
  }

  /// Interleaves the input ports' period into `destination` (Float); a
  /// port without a buffer this cycle gives silence.
  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    inputs.interleave(into: destination.assumingMemoryBound(to: Float.self), frames: frames)
    return .ready
  }

  /// Spreads the interleaved period in `source` (Float) over the output ports.
  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    outputs.spread(source.assumingMemoryBound(to: Float.self), frames: frames)
    hasWritten = true
    return .ready
  }

  /// The filter's state changed (loop thread): leaving the connected
  /// states while started means the server went away.
  fileprivate func noteState(_ state: Int32, error: UnsafePointer<CChar>?) {
    filterState = state
    if let error { filterError = String(cString: error) }
    if state == MICLOOP_PW_FILTER_STATE_ERROR || state == MICLOOP_PW_FILTER_STATE_UNCONNECTED,
      isStarted.load(ordering: .acquiring), let handler,
      !hasEnded.exchange(true, ordering: .acquiringAndReleasing)
    {
      handler.serverEnded(code: EPIPE)
    }
    if let api, let connection { api.pointee.thread_loop_signal(connection.loop, false) }
  }

  /// A port's parameter changed (loop thread): a Latency parameter is
  /// kept, and what it changes is passed on through the node.
  fileprivate func noteParameter(
    port: UnsafeMutableRawPointer?, id: UInt32, parameter: UnsafePointer<spa_pod>?
  ) {
    var info = spa_latency_info()
    guard let port, let api, let filter, micloop_pw_parse_latency(id, parameter, &info),
      let (passedOn, publishOnInputs) = latencies.note(
        info, on: FilterPortTag(storedValue: port.load(as: Int.self)))
    else { return }
    var combined = passedOn
    let ports = publishOnInputs ? inputs : outputs
    for index in 0..<ports.count {
      guard let data = ports.handles[index] else { continue }
      _ = micloop_pw_filter_publish_latency(api, filter, data, &combined)
    }
  }
}

/// A PipeWire filter's ports of one direction (each handle is the port's
/// user data).
typealias FilterPorts = ServerPorts<UnsafeMutableRawPointer>

/// Runs `body` with a SPA dictionary of `pairs` (C strings alive during the call).
func withPipeWireDictionary<Result>(
  _ pairs: [(String, String)], _ body: (UnsafePointer<spa_dict>) -> Result
) -> Result {
  let strings = pairs.map { (strdup($0.0)!, strdup($0.1)!) }
  defer {
    for (key, value) in strings {
      free(key)
      free(value)
    }
  }
  let items = strings.map { spa_dict_item(key: $0.0, value: $0.1) }
  return items.withUnsafeBufferPointer { buffer in
    var dictionary = spa_dict(flags: 0, n_items: UInt32(buffer.count), items: buffer.baseAddress)
    return body(&dictionary)
  }
}

private func backend(_ data: UnsafeMutableRawPointer?) -> PipeWireBackend {
  Unmanaged<PipeWireBackend>.fromOpaque(data!).takeUnretainedValue()
}

private let pipeWireFilterState:
  @convention(c) (UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<CChar>?) -> Void = {
    data, _, state, error in
    backend(data).noteState(state, error: error)
  }

private let pipeWireFilterParam:
  @convention(c) (
    UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UInt32, UnsafePointer<spa_pod>?
  )
    -> Void = { data, port, id, parameter in
      backend(data).noteParameter(port: port, id: id, parameter: parameter)
    }

private let pipeWireFilterProcess:
  @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<spa_io_position>?) -> Void = {
    data, position in
    backend(data).process(position)
  }
