/// Convolution of a stream with a long impulse response, a block at a
/// time, by uniformly partitioned overlap-save: the response is cut into
/// partitions of one block, each transformed once in `init`; every block
/// of input is transformed once and kept in a delay line of spectra, and
/// the output block is the inverse transform of the sum of each partition's
/// spectrum times the input spectrum of as many blocks ago. The output is
/// the exact convolution (to float rounding), with no delay beyond the
/// block itself: output sample n depends on input samples up to n.
///
/// Cost per block: two transforms of two blocks and one complex multiply
/// and add per bin per partition. Owned by one thread at a time; `process`
/// never allocates.
public final class PartitionedConvolver: @unchecked Sendable {
  /// Samples per block.
  public let blockSize: Int
  /// Partitions of the impulse response.
  public let partitionCount: Int
  private let transform: RealFourierTransform
  private let bins: Int
  /// Partition spectra, `partitionCount × bins`, real and imaginary apart.
  private let responseReal: UnsafeMutablePointer<Float>
  private let responseImaginary: UnsafeMutablePointer<Float>
  /// Input spectra of the last `partitionCount` blocks (a ring).
  private let historyReal: UnsafeMutablePointer<Float>
  private let historyImaginary: UnsafeMutablePointer<Float>
  private let sumReal: UnsafeMutablePointer<Float>
  private let sumImaginary: UnsafeMutablePointer<Float>
  /// The previous input block (the first half of each transform's input).
  private let previous: UnsafeMutablePointer<Float>
  private var newest = 0

  /// - Parameters:
  ///   - impulseResponse: the response to convolve with (at least one sample).
  ///   - blockSize: samples per call of `process`.
  public init(impulseResponse: [Float], blockSize: Int) {
    precondition(blockSize >= 1 && !impulseResponse.isEmpty)
    self.blockSize = blockSize
    partitionCount = (impulseResponse.count + blockSize - 1) / blockSize
    transform = RealFourierTransform(size: 2 * blockSize)
    bins = transform.binCount
    let total = partitionCount * bins
    responseReal = .allocate(capacity: total)
    responseImaginary = .allocate(capacity: total)
    historyReal = .allocate(capacity: total)
    historyImaginary = .allocate(capacity: total)
    historyReal.initialize(repeating: 0, count: total)
    historyImaginary.initialize(repeating: 0, count: total)
    sumReal = .allocate(capacity: bins)
    sumImaginary = .allocate(capacity: bins)
    previous = .allocate(capacity: blockSize)
    previous.initialize(repeating: 0, count: blockSize)
    // Each partition's spectrum, scaled for the unnormalised inverse.
    let scale = 1 / Float(2 * blockSize)
    for partition in 0..<partitionCount {
      transform.real.update(repeating: 0, count: 2 * blockSize)
      let start = partition * blockSize
      let count = min(blockSize, impulseResponse.count - start)
      for index in 0..<count { transform.real[index] = impulseResponse[start + index] * scale }
      transform.forward()
      for bin in 0..<bins {
        responseReal[partition * bins + bin] = transform.complex[2 * bin]
        responseImaginary[partition * bins + bin] = transform.complex[2 * bin + 1]
      }
    }
  }

  deinit {
    responseReal.deallocate()
    responseImaginary.deallocate()
    historyReal.deallocate()
    historyImaginary.deallocate()
    sumReal.deallocate()
    sumImaginary.deallocate()
    previous.deallocate()
  }

  /// Forgets all input (as if it had been silent).
  public func reset() {
    historyReal.update(repeating: 0, count: partitionCount * bins)
    historyImaginary.update(repeating: 0, count: partitionCount * bins)
    previous.update(repeating: 0, count: blockSize)
  }

  /// Convolves the next `blockSize` input samples into `output` (which may
  /// be the input).
  public func process(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>) {
    let block = blockSize
    let real = transform.real
    real.update(from: previous, count: block)
    (real + block).update(from: input, count: block)
    previous.update(from: input, count: block)
    transform.forward()
    newest = newest == 0 ? partitionCount - 1 : newest - 1
    let slot = newest * bins
    for bin in 0..<bins {
      historyReal[slot + bin] = transform.complex[2 * bin]
      historyImaginary[slot + bin] = transform.complex[2 * bin + 1]
    }
    sumReal.update(repeating: 0, count: bins)
    sumImaginary.update(repeating: 0, count: bins)
    // Partition p meets the input spectrum of p blocks ago.
    var history = newest
    for partition in 0..<partitionCount {
      accumulate(
        historyReal + history * bins, historyImaginary + history * bins,
        responseReal + partition * bins, responseImaginary + partition * bins)
      history = history + 1 == partitionCount ? 0 : history + 1
    }
    for bin in 0..<bins {
      transform.complex[2 * bin] = sumReal[bin]
      transform.complex[2 * bin + 1] = sumImaginary[bin]
    }
    transform.inverse()
    output.update(from: real + block, count: block)
  }

  /// sum += x × h, bin by bin (plain loops over plain pointers: vectorised).
  @inline(__always)
  private func accumulate(
    _ xr: UnsafeMutablePointer<Float>, _ xi: UnsafeMutablePointer<Float>,
    _ hr: UnsafeMutablePointer<Float>, _ hi: UnsafeMutablePointer<Float>
  ) {
    let sr = sumReal
    let si = sumImaginary
    for bin in 0..<bins {
      sr[bin] += xr[bin] * hr[bin] - xi[bin] * hi[bin]
      si[bin] += xr[bin] * hi[bin] + xi[bin] * hr[bin]
    }
  }
}
