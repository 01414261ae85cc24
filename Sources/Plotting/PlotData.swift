import AudioFiles

#if canImport(Glibc)
  import Glibc
#endif

/// Peak, mean square and loudness of a stretch of audio (the loudest
/// channel's, as the meter reports them).
public struct LevelColumn: ColumnValue, Sendable {
  /// Largest |sample|.
  public var peak: Double
  /// Σ x² over the stretch and the frames in it.
  public var sumOfSquares: Double
  public var frames: Double
  /// Highest momentary loudness in the stretch, when measured.
  public var loudnessLUFS: Double?

  public init(peak: Double, sumOfSquares: Double, frames: Double, loudnessLUFS: Double?) {
    self.peak = peak
    self.sumOfSquares = sumOfSquares
    self.frames = frames
    self.loudnessLUFS = loudnessLUFS
  }

  public var peakDecibels: Double? { peak > 0 ? 20 * log10(peak) : nil }
  public var rmsDecibels: Double? {
    frames > 0 && sumOfSquares > 0 ? 10 * log10(sumOfSquares / frames) : nil
  }

  public mutating func merge(_ next: LevelColumn) {
    peak = max(peak, next.peak)
    sumOfSquares += next.sumOfSquares
    frames += next.frames
    if let other = next.loudnessLUFS { loudnessLUFS = max(loudnessLUFS ?? other, other) }
  }
}

/// The power of each spectrogram row summed over the transforms of a
/// stretch, and how many transforms that was.
public struct SpectrumColumn: ColumnValue, Sendable {
  public var rowPower: [Float]
  public var transforms: Int

  public init(rowPower: [Float], transforms: Int) {
    self.rowPower = rowPower
    self.transforms = transforms
  }

  /// The mean power of `row` in dB (relative to a full-scale sine).
  public func decibels(row: Int) -> Double {
    let power = Double(rowPower[row]) / Double(max(1, transforms))
    return power > 1e-30 ? 10 * log10(power) : -300
  }

  public mutating func merge(_ next: SpectrumColumn) {
    for index in rowPower.indices { rowPower[index] += next.rowPower[index] }
    transforms += next.transforms
  }
}

/// A decoded tone or call to mark on the timeline.
public struct ToneMark: Sendable, Equatable {
  public var time: Double
  public var duration: Double
  /// What is written at the mark: a DTMF digit, a call's digits, a text.
  public var label: String

  public init(time: Double, duration: Double, label: String) {
    self.time = time
    self.duration = duration
    self.label = label
  }
}

/// Everything a plot shows, gathered from one pass over a file.
public struct PlotData {
  /// What the title names (the file).
  public var title: String
  public var sampleRate: Double
  public var channelCount: Int
  /// Seconds of audio.
  public var duration: Double = 0
  public var levels: TimeColumns<LevelColumn>
  public var spectrum: TimeColumns<SpectrumColumn>
  /// Rows of the spectrogram, lowest frequency first, from 0 Hz to `maximumFrequency`.
  public var spectrumRows: Int
  public var maximumFrequency: Double
  public var talkSegments: [(start: Double, end: Double)] = []
  public var tones: [ToneMark] = []
  /// Whether `levels` carry loudness.
  public var hasLoudness: Bool
  /// Integrated loudness of the whole file, when measured.
  public var integratedLUFS: Double?
  /// Damaged samples (NaN, infinite or beyond +60 dBFS), drawn as silence.
  public var invalidSamples = 0
  /// Why the file could not be read to its end (cut short, damaged), when
  /// it could not: the data covers what was read.
  public var problem: AudioFileError?
}
