import TonePlans

/// Turns a call sent twice into one: repeaters and dispatch consoles send
/// the same selective call again within a second or two, and one alarm is
/// what a listener wants. A call (a sequence event) identical to one that
/// ended at most `window` seconds before it is dropped together with its
/// tones; so is a third, within the window of the second. Single tones of
/// plans without calls (DTMF digits) always pass: a digit pressed twice is
/// two digits.
///
/// Holds the tones of call plans until their call is reported. Control
/// thread; allocates.
public struct RepeatSuppressor: Sendable {
  /// Seconds after a call's end during which the same call is a repeat; 0 passes everything.
  public let window: Double
  private let callPlans: Set<String>
  private var lastEnd: [String: Double] = [:]
  private var held: [DecodedTone] = []

  public init(plans: [TonePlan], window: Double) {
    self.window = window
    callPlans = Set(
      plans.filter {
        switch $0.kind {
        case .sequential, .characterCode, .pager, .alarm: return true
        case .dualTone, .arbitrary, .subAudible: return false
        }
      }.map(\.name))
  }

  /// Passes `event` on through `emit`, or holds or drops it.
  public mutating func filter(_ event: ToneDecoderEvent, emit: (ToneDecoderEvent) -> Void) {
    guard window > 0 else { return emit(event) }
    switch event {
    case .tone(let tone):
      if callPlans.contains(tone.plan) { held.append(tone) } else { emit(event) }
    case .toneStart:
      emit(event)
    case .sequence(let call):
      let key = call.plan + "\u{0}" + call.symbols
      let tones = held.filter { $0.plan == call.plan }
      held.removeAll { $0.plan == call.plan }
      let isRepeat = lastEnd[key].map { call.time - $0 <= window } ?? false
      lastEnd[key] = call.time + call.duration
      guard !isRepeat else { return }
      for tone in tones { emit(.tone(tone)) }
      emit(event)
    case .page(let page):
      let key = page.plan + "\u{0}" + (page.isGroupCall ? "group" : "page")
      let isRepeat = lastEnd[key].map { page.time - $0 <= window } ?? false
      lastEnd[key] = page.time + page.duration
      if !isRepeat { emit(event) }
    }
  }

  /// Passes on tones still held at the end of the stream (a call that never validated).
  public mutating func finish(emit: (ToneDecoderEvent) -> Void) {
    for tone in held { emit(.tone(tone)) }
    held.removeAll()
  }
}
