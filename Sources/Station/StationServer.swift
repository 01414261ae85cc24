import Dispatch
import FlyingSocks
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The station's HTTP server (FlyingSocks' non-blocking sockets and poll
/// loop): binds when started, then accepts and serves on its own tasks,
/// never on the thread that feeds it. Start and stop it from the control
/// thread, before and after the job runs.
public final class StationServer: Sendable {
  /// Seconds `stop()` waits for the server's tasks to end.
  public static let stopTimeout = 2.0

  public let feed: StationFeed
  private let address: StationAddress
  private let token: String?
  private let state = Mutex<Running?>(nil)
  private let clients = ClientCount()

  private struct Running: Sendable {
    var socket: Socket
    var task: Task<Void, Never>
    var finished: DispatchSemaphore
    var port: UInt16
  }

  /// A server for `feed` at `address`; with a `token`, every request must
  /// carry it (`Authorization: Bearer TOKEN` or the cookie `/?token=` sets).
  public init(address: StationAddress, token: String?, feed: StationFeed) {
    self.address = address
    self.token = token
    self.feed = feed
  }

  /// The port it listens on once started (the chosen one for port 0).
  public var port: UInt16? { state.withLock { $0?.port } }

  /// `http://HOST:PORT/` once started.
  public var url: String? { port.map { "http://\(address.host):\($0)/" } }

  /// Binds and listens (errors say what failed, e.g. the port is taken),
  /// then serves on its own tasks until `stop()`. Returns the URL.
  @discardableResult
  public func start() throws(StationError) -> String {
    let socket: Socket
    let port: UInt16
    do {
      socket = try Socket(domain: AF_INET)
      try socket.setValue(true, for: .localAddressReuse)
      try socket.bind(to: .inet(ip4: address.host, port: address.port))
      try socket.listen()
      guard case .ip4(_, let bound) = try socket.sockname() else {
        throw StationError(message: "no port")
      }
      port = bound
    } catch {
      throw StationError(message: "cannot listen on \(address): \(Self.describe(error))")
    }
    let finished = DispatchSemaphore(value: 0)
    let router = StationRouter(feed: feed, token: token)
    let limits = feed.limits
    let clients = self.clients
    let metrics = feed.metrics
    let feed = self.feed
    let task = Task.detached(executorPreference: StationExecutor()) { [clients] in
      defer { finished.signal() }
      do {
        let pool: some AsyncSocketPool = .make(maxEvents: 64)
        try await pool.prepare()
        let listener = try AsyncSocket(socket: socket, pool: pool)
        try await withThrowingDiscardingTaskGroup { group in
          group.addTask { try await pool.run() }
          group.addTask {
            while true {
              try await Task.sleep(for: .seconds(limits.heartbeatInterval))
              feed.wakeWaiting()
            }
          }
          for try await client in listener.sockets {
            guard clients.add(1) <= limits.maximumClients else {
              clients.add(-1)
              group.addTask { await Self.refuse(client, limits: limits) }
              continue
            }
            metrics.setClients(clients.value)
            group.addTask {
              await StationConnection(socket: client, router: router, limits: limits).serve()
              let now = clients.add(-1)
              metrics.setClients(now)
            }
          }
        }
      } catch {
        // Cancelled by stop(), or the listening socket failed: the job goes on without it.
      }
    }
    state.withLock { $0 = Running(socket: socket, task: task, finished: finished, port: port) }
    return "http://\(address.host):\(port)/"
  }

  /// Stops accepting, drops every client and waits (at most `stopTimeout`)
  /// for the server's tasks to end.
  public func stop() {
    guard
      let running = state.withLock({ state -> Running? in
        defer { state = nil }
        return state
      })
    else { return }
    running.task.cancel()
    _ = running.finished.wait(timeout: .now() + Self.stopTimeout)
    try? running.socket.close()
  }

  /// Connections beyond the limit get a short 503, then are closed.
  private static func refuse(_ client: AsyncSocket, limits: StationLimits) async {
    defer { try? client.close() }
    let body = "too many clients\n"
    let text =
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 5\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    _ = try? await withDeadline(seconds: 1) { try await client.write(Data(text.utf8)) }
  }

  private static func describe(_ error: any Error) -> String {
    if let socketError = error as? SocketError,
      case .failed(_, let errno, let message) = socketError
    {
      return errno == EADDRINUSE ? "the port is in use; pick another or 0 for a free one" : message
    }
    return String(describing: error)
  }
}

/// Why a station could not start, in words for one error line.
public struct StationError: Error, CustomStringConvertible {
  public var message: String
  public var description: String { message }
}

/// The connections being served, counted across the server's tasks.
final class ClientCount: Sendable {
  private let count = Atomic<Int>(0)
  /// Adds `delta` and returns the new count.
  @discardableResult
  func add(_ delta: Int) -> Int { count.add(delta, ordering: .relaxed).newValue }
  var value: Int { count.load(ordering: .relaxed) }
}
