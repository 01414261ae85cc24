import ToneDecoding
import TonePlans

/// One input: a plan name on the first line, a text to send after it, as
/// `--plan` and `send` take them. The plan is built, scheduled for the text
/// and set up for decoding at several rates; refusals are answers.

func fuzzTonePlan(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
  guard let name = parts.first, let plan = TonePlan.named(String(name)) else { return 0 }
  let message = parts.count > 1 ? String(parts[1]) : ""
  for rate in [8_000.0, 22_050, 48_000] {
    _ = try? plan.schedule(for: message, sampleRate: rate)
    _ = try? ToneDecoder(plans: [plan], sampleRate: rate)
  }
  return 0
}
