/// The station's tuning numbers: how much it holds for its clients and how
/// long it waits for them. Every limit keeps a slow or hostile client from
/// costing the job anything.
public struct StationLimits: Sendable {
  /// Connections served at once; more are answered 503 and closed.
  public var maximumClients = 64
  /// Bytes of a request's line and headers; more are answered 431.
  public var maximumHeaderBytes = 8192
  /// Seconds a client has to send its request's head.
  public var headerTimeout = 10.0
  /// Seconds one write to a client may take before the client is dropped.
  public var writeTimeout = 20.0
  /// Event lines a client of `/events` may fall behind before it is dropped.
  public var clientQueueLines = 512
  /// Event lines the feed keeps (at least `clientQueueLines`).
  public var feedLines = 2048
  /// Seconds between the server's wake-ups of the `/events` clients that
  /// wait for a line (each sends its keep-alive when due); a new line
  /// wakes them at once.
  public var heartbeatInterval = 1.0
  /// Seconds between comment lines that keep an idle `/events` open.
  public var keepAliveInterval = 15.0
  /// Bytes of a recording sent per write.
  public var fileChunkBytes = 65_536

  public init() {}
}
