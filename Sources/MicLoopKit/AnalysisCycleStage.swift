/// The analysis ring's control-cycle half: the mono input the audio thread
/// left for the analysers (the tone decoder), handed on in stream order up
/// to the job's length. Frames the ring dropped (a control thread that fell
/// seconds behind) are handed on as silence, so the analysers' time stays
/// the stream's. Control thread only.
final class AnalysisCycleStage: LiveCycleStage {
  /// Frames of silence handed on at a time in place of dropped frames.
  static let silenceBlock = 4096

  private let ring: SPSCRing<Float>
  private let onInput: (UnsafeBufferPointer<Float>) -> Void
  /// Stream frames handed on so far.
  private var analysed: Int64
  /// The ring's dropped frames already handed on as silence.
  private var silencedDrops: Int
  private var silence = [Float]()

  /// A stage for `ring`, whose next frame is stream frame `streamFrame`.
  init(
    ring: SPSCRing<Float>, from streamFrame: Int64,
    onInput: @escaping (UnsafeBufferPointer<Float>) -> Void
  ) {
    self.ring = ring
    self.onInput = onInput
    analysed = streamFrame
    silencedDrops = ring.dropped.load(ordering: .relaxed)
  }

  func runCycle(_ cycle: LiveCycle) {
    ring.drain { samples in
      cycle.arrived()
      hand(samples, cycle)
    }
    let dropped = ring.dropped.load(ordering: .relaxed)
    guard dropped > silencedDrops else { return }
    if silence.isEmpty { silence = [Float](repeating: 0, count: Self.silenceBlock) }
    var left = dropped - silencedDrops
    silencedDrops = dropped
    while left > 0 {
      let count = min(left, silence.count)
      silence.withUnsafeBufferPointer { hand(UnsafeBufferPointer(rebasing: $0[..<count]), cycle) }
      left -= count
    }
  }

  /// Hands `samples` on, as far as the job's length allows.
  private func hand(_ samples: UnsafeBufferPointer<Float>, _ cycle: LiveCycle) {
    var count = samples.count
    if let limit = cycle.frameLimit { count = Int(max(0, min(Int64(count), limit - analysed))) }
    analysed += Int64(count)
    if count > 0 { onInput(UnsafeBufferPointer(rebasing: samples[..<count])) }
  }
}
