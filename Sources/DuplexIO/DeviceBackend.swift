#if canImport(Glibc)
  import Glibc
#endif

/// The backend a configuration's device names choose (`DeviceRoute`): ALSA
/// for ALSA names, JACK for `jack`/`jack:…`, PipeWire for `pw`/`pw:…`. A
/// program that takes device names from its user runs its units on this
/// one type: `open` picks the backend, and every call goes to it through a
/// switch (no dynamic dispatch on the audio thread). Capture and playback
/// must be on the same server. Threads as `DuplexBackend` says.
public final class DeviceBackend: DuplexBackend, @unchecked Sendable {
  private enum Chosen {
    case none
    case alsa(ALSADevicePair)
    case jack(JackBackend)
    case pipeWire(PipeWireBackend)
  }

  private var chosen = Chosen.none

  public init() {}

  /// Which backend the configuration's device names choose, or why they
  /// cannot share one unit.
  static func choose(_ configuration: DuplexConfiguration) throws(DuplexError) -> DeviceRoute? {
    let routes = configuration.routes
    let route = routes.capture ?? routes.playback
    if let capture = routes.capture, let playback = routes.playback,
      capture.family != playback.family
    {
      throw DuplexError(
        .failed, operation: "open", device: configuration.deviceDescription, code: EINVAL,
        reason:
          "capture is on \(capture.family) and playback on \(playback.family): a unit's two devices must be on one server"
      )
    }
    return route
  }

  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    close()
    switch try Self.choose(configuration) {
    case .jack:
      let backend = JackBackend()
      chosen = .jack(backend)
      return try backend.open(configuration)
    case .pipeWire:
      let backend = PipeWireBackend()
      chosen = .pipeWire(backend)
      return try backend.open(configuration)
    case .alsa, nil:
      let backend = ALSADevicePair()
      chosen = .alsa(backend)
      return try backend.open(configuration)
    }
  }

  public var isCallbackDriven: Bool {
    switch chosen {
    case .jack, .pipeWire: return true
    case .alsa, .none: return false
    }
  }

  public func start(calling handler: any ServerCycleHandler) -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.start()
    case .jack(let backend): return backend.start(calling: handler)
    case .pipeWire(let backend): return backend.start(calling: handler)
    }
  }

  public var isServerThreadRealtime: Bool {
    switch chosen {
    case .none, .alsa: return false
    case .jack(let backend): return backend.isServerThreadRealtime
    case .pipeWire(let backend): return backend.isServerThreadRealtime
    }
  }

  public func serverLatency() -> ServerLatency? {
    switch chosen {
    case .none, .alsa: return nil
    case .jack(let backend): return backend.serverLatency()
    case .pipeWire(let backend): return backend.serverLatency()
    }
  }

  public func takeRestoredConnections() -> RestoredConnections? {
    switch chosen {
    case .jack(let backend): return backend.takeRestoredConnections()
    case .none, .alsa, .pipeWire: return nil
    }
  }

  public func start() -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.start()
    case .jack(let backend): return backend.start()
    case .pipeWire(let backend): return backend.start()
    }
  }

  public func waitForPeriod() -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.waitForPeriod()
    case .jack(let backend): return backend.waitForPeriod()
    case .pipeWire(let backend): return backend.waitForPeriod()
    }
  }

  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.read(destination, frames: frames)
    case .jack(let backend): return backend.read(destination, frames: frames)
    case .pipeWire(let backend): return backend.read(destination, frames: frames)
    }
  }

  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.write(source, frames: frames)
    case .jack(let backend): return backend.write(source, frames: frames)
    case .pipeWire(let backend): return backend.write(source, frames: frames)
    }
  }

  public func recover() -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.recover()
    case .jack(let backend): return backend.recover()
    case .pipeWire(let backend): return backend.recover()
    }
  }

  public func restartPlayback() -> IOResult {
    switch chosen {
    case .none: return .failed(ENODEV)
    case .alsa(let backend): return backend.restartPlayback()
    case .jack(let backend): return backend.restartPlayback()
    case .pipeWire(let backend): return backend.restartPlayback()
    }
  }

  public func hostTime() -> UInt64 {
    switch chosen {
    case .none: return MonotonicClock.now()
    case .alsa(let backend): return backend.hostTime()
    case .jack(let backend): return backend.hostTime()
    case .pipeWire(let backend): return backend.hostTime()
    }
  }

  public func outputDelay() -> Int {
    switch chosen {
    case .none: return 0
    case .alsa(let backend): return backend.outputDelay()
    case .jack(let backend): return backend.outputDelay()
    case .pipeWire(let backend): return backend.outputDelay()
    }
  }

  public func wake() {
    switch chosen {
    case .none: break
    case .alsa(let backend): backend.wake()
    case .jack(let backend): backend.wake()
    case .pipeWire(let backend): backend.wake()
    }
  }

  public func halt() {
    switch chosen {
    case .none: break
    case .alsa(let backend): backend.halt()
    case .jack(let backend): backend.halt()
    case .pipeWire(let backend): backend.halt()
    }
  }

  public func drain() {
    switch chosen {
    case .none: break
    case .alsa(let backend): backend.drain()
    case .jack(let backend): backend.drain()
    case .pipeWire(let backend): backend.drain()
    }
  }

  public func close() {
    switch chosen {
    case .none: break
    case .alsa(let backend): backend.close()
    case .jack(let backend): backend.close()
    case .pipeWire(let backend): backend.close()
    }
    chosen = .none
  }

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    switch chosen {
    case .none:
      return DuplexError(.failed, operation: operation.description, device: "?", code: code)
    case .alsa(let backend): return backend.error(code: code, during: operation)
    case .jack(let backend): return backend.error(code: code, during: operation)
    case .pipeWire(let backend): return backend.error(code: code, during: operation)
    }
  }
}
