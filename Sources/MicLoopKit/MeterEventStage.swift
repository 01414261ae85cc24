import Metering

/// The meter's control-cycle half: the readings and talk events the audio
/// thread left in `LiveProcessor.events`, handed on in order. Control
/// thread only.
final class MeterEventStage: LiveCycleStage {
  private let processor: LiveProcessor
  private let onEvent: (MeterEvent) -> Void

  init(processor: LiveProcessor, onEvent: @escaping (MeterEvent) -> Void) {
    self.processor = processor
    self.onEvent = onEvent
  }

  func runCycle(_ cycle: LiveCycle) {
    processor.events.drain { events in
      cycle.arrived()
      for event in events { onEvent(event.meterEvent) }
    }
  }
}
