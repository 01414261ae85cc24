/// What a backend that attached a new client, after its sound server was
/// lost and came back, did with the connections others had made to the lost
/// client's ports (`jack_connect`, a patchbay): those made again, and those
/// whose other port never came back in time. Each is "OUTPUT → INPUT".
public struct RestoredConnections: Sendable, Equatable {
  /// Connections made again, in the order they were.
  public var restored: [String]
  /// Connections that could not be made again (a port missing).
  public var notRestored: [String]

  public init(restored: [String], notRestored: [String]) {
    self.restored = restored
    self.notRestored = notRestored
  }
}
