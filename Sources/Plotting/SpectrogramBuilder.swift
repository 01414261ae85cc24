import SignalDSP

/// Turns a mono stream into spectrogram columns: Hann-windowed FFTW
/// transforms of about 43 ms (2048 samples at 48 kHz; at most
/// `longestFrame` samples, and no longer than the audio) every half frame,
/// each bin's power gathered into `rows` equal frequency bands from 0 Hz
/// to half the sample rate (the strongest bin of each band, so a tone
/// shows in exactly one row). Calling thread.
final class SpectrogramBuilder {
  let rows: Int
  /// Samples per transform.
  let frameLength: Int
  private let analyzer: SpectrumAnalyzer
  private let hop: Int
  /// The bins of each row, lowest row first.
  private let rowBins: [Range<Int>]
  private var ring: [Float]
  private var filled = 0
  private var framesSeen = 0
  private let sampleRate: Double

  /// The longest transform: memory and time follow the audio's length,
  /// not the rate a header claims (2^31 Hz would ask for 2^27 samples).
  /// Above 1.6 MHz frames are shorter than 40 ms; they still have more
  /// bins than a plot has rows.
  static let longestFrame = 65_536
  /// The shortest transform.
  static let shortestFrame = 256
  /// A frame covers at least this long, when the rate and length allow.
  static let frameDuration = 0.04

  /// - Parameter frameCount: the audio's length in frames, when known:
  ///   no transform is longer than the audio.
  init(sampleRate: Double, rows: Int, frameCount: Int64? = nil) {
    precondition(rows > 0)
    self.rows = rows
    self.sampleRate = sampleRate
    var length = Self.shortestFrame
    while Double(length) < sampleRate * Self.frameDuration && length < Self.longestFrame
      && Int64(length) < frameCount ?? .max
    {
      length *= 2
    }
    frameLength = length
    analyzer = SpectrumAnalyzer(frameLength: length, sampleRate: sampleRate)
    hop = length / 2
    ring = Array(repeating: 0, count: length)
    let bins = length / 2 + 1
    let binWidth = sampleRate / Double(length)
    let rowWidth = sampleRate / 2 / Double(rows)
    rowBins = (0..<rows).map { row in
      // Bins whose centres fall in the row; the nearest when none do.
      let low = Int((Double(row) * rowWidth / binWidth).rounded(.up))
      let high = Int((Double(row + 1) * rowWidth / binWidth).rounded(.up))
      if high > low { return min(low, bins - 1)..<min(high, bins) }
      let nearest = min(bins - 1, Int(((Double(row) + 0.5) * rowWidth / binWidth).rounded()))
      return nearest..<(nearest + 1)
    }
  }

  /// Adds `samples`; `emit` gets each finished transform as a one-transform
  /// column with the stream time of its frame's centre.
  func process(_ samples: UnsafeBufferPointer<Float>, emit: (SpectrumColumn, Double) -> Void) {
    var index = 0
    while index < samples.count {
      let take = min(samples.count - index, ring.count - filled)
      for offset in 0..<take { ring[filled + offset] = samples[index + offset] }
      filled += take
      index += take
      guard filled == ring.count else { continue }
      ring.withUnsafeBufferPointer { frame in
        analyzer.analyze(frame, UnsafeBufferPointer(start: nil, count: 0))
      }
      var power = [Float](repeating: 0, count: rows)
      for row in 0..<rows {
        var strongest = 0.0
        for bin in rowBins[row] { strongest = max(strongest, analyzer.binPower(bin)) }
        power[row] = Float(strongest)
      }
      // Placed at the centre of its frame.
      emit(
        SpectrumColumn(rowPower: power, transforms: 1),
        Double(framesSeen + ring.count / 2) / sampleRate)
      framesSeen += hop
      ring.withUnsafeMutableBufferPointer { buffer in
        for position in 0..<(buffer.count - hop) { buffer[position] = buffer[position + hop] }
      }
      filled -= hop
    }
  }
}
