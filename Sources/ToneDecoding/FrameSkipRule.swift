/// Which frames are analysed in silence: the one rule of the decoder
/// (`ToneDecoder`) and of its read-ahead (`ToneDecoderAhead`), so both
/// choose the same frames. While the last frame analysed held nothing,
/// up to `maximumSkip` frames in a row are put off; the next one analysed
/// decides: if it holds something, the frames put off are analysed after
/// all, in order, before it; if not, they count as empty.
///
/// A value per analysis, used on the thread that owns that analysis.
struct FrameSkipRule {
  /// Frames put off at most in a row while nothing is heard (a whole
  /// frame's length at 5 ms hops).
  static let maximumSkip = 3

  /// Whether the last frame analysed held nothing.
  private(set) var isQuiet = false
  /// Frames put off since it.
  private(set) var skipped = 0

  /// Whether the next frame is put off; if so it counts as put off.
  mutating func putsOff() -> Bool {
    guard isQuiet && skipped < Self.maximumSkip else { return false }
    skipped += 1
    return true
  }

  /// Frame `number` was analysed and held nothing (`isQuiet`) or
  /// something: returns the frames put off before it that must be
  /// analysed now (none when it held nothing) and how many were put off.
  mutating func decided(frame number: Int, isQuiet: Bool) -> (replay: Range<Int>, skipped: Int) {
    let skipped = self.skipped
    self.skipped = 0
    self.isQuiet = isQuiet
    return (isQuiet ? number..<number : (number - skipped)..<number, skipped)
  }

  /// Starts afresh: the next frame is analysed.
  mutating func reset() {
    isQuiet = false
    skipped = 0
  }
}
