/// The capture ring's control-cycle half: the captured blocks, with their
/// stream frames, handed on in order (for the recording file or the
/// recorder), each cut at the job's length. Control thread only.
final class CaptureCycleStage: LiveCycleStage {
  private let ring: CaptureRing
  private let onCaptured: (CaptureRing.Block) -> Void

  init(ring: CaptureRing, onCaptured: @escaping (CaptureRing.Block) -> Void) {
    self.ring = ring
    self.onCaptured = onCaptured
  }

  func runCycle(_ cycle: LiveCycle) {
    ring.drain { block in
      cycle.arrived()
      var block = block
      if let limit = cycle.frameLimit {
        let frames = Int(max(0, min(Int64(block.frameCount), limit - block.streamFrame)))
        block.samples = UnsafeBufferPointer(
          rebasing: block.samples[..<(frames * block.channelCount)])
      }
      if block.frameCount > 0 { onCaptured(block) }
    }
  }
}
