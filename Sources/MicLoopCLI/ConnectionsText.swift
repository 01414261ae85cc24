import DuplexIO

/// The human lines for connections made again after a sound server came
/// back: one for those restored, one for those that could not be.
enum ConnectionsText {
  static func lines(_ connections: RestoredConnections) -> [String] {
    var lines = [String]()
    if !connections.restored.isEmpty {
      lines.append("connections restored: \(connections.restored.joined(separator: ", "))")
    }
    if !connections.notRestored.isEmpty {
      let seconds = Int(JackBackend.restoreTimeout)
      lines.append(
        "connections not restored (a port did not come back within \(seconds) s): \(connections.notRestored.joined(separator: ", "))"
      )
    }
    return lines
  }
}
