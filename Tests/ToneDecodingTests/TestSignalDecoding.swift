import TestSupport
import ToneDecoding
import TonePlans

/// How the tone-decoding tests hear a `TestSignal`: through a `ToneDecoder`, in blocks
/// of varying size.
extension TestSignal {
  /// Decodes the signal in blocks of varying size, as a device would deliver it.
  func decode(_ plans: [TonePlan], settings: ToneDetectionSettings = ToneDetectionSettings())
    throws -> [ToneDecoderEvent]
  {
    let decoder = try ToneDecoder(plans: plans, sampleRate: sampleRate, settings: settings)
    var events = [ToneDecoderEvent]()
    var offset = 0
    var block = 37
    samples.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(block, all.count - offset)
        decoder.process(UnsafeBufferPointer(rebasing: all[offset..<offset + count])) {
          events.append($0)
        }
        offset += count
        block = block * 7 % 1_021 + 16
      }
    }
    decoder.finish { events.append($0) }
    return events
  }
}

extension [ToneDecoderEvent] {
  var tones: [DecodedTone] {
    compactMap { if case .tone(let tone) = $0 { tone } else { nil } }
  }
  var sequences: [DecodedSequence] {
    compactMap { if case .sequence(let sequence) = $0 { sequence } else { nil } }
  }
  var symbols: String { String(tones.map(\.symbol)) }
}
