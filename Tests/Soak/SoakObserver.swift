import Foundation
import Metering
import MicLoopKit
import TonePlans

/// What the soak's live job reported, gathered on the job's control thread:
/// the digits and where they were heard, anything else decoded, what the
/// howl guard did, the meter's summary, and resident memory once an hour
/// of stream time.
final class SoakObserver: LiveJobObserver {
  let rate: Int
  let processor: LiveProcessor
  var digitTimes = [Double]()
  var otherSymbols = 0
  var guardActions = 0
  var xruns = 0
  var summaryDuration: Double?
  var resident = [Int]()
  private var nextHour = 1

  init(rate: Int, expectedDigits: Int, processor: LiveProcessor) {
    self.rate = rate
    self.processor = processor
    digitTimes.reserveCapacity(expectedDigits + 16)
  }

  func handle(_ event: LiveJobEvent) {
    switch event {
    case .meter(let meter):
      if case .summary(let summary) = meter { summaryDuration = summary.duration }
    case .tone(let tone):
      if case .tone(let decoded) = tone, decoded.symbol == "5" {
        digitTimes.append(decoded.time)
      } else {
        otherSymbols += 1
      }
    case .feedback: guardActions += 1
    case .xrun: xruns += 1
    default: break
    }
  }

  func shouldStop() -> Bool {
    let seconds = processor.framesProcessed.load(ordering: .relaxed) / rate
    if seconds >= nextHour * 3600 {
      resident.append(Self.residentBytes())
      nextHour += 1
    }
    return false
  }

  /// Resident memory of this process in bytes.
  static func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
      let pages = Int(statm.split(separator: " ")[1])
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }
}
