/// The ports of one direction of a sound server's client (JACK's ports or
/// a PipeWire filter's): the server's handle for each, and the buffer each
/// brings in the current cycle. Set up on the control thread; the buffers
/// are filled and read on the server's process thread, without allocating.
final class ServerPorts<Handle> {
  let count: Int
  let handles: UnsafeMutablePointer<Handle?>
  let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

  init(count: Int = 0) {
    self.count = count
    handles = .allocate(capacity: max(1, count))
    handles.initialize(repeating: nil, count: max(1, count))
    buffers = .allocate(capacity: max(1, count))
    buffers.initialize(repeating: nil, count: max(1, count))
  }

  deinit {
    handles.deallocate()
    buffers.deallocate()
  }

  /// Interleaves the ports' period into `samples`; a port without a
  /// buffer this cycle gives silence.
  func interleave(into samples: UnsafeMutablePointer<Float>, frames: Int) {
    for channel in 0..<count {
      guard let source = buffers[channel] else {
        for frame in 0..<frames { samples[frame * count + channel] = 0 }
        continue
      }
      if count == 1 {
        samples.update(from: source, count: frames)
      } else {
        for frame in 0..<frames { samples[frame * count + channel] = source[frame] }
      }
    }
  }

  /// Spreads the interleaved period in `samples` over the ports' buffers
  /// (a port without one this cycle is skipped).
  func spread(_ samples: UnsafePointer<Float>, frames: Int) {
    for channel in 0..<count {
      guard let destination = buffers[channel] else { continue }
      if count == 1 {
        destination.update(from: samples, count: frames)
      } else {
        for frame in 0..<frames { destination[frame] = samples[frame * count + channel] }
      }
    }
  }
}
