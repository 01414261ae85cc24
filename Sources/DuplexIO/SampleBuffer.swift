/// Interleaved Float32 samples a client owns: sized in
/// `DuplexClient.prepare(for:)` on the control thread, used on the audio
/// thread without allocating, freed when resized again or when the client
/// goes. A client that keeps its buffers here never leaks them when a unit
/// is initialised again.
public final class SampleBuffer {
  /// The samples, zeroed when sized.
  public private(set) var samples: UnsafeMutableBufferPointer<Float>

  /// A buffer of `capacity` samples (none until `resize`).
  public init(capacity: Int = 0) {
    samples = .allocate(capacity: capacity)
    samples.initialize(repeating: 0)
  }

  deinit { samples.deallocate() }

  /// Replaces the samples with `capacity` zeroed ones (control thread: it allocates).
  public func resize(to capacity: Int) {
    samples.deallocate()
    samples = .allocate(capacity: capacity)
    samples.initialize(repeating: 0)
  }

  /// The first sample's address, for C-style loops.
  public var baseAddress: UnsafeMutablePointer<Float> { samples.baseAddress! }

  public var count: Int { samples.count }

  public subscript(index: Int) -> Float {
    get { samples[index] }
    set { samples[index] = newValue }
  }
}
