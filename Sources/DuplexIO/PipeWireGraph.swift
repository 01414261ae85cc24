internal import CPipeWire

/// How the PipeWire node finds its peers and links to them: the default
/// source and sink or a node by name, read from the registry the
/// connection keeps, links made through the server's link factory, and
/// which inputs have a link (a buffer missing on one is a loss). Control
/// thread, but for `noteLinks` (PipeWire's loop thread).
extension PipeWireBackend {
  /// "micloop", or "micloop-2" … when a node of that name exists.
  func uniqueNodeName(_ connection: PipeWireConnection) -> String {
    let names = Set(
      connection.snapshot().values.filter { $0.type == PipeWireConnection.nodeType }.compactMap {
        $0["node.name"]
      })
    var name = Self.nodeName
    var number = 2
    while names.contains(name) {
      name = "\(Self.nodeName)-\(number)"
      number += 1
    }
    return name
  }

  /// The node a target names: the default source or sink, a node by name,
  /// or none; a name that matches no node is an error.
  func targetNode(_ target: DeviceRoute.PortTarget, isCapture: Bool) throws(DuplexError)
    -> UInt32?
  {
    guard let connection else { return nil }
    let name: String
    switch target {
    case .none: return nil
    case .named(let node): name = node
    case .automatic:
      let key = isCapture ? "default.audio.source" : "default.audio.sink"
      guard let node = connection.defaultNode(key) else {
        throw DuplexError(
          .unknownDevice, operation: "open", device: "pw", code: ENOENT,
          reason: "PipeWire has no default \(isCapture ? "source" : "sink") (\(key))")
      }
      name = node
    }
    let nodes = connection.snapshot().filter {
      $0.value.type == PipeWireConnection.nodeType && $0.value["node.name"] == name
    }
    guard let id = nodes.keys.min() else {
      throw DuplexError(
        .unknownDevice, operation: "open", device: "pw:\(name)", code: ENOENT,
        reason: "PipeWire has no node named '\(name)'")
    }
    return id
  }

  /// Links the node's ports as the device name asked, through the server's
  /// link factory; the links go with the node. Returns the ports linked,
  /// a bit per port.
  @discardableResult
  func link(_ ports: FilterPorts, to target: DeviceRoute.PortTarget, isCapture: Bool) -> UInt64 {
    guard ports.count > 0, let connection, let api, let filter, let core = connection.core,
      let peer = try? targetNode(target, isCapture: isCapture)
    else { return 0 }
    let node = connection.withLock { api.pointee.filter_get_node_id(filter) }
    // The node's own ports appear in the registry once the server has them.
    var globals = connection.snapshot()
    func portIDs(of owner: UInt32, direction: String) -> [UInt32] {
      globals.filter {
        $0.value.type == PipeWireConnection.portType && $0.value["node.id"] == "\(owner)"
          && $0.value["port.direction"] == direction
      }
      .sorted { Int($0.value["port.id"] ?? "") ?? 0 < Int($1.value["port.id"] ?? "") ?? 0 }
      .map(\.key)
    }
    let ownDirection = isCapture ? "in" : "out"
    let deadline = MonotonicClock.seconds + Self.setUpTimeout
    while portIDs(of: node, direction: ownDirection).count < ports.count
      && MonotonicClock.seconds < deadline
    {
      _ = connection.roundTrip()
      globals = connection.snapshot()
    }
    let own = portIDs(of: node, direction: ownDirection)
    let theirs = portIDs(of: peer, direction: isCapture ? "out" : "in")
    let pairs = portPairs(
      clientPorts: own.count, serverPorts: theirs.count,
      fansOut: !isCapture && target == .automatic)
    var linked: UInt64 = 0
    connection.withLock {
      for (mine, other) in pairs {
        let (output, input) = isCapture ? (theirs[other], own[mine]) : (own[mine], theirs[other])
        let (outputNode, inputNode) = isCapture ? (peer, node) : (node, peer)
        let proxy = withPipeWireDictionary([
          ("link.output.node", "\(outputNode)"), ("link.output.port", "\(output)"),
          ("link.input.node", "\(inputNode)"), ("link.input.port", "\(input)"),
          ("object.linger", "false"),
        ]) { micloop_pw_core_create_link(core, $0) }
        if let proxy {
          links.append(proxy)
          if mine < 64 { linked |= 1 << UInt64(mine) }
        }
      }
    }
    return linked
  }

  /// Ports or links came or went (loop thread): which inputs now have a
  /// link, so that a missing buffer on one of them counts as a loss.
  func noteLinks() {
    guard let connection, let api, let filter, inputs.count > 0 else { return }
    let node = "\(api.pointee.filter_get_node_id(filter))"
    var indexByPort = [String: Int]()
    for (id, global) in connection.globals
    where global.type == PipeWireConnection.portType && global["node.id"] == node
      && global["port.direction"] == "in"
    {
      if let name = global["port.name"], name.hasPrefix("capture_"),
        let number = Int(name.dropFirst("capture_".count)), (1...inputs.count).contains(number)
      {
        indexByPort["\(id)"] = number - 1
      }
    }
    var mask: UInt64 = 0
    for global in connection.globals.values where global.type == PipeWireConnection.linkType {
      if let port = global["link.input.port"], let index = indexByPort[port], index < 64 {
        mask |= 1 << UInt64(index)
      }
    }
    linkedInputs.store(mask, ordering: .releasing)
  }
}
