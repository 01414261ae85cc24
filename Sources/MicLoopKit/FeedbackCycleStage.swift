import FeedbackControl

/// The howl guard's control-cycle half: what the guard did (its events,
/// handed on in order), then a cycle's share of the loop learner's work
/// (`LiveProcessor.learnLoop`). Control thread only.
final class FeedbackCycleStage: LiveCycleStage {
  private let processor: LiveProcessor
  private let onFeedback: (HowlGuardEvent) -> Void

  init(processor: LiveProcessor, onFeedback: @escaping (HowlGuardEvent) -> Void) {
    self.processor = processor
    self.onFeedback = onFeedback
  }

  func runCycle(_ cycle: LiveCycle) {
    processor.feedbackEvents.drain { events in
      for event in events { onFeedback(event) }
    }
    processor.learnLoop()
  }
}
