import ArgumentParser
import MicLoopKit

/// `--gain-db`: one gain in dB ("-6"), or a schedule of gains ("-6,3@4,0@10":
/// −6 dB from the start, +3 dB from 4 s, 0 dB from 10 s of stream time).
struct GainSchedule: ExpressibleByArgument, Sendable {
  /// The gain from the start.
  var initial: Double
  /// Later gains and when they start, in time order.
  var changes: [GainChange]

  init(initial: Double, changes: [GainChange] = []) {
    self.initial = initial
    self.changes = changes
  }

  init?(argument: String) {
    let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
    guard let first = parts.first, let initial = Double(first), initial.isFinite else {
      return nil
    }
    var changes = [GainChange]()
    for part in parts.dropFirst() {
      let pieces = part.split(separator: "@", omittingEmptySubsequences: false)
      guard pieces.count == 2, let decibels = Double(pieces[0]),
        let time = Seconds(argument: String(pieces[1]))
      else { return nil }
      changes.append(GainChange(time: time.value, decibels: decibels))
    }
    self.initial = initial
    self.changes = changes
  }

  var defaultValueDescription: String { String(initial) }

  /// Refuses gains outside −120…40 dB and times that are not increasing.
  func validate(_ option: String) throws {
    for value in [initial] + changes.map(\.decibels) {
      guard value.isFinite, (-120...40).contains(value) else {
        throw ValidationError("\(option) must be between -120 and 40 dB, not \(value)")
      }
    }
    var last = 0.0
    for change in changes {
      guard change.time.isFinite, change.time > last, change.time <= Seconds.longest else {
        throw ValidationError(
          "\(option): each later gain needs a later time in seconds, as in -6,3@4,0@10")
      }
      last = change.time
    }
  }
}

/// An on/off switch on the command line.
enum Switch: String, ExpressibleByArgument, Sendable, CaseIterable {
  case on, off
}
