#if canImport(Glibc)
  import Glibc
#endif

public final class PipeWireBackend: DuplexBackend, @unchecked Sendable {
  public init() {}
  public var isCallbackDriven: Bool { true }
  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    throw DuplexError(.failed, operation: "open", device: "pw", code: ENOSYS)
  }
  public func start() -> IOResult { .failed(EINVAL) }
  public func waitForPeriod() -> IOResult { .failed(EINVAL) }
  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult { .ready }
  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult { .ready }
  public func recover() -> IOResult { .ready }
  public func hostTime() -> UInt64 { 0 }
  public func outputDelay() -> Int { 0 }
  public func wake() {}
  public func halt() {}
  public func drain() {}
  public func close() {}
  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    DuplexError(.failed, operation: "run", device: "pw", code: code)
  }
}
