internal import CPipeWire

#if canImport(Glibc)
  import Glibc
#endif

/// A connection to the PipeWire server (`PIPEWIRE_REMOTE`, or the socket
/// in `XDG_RUNTIME_DIR`): a thread loop where PipeWire's events arrive, a
/// context, the core, and what the registry says exists (nodes, ports, the
/// default source and sink). The control thread calls into PipeWire only
/// while it holds the loop's lock (`withLock`); the event handlers run on
/// the loop's thread, which holds it too, so the state they keep needs no
/// other lock. Control thread.
final class PipeWireConnection {
  /// An object the registry announced (nodes, ports, links and metadata only).
  struct Global {
    let type: String
    let properties: [String: String]

    subscript(_ key: String) -> String? { properties[key] }
  }

  static let nodeType = "PipeWire:Interface:Node"
  static let portType = "PipeWire:Interface:Port"
  static let metadataType = "PipeWire:Interface:Metadata"
  static let linkType = "PipeWire:Interface:Link"

  let api: UnsafePointer<micloop_pw>
  let loop: OpaquePointer
  private var context: OpaquePointer?
  private(set) var core: OpaquePointer?
  private var registry: OpaquePointer?
  private var metadata: OpaquePointer?
  private let coreHook = PipeWireHook()
  private let registryHook = PipeWireHook()
  private let metadataHook = PipeWireHook()
  private let coreEvents: UnsafeMutablePointer<micloop_pw_core_events>
  private let registryEvents: UnsafeMutablePointer<micloop_pw_registry_events>
  private let metadataEvents: UnsafeMutablePointer<micloop_pw_metadata_events>
  private var isLoopRunning = false

  // Kept by the loop's thread, read under the lock.
  fileprivate(set) var globals = [UInt32: Global]()
  /// Node names the "default" metadata names: "default.audio.sink" → "spk".
  fileprivate(set) var defaults = [String: String]()
  fileprivate var lastDone: Int32 = -1
  /// What the server said when it broke the connection (it went away).
  fileprivate(set) var serverError: String?
  /// Called on the loop's thread when ports or links come or go.
  var onGraphChange: (() -> Void)?

  /// Connects; with `realtime`, PipeWire's data thread (where a filter's
  /// process callback runs) gets real-time priority from the client-rt
  /// configuration (Debian 12's default client configuration gives none).
  /// `remote` names the server's socket (a path, or a name in
  /// `XDG_RUNTIME_DIR`); `nil` for PipeWire's choice.
  init(realtime: Bool, device: String, remote: String? = nil) throws(DuplexError) {
    api = try PipeWireLibrary.load().api
    guard let loop = api.pointee.thread_loop_new("micloop-pipewire", nil) else {
      throw DuplexError(
        .failed, operation: "start PipeWire's loop for", device: device, code: ENOMEM)
    }
    self.loop = loop
    coreEvents = .allocate(capacity: 1)
    coreEvents.initialize(
      to: micloop_pw_core_events(
        version: 0, info: nil, done: pipeWireCoreDone, ping: nil, error: pipeWireCoreError,
        remove_id: nil, bound_id: nil, add_mem: nil, remove_mem: nil))
    registryEvents = .allocate(capacity: 1)
    registryEvents.initialize(
      to: micloop_pw_registry_events(
        version: 0, global: pipeWireGlobal, global_remove: pipeWireGlobalRemoved))
    metadataEvents = .allocate(capacity: 1)
    metadataEvents.initialize(
      to: micloop_pw_metadata_events(version: 0, property: pipeWireMetadataProperty))
    let properties = pipeWireProperties(
      api, ["config.name": realtime ? "client-rt.conf" : "client.conf"])
    context = api.pointee.context_new(api.pointee.thread_loop_get_loop(loop), properties, 0)
    guard context != nil else {
      close()
      throw DuplexError(
        .failed, operation: "create a PipeWire context for", device: device, code: errno)
    }
    guard api.pointee.thread_loop_start(loop) == 0 else {
      close()
      throw DuplexError(.failed, operation: "start PipeWire's loop for", device: device, code: EIO)
    }
    isLoopRunning = true
    let connected = withLock { () -> Bool in
      let properties = remote.flatMap { pipeWireProperties(api, ["remote.name": $0]) }
      guard let core = api.pointee.context_connect(context, properties, 0) else { return false }
      self.core = core
      let me = Unmanaged.passUnretained(self).toOpaque()
      _ = micloop_pw_core_add_listener(core, coreHook.hook, coreEvents, me)
      registry = micloop_pw_core_get_registry(core)
      if let registry {
        _ = micloop_pw_registry_add_listener(registry, registryHook.hook, registryEvents, me)
      }
      return true
    }
    guard connected, roundTrip() else {
      let code = errno
      close()
      throw DuplexError(
        .serverUnreachable, operation: "open", device: device,
        code: code == 0 ? ECONNREFUSED : code,
        reason: "no PipeWire server answers at \(remote ?? Self.socketDescription)")
    }
  }

  deinit {
    close()
    coreEvents.deallocate()
    registryEvents.deallocate()
    metadataEvents.deallocate()
  }

  /// Where the server is looked for, for messages.
  static var socketDescription: String {
    let remote = getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "pipewire-0"
    if remote.hasPrefix("/") { return remote }
    let directory = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR"
    return "\(directory)/\(remote)"
  }

  /// Runs `body` holding the loop's lock.
  func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure)
    -> Result
  {
    api.pointee.thread_loop_lock(loop)
    defer { api.pointee.thread_loop_unlock(loop) }
    return try body()
  }

  /// Waits, holding the lock, until `condition` holds (true) or `timeout`
  /// seconds pass or the server broke the connection (false). Event
  /// handlers signal the loop when they change something.
  func wait(timeout: Double, until condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.seconds + timeout
    while !condition() {
      let left = deadline - MonotonicClock.seconds
      guard left > 0, serverError == nil else { return false }
      _ = api.pointee.thread_loop_timed_wait(loop, Int32(left.rounded(.up)))
    }
    return true
  }

  /// Waits until the server has handled everything asked so far (and sent
  /// every event that follows from it): true, or false after `timeout`.
  func roundTrip(timeout: Double = 3) -> Bool {
    withLock { () -> Bool in
      guard let core else { return false }
      let sequence = micloop_pw_core_sync(core, 0)
      guard sequence >= 0 else { return false }
      return wait(timeout: timeout) { lastDone >= sequence }
    }
  }

  /// The node the "default" metadata names for `key` ("default.audio.sink",
  /// "default.audio.source"), once the session manager has set it.
  func defaultNode(_ key: String) -> String? {
    if metadata == nil {
      let bound = withLock { () -> Bool in
        guard let registry,
          let id = globals.first(where: {
            $0.value.type == Self.metadataType && $0.value["metadata.name"] == "default"
          })?.key,
          let proxy = micloop_pw_registry_bind_metadata(registry, id)
        else { return false }
        metadata = proxy
        _ = micloop_pw_metadata_add_listener(
          proxy, metadataHook.hook, metadataEvents, Unmanaged.passUnretained(self).toOpaque())
        return true
      }
      if bound { _ = roundTrip() }
    }
    return withLock { defaults[key] }
  }

  /// The nodes and ports now known (a copy, taken under the lock).
  func snapshot() -> [UInt32: Global] { withLock { globals } }

  /// Disconnects and stops the loop's thread.
  func close() {
    if isLoopRunning {
      withLock {
        metadataHook.remove()
        registryHook.remove()
        coreHook.remove()
        if let metadata { api.pointee.proxy_destroy(metadata) }
        if let registry { api.pointee.proxy_destroy(registry) }
        if let core { _ = api.pointee.core_disconnect(core) }
      }
      api.pointee.thread_loop_stop(loop)
      isLoopRunning = false
    }
    metadata = nil
    registry = nil
    core = nil
    if let context { api.pointee.context_destroy(context) }
    context = nil
    if !isDestroyed {
      api.pointee.thread_loop_destroy(loop)
      isDestroyed = true
    }
  }

  private var isDestroyed = false

  // MARK: The loop's thread

  fileprivate func signal() { api.pointee.thread_loop_signal(loop, false) }

  fileprivate func noteGlobal(_ id: UInt32, type: String, properties: [String: String]) {
    guard
      type == Self.nodeType || type == Self.portType || type == Self.linkType
        || type == Self.metadataType
    else { return }
    globals[id] = Global(type: type, properties: properties)
    if type == Self.portType || type == Self.linkType { onGraphChange?() }
    signal()
  }

  fileprivate func noteRemoved(_ id: UInt32) {
    let removed = globals.removeValue(forKey: id)
    if removed?.type == Self.portType || removed?.type == Self.linkType { onGraphChange?() }
    signal()
  }

  fileprivate func noteDone(_ sequence: Int32) {
    lastDone = max(lastDone, sequence)
    signal()
  }

  fileprivate func noteServerError(_ message: String) {
    serverError = message
    signal()
  }

  /// A default device's value is JSON: { "name": "alsa_output.pci…" }.
  fileprivate func noteDefault(_ key: String, value: String?) {
    guard key.hasPrefix("default.audio.") else { return }
    defaults[key] = value.flatMap(Self.jsonName)
    signal()
  }

  /// The "name" string of a small JSON object, as the metadata writes it.
  static func jsonName(_ json: String) -> String? {
    guard let key = json.firstRange(of: "\"name\"") else { return nil }
    let rest = json[key.upperBound...].drop { $0 == " " || $0 == ":" }
    guard rest.first == "\"" else { return nil }
    let name = rest.dropFirst().prefix { $0 != "\"" }
    return name.isEmpty ? nil : String(name)
  }
}

/// A listener hook PipeWire links into an object's list: zeroed, at a
/// stable address, removed before the object goes.
final class PipeWireHook {
  let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)

  init() { clear() }

  deinit { hook.deallocate() }

  /// Unlinks the hook if it was added (loop lock held).
  func remove() {
    guard hook.pointee.link.next != nil else { return }
    spa_hook_remove(hook)
    clear()
  }

  private func clear() {
    UnsafeMutableRawPointer(hook).initializeMemory(
      as: UInt8.self, repeating: 0, count: MemoryLayout<spa_hook>.size)
  }
}

/// The entries of a SPA dictionary as Swift strings.
func pipeWireDictionary(_ dictionary: UnsafePointer<spa_dict>?) -> [String: String] {
  guard let dictionary, let items = dictionary.pointee.items else { return [:] }
  var result = [String: String]()
  for index in 0..<Int(dictionary.pointee.n_items) {
    guard let key = items[index].key, let value = items[index].value else { continue }
    result[String(cString: key)] = String(cString: value)
  }
  return result
}

private func connection(_ data: UnsafeMutableRawPointer?) -> PipeWireConnection {
  Unmanaged<PipeWireConnection>.fromOpaque(data!).takeUnretainedValue()
}

private let pipeWireCoreDone: @convention(c) (UnsafeMutableRawPointer?, UInt32, Int32) -> Void = {
  data, id, sequence in
  if id == MICLOOP_PW_ID_CORE { connection(data).noteDone(sequence) }
}

private let pipeWireCoreError:
  @convention(c) (UnsafeMutableRawPointer?, UInt32, Int32, Int32, UnsafePointer<CChar>?) -> Void =
    { data, id, _, result, message in
      // Errors about other objects (a link refused) leave the connection up.
      guard id == MICLOOP_PW_ID_CORE else { return }
      let text = message.map { String(cString: $0) } ?? String(cString: strerror(-result))
      connection(data).noteServerError(text)
    }

private let pipeWireGlobal:
  @convention(c) (
    UnsafeMutableRawPointer?, UInt32, UInt32, UnsafePointer<CChar>?, UInt32,
    UnsafePointer<spa_dict>?
  ) -> Void = { data, id, _, type, _, properties in
    guard let type else { return }
    connection(data).noteGlobal(
      id, type: String(cString: type), properties: pipeWireDictionary(properties))
  }

private let pipeWireGlobalRemoved: @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Void = {
  data, id in
  connection(data).noteRemoved(id)
}

private let pipeWireMetadataProperty:
  @convention(c) (
    UnsafeMutableRawPointer?, UInt32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
    UnsafePointer<CChar>?
  ) -> Int32 = { data, subject, key, _, value in
    guard subject == MICLOOP_PW_ID_CORE, let key else { return 0 }
    connection(data).noteDefault(String(cString: key), value: value.map { String(cString: $0) })
    return 0
  }
