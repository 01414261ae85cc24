import AudioFiles
import Foundation
import Recording
import TestSupport
import Testing

/// Retention deletes only what micloop wrote and listed: a running
/// session's files (open or closed) belong to that session, a file no
/// index lists is the user's, and a folder below the recording directory is
/// left alone; two recorders in one directory never share, replace or lose
/// a file. Recorders here are driven by hand with the level trigger, so
/// every transmission is where the test puts it.
@Suite struct RetentionTests {
  static let rate = 8_000.0

  /// A recorder in `directory` opening at −30 dBFS, with `budget` bytes
  /// and whatever else `adjust` sets.
  static func recorder(
    in directory: String, budget: Int64? = nil, template: String = FileNaming.defaultTemplate,
    start: Double = 1_795_000_000, events: @escaping (RecorderEvent) -> Void = { _ in },
    adjust: (inout RecorderSettings) -> Void = { _ in }
  ) throws -> Recorder {
    var settings = RecorderSettings()
    settings.trigger = .level(threshold: -30)
    settings.hang = 0.2
    settings.minimum = 0.1
    settings.preRoll = 0.1
    settings.retention = RetentionPolicy(maximumBytes: budget)
    settings.naming = FileNaming(template: template)
    adjust(&settings)
    return try Recorder(
      settings: settings, sampleRate: rate, channelCount: 1, encoding: .pcm16,
      directory: directory, clock: StreamClock(sampleRate: rate, startingAt: start),
      source: "test", listener: events)
  }

  /// Feeds `seconds` of a −10 dBFS tone (`loud`) or of silence.
  static func feed(_ recorder: Recorder, seconds: Double, loud: Bool) {
    let frames = Int(seconds * rate)
    let samples = (0..<frames).map { loud ? Float(0.3 * sin(Double($0) * 0.7)) : 0 }
    samples.withUnsafeBufferPointer { buffer in
      var offset = 0
      while offset < frames {
        let count = min(800, frames - offset)
        recorder.append(buffer.baseAddress! + offset, frameCount: count)
        recorder.update()
        offset += count
      }
    }
  }

  /// A WAV that is not micloop's (no index lists it), of `seconds` of noise.
  static func foreignFile(_ path: String, seconds: Double = 2) throws {
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let writer = try AudioFileWriter(
      path: path, sampleRate: rate, channelCount: 1, encoding: .pcm16)
    try writer.write((0..<Int(seconds * rate)).map { Float(($0 % 7) - 3) / 10 })
    writer.close()
  }

  static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

  /// Recorder B, started in A's folder with a budget smaller than one
  /// recording, deletes nothing of A's — neither its open `.part` file nor
  /// the recording A closed — nor a foreign `.part.wav`, a foreign `.wav`,
  /// a `.part.wav` in a sub-folder, or a file that a forged index names;
  /// A finishes with every file whole and listed.
  @Test func aRunningSessionsAndForeignFilesAreNeverDeleted() throws {
    let scratch = try ScratchDirectory("retention")
    let folder = scratch.file("rec")
    let foreign = [
      "foreign.part.wav", "holiday.wav", "sub/old.part.wav", "2026/11/older.part.wav",
    ]
    for name in foreign { try Self.foreignFile(folder + "/" + name) }
    // An index of no session of micloop's, naming the user's file.
    try #"{"event":"recording","file":"holiday.wav","sidecar":"holiday.json"}"#
      .write(toFile: folder + "/session-forged.jsonl", atomically: true, encoding: .utf8)
    var eventsOfA = [RecorderEvent]()
    let first = try Self.recorder(in: folder) { eventsOfA.append($0) }
    Self.feed(first, seconds: 1, loud: true)
    Self.feed(first, seconds: 1, loud: false)
    Self.feed(first, seconds: 1, loud: true)
    let openName = try #require(first.openFileName)
    var eventsOfB = [RecorderEvent]()
    let second = try Self.recorder(in: folder, budget: 1, start: 1_795_000_100) {
      eventsOfB.append($0)
    }
    Self.feed(second, seconds: 1, loud: true)
    Self.feed(second, seconds: 1, loud: false)
    Self.feed(second, seconds: 1, loud: true)
    second.finish()
    #expect(Self.exists(folder + "/" + openName), "B deleted A's open \(openName)")
    for name in foreign { #expect(Self.exists(folder + "/" + name), "B deleted \(name)") }
    Self.feed(first, seconds: 1, loud: false)
    let summary = first.finish()
    let filesOfA = eventsOfA.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    #expect(summary.files == 2 && filesOfA.count == 2)
    for file in filesOfA {
      let reader = try AudioFileReader(path: folder + "/" + file.name)
      #expect(reader.declaredFrameCount == file.frames, "\(file.name)")
    }
    // B could delete only its own closed recordings.
    let namesOfB = Set(
      eventsOfB.compactMap { if case .recording(let file) = $0 { file.name } else { nil } })
    for event in eventsOfB {
      if case .deleted(let name, _, _) = event { #expect(namesOfB.contains(name), "\(name)") }
    }
  }

  /// Once a session has ended, the next one's budget deletes its
  /// recordings, oldest first, sidecars with them — and still nothing else.
  @Test func anEndedSessionsRecordingsAreDeletedOldestFirst() throws {
    let scratch = try ScratchDirectory("retention")
    let folder = scratch.file("rec")
    try Self.foreignFile(folder + "/holiday.wav")
    var eventsOfA = [RecorderEvent]()
    let first = try Self.recorder(in: folder) { eventsOfA.append($0) }
    for _ in 0..<3 {
      Self.feed(first, seconds: 1, loud: true)
      Self.feed(first, seconds: 1, loud: false)
    }
    first.finish()
    let filesOfA = eventsOfA.compactMap { if case .recording(let file) = $0 { file } else { nil } }
    #expect(filesOfA.count == 3)
    var eventsOfB = [RecorderEvent]()
    let second = try Self.recorder(in: folder, budget: 1, start: 1_795_000_100) {
      eventsOfB.append($0)
    }
    Self.feed(second, seconds: 1, loud: true)
    second.finish()
    let deleted = eventsOfB.compactMap {
      if case .deleted(let name, _, _) = $0 { name } else { nil }
    }
    #expect(deleted == filesOfA.map(\.name), "\(deleted)")
    for file in filesOfA {
      #expect(
        !Self.exists(folder + "/" + file.name) && !Self.exists(folder + "/" + file.sidecarName))
    }
    #expect(Self.exists(folder + "/holiday.wav"))
  }

  /// Two recorders with one name template whose files start in the same
  /// millisecond: each takes its own name at once (`NAME` and `NAME-2`),
  /// neither replaces the other's, and neither loses a frame to a gap.
  @Test func twoRecordersNeverShareAName() throws {
    let scratch = try ScratchDirectory("retention")
    let folder = scratch.file("rec")
    var events = [[RecorderEvent]](repeating: [], count: 2)
    let recorders = try (0..<2).map { which in
      try Self.recorder(in: folder, template: "call") { events[which].append($0) }
    }
    for _ in 0..<3 {
      for recorder in recorders { Self.feed(recorder, seconds: 1, loud: true) }
      for recorder in recorders { Self.feed(recorder, seconds: 1, loud: false) }
    }
    for recorder in recorders { recorder.finish() }
    var names = [String]()
    for list in events {
      #expect(!list.contains { if case .gap = $0 { true } else { false } }, "\(list)")
      for case .recording(let file) in list {
        names.append(file.name)
        let reader = try AudioFileReader(path: folder + "/" + file.name)
        #expect(reader.declaredFrameCount == file.frames)
      }
    }
    #expect(names.count == 6 && Set(names).count == 6, "\(names)")
    #expect(try scratch.names(in: "rec").filter { $0.hasSuffix(".wav") }.count == 6)
  }

  /// Room for the index and about two recordings of 0.9 s (with their
  /// sidecars): a session of four deletes as it goes, never lacking room.
  static let smallBudget: Int64 = 48 * 1024

  /// Which of two recorders keeps a byte budget.
  enum Budget: CaseIterable, Sendable { case none, first, second, both }

  /// Two recorders in one folder, fed a transmission at a time in turn,
  /// in every combination of budgets, name templates and start times,
  /// with foreign files beside them: each transmission of each is in a
  /// closed, whole file its own index lists (or one its own budget
  /// deleted), neither deletes or replaces the other's, and no foreign
  /// file is touched.
  @Test(arguments: Budget.allCases, [FileNaming.defaultTemplate, "call"])
  func twoRecordersInOneFolderLoseNothing(budget: Budget, template: String) throws {
    for offset in [0.0, 0.5] {
      let scratch = try ScratchDirectory("retention")
      let folder = scratch.file("rec")
      let foreign = ["foreign.part.wav", "holiday.wav", "sub/old.part.wav"]
      for name in foreign { try Self.foreignFile(folder + "/" + name) }
      var events = [[RecorderEvent]](repeating: [], count: 2)
      let limits: [Int64?] =
        switch budget {
        case .none: [nil, nil]
        case .first: [Self.smallBudget, nil]
        case .second: [nil, Self.smallBudget]
        case .both: [Self.smallBudget, Self.smallBudget]
        }
      let recorders = try (0..<2).map { which in
        try Self.recorder(
          in: folder, budget: limits[which], template: template,
          start: 1_795_000_000 + Double(which) * offset
        ) { events[which].append($0) }
      }
      for _ in 0..<4 {
        for recorder in recorders { Self.feed(recorder, seconds: 0.6, loud: true) }
        for recorder in recorders { Self.feed(recorder, seconds: 0.6, loud: false) }
      }
      for recorder in recorders { recorder.finish() }
      var allNames = [String]()
      for (which, list) in events.enumerated() {
        #expect(!list.contains { if case .gap = $0 { true } else { false } }, "\(list)")
        let recorded = list.compactMap { if case .recording(let file) = $0 { file } else { nil } }
        #expect(recorded.count == 4, "recorder \(which): \(recorded.map(\.name))")
        let deleted = Set(
          list.compactMap { if case .deleted(let name, _, _) = $0 { name } else { nil } })
        #expect(deleted.isSubset(of: Set(recorded.map(\.name))), "\(deleted)")
        for file in recorded where !deleted.contains(file.name) {
          let reader = try AudioFileReader(path: folder + "/" + file.name)
          #expect(reader.declaredFrameCount == file.frames, "\(file.name)")
        }
        allNames += recorded.map(\.name).filter { !deleted.contains($0) }
      }
      // A name a budget freed may be given again; two files alive never share one.
      #expect(Set(allNames).count == allNames.count, "\(allNames)")
      if budget == .none { #expect(allNames.count == 8) }
      for name in foreign { #expect(Self.exists(folder + "/" + name), "\(name) deleted") }
    }
  }
}
