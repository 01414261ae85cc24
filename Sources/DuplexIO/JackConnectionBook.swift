import Synchronization

/// A connection of a JACK client's own port, end to end: each end is one
/// of the client's ports, by its short name ("capture_1", which a new
/// client of another name registers again), or another client's port, by
/// its full name ("system:capture_1").
struct JackPortConnection: Hashable, Sendable {
  enum End: Hashable, Sendable {
    case own(String)
    case other(String)

    /// The port's full name when the client is named `client`.
    func name(client: String) -> String {
      switch self {
      case .own(let port): return "\(client):\(port)"
      case .other(let port): return port
      }
    }
  }

  let output: End
  let input: End

  /// Whether the connection can be made again by a client named `client`:
  /// not when an end that was another client's port now names one of its
  /// own (that client had this name before, and came back under another).
  func isRestorable(asClient client: String) -> Bool {
    for end in [output, input] {
      if case .other(let port) = end, port.hasPrefix(client + ":") { return false }
    }
    return true
  }

  /// "OUTPUT → INPUT", with the client named `client`.
  func description(client: String) -> String {
    "\(output.name(client: client)) → \(input.name(client: client))"
  }
}

/// The connections of this process's JACK clients' ports, per server and
/// client name ("SERVER/CLIENT", the key), kept
/// as JACK announces them (its port-connect notices, on libjack's
/// notification thread) so that they are known when the server is gone: a
/// server that dies sends nothing more, and a client attached to it again
/// takes what the lost one had (`take`). A client closed on purpose is
/// forgotten. Any thread but a process thread (it locks).
final class JackConnectionBook: Sendable {
  static let shared = JackConnectionBook()

  private let connections = Mutex<[String: [JackPortConnection]]>([:])

  /// Notes that `connection` was made (or broken) for the client `key` names.
  func note(_ connection: JackPortConnection, isConnected: Bool, key: String) {
    connections.withLock { book in
      var list = book[key] ?? []
      list.removeAll { $0 == connection }
      if isConnected { list.append(connection) }
      book[key] = list
    }
  }

  /// The connections the last client `key` names had, in the order they
  /// were made; the book forgets them (the new client notes its own).
  func take(key: String) -> [JackPortConnection] {
    connections.withLock { $0.removeValue(forKey: key) ?? [] }
  }

  /// The connections of the one lost client of server `server` ("SERVER/"
  /// keys), when the book holds exactly one: a client that comes back
  /// under another name (another client took its name first) finds what
  /// it had. With several, none is taken: which was whose is not known.
  func takeSole(server: String) -> [JackPortConnection] {
    connections.withLock { book in
      let keys = book.keys.filter { $0.hasPrefix(server + "/") && !(book[$0]?.isEmpty ?? true) }
      guard keys.count == 1, let key = keys.first else { return [] }
      return book.removeValue(forKey: key) ?? []
    }
  }

  /// Forgets the connections of the client `key` names (closed on purpose).
  func forget(key: String) {
    _ = connections.withLock { $0.removeValue(forKey: key) }
  }
}
