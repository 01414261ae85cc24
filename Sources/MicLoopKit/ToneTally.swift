import ToneDecoding
import TonePlans

/// What a job that decodes tones reports: each decoded event once (a call
/// repeated within `RepeatSuppressor.window` is dropped with its tones),
/// and the tallies for a summary. Used by the live job and by a file's
/// decoding alike. Control thread; allocates.
public final class ToneTally {
  public let plans: [TonePlan]
  private var repeats: RepeatSuppressor
  /// Tones reported so far (single tones and the tones of reported calls).
  public private(set) var toneCount = 0
  /// Calls and pages reported so far.
  public private(set) var sequenceCount = 0

  /// - Parameter repeatWindow: seconds after a call during which the same
  ///   call is a repeat; 0 reports every repeat.
  public init(plans: [TonePlan], repeatWindow: Double) {
    self.plans = plans
    repeats = RepeatSuppressor(plans: plans, window: repeatWindow)
  }

  /// Counts and hands on `event` unless it repeats a call just reported.
  public func admit(_ event: ToneDecoderEvent, then report: (ToneDecoderEvent) -> Void) {
    repeats.filter(event) { admitted in
      switch admitted {
      case .tone: toneCount += 1
      case .toneStart: break
      case .sequence, .page: sequenceCount += 1
      }
      report(admitted)
    }
  }

  /// Hands on what is still held at the end of the stream.
  public func finish(then report: (ToneDecoderEvent) -> Void) {
    repeats.finish { admitted in
      if case .tone = admitted { toneCount += 1 }
      report(admitted)
    }
  }
}
