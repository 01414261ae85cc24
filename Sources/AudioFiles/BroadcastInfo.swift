internal import CSndFile

/// The Broadcast Wave Format `bext` chunk (EBU Tech 3285) of a WAV or RF64
/// file: who made it, when, and the position of its first sample as a
/// count of samples since midnight (`timeReference`), which lets editors
/// place a file on a timeline to the sample. Pure data; any thread.
public struct BroadcastInfo: Sendable, Equatable {
  /// Free text, at most 256 bytes.
  public var description: String
  /// The program or device that made the file, at most 32 bytes.
  public var originator: String
  /// `yyyy-mm-dd` and `hh-mm-ss` (the standard's separators).
  public var originationDate: String
  public var originationTime: String
  /// The first sample's position in samples since midnight.
  public var timeReference: UInt64
  /// How the audio was made (one line per step), at most 256 bytes.
  public var codingHistory: String

  public init(
    description: String, originator: String, originationDate: String, originationTime: String,
    timeReference: UInt64, codingHistory: String = ""
  ) {
    self.description = description
    self.originator = originator
    self.originationDate = originationDate
    self.originationTime = originationTime
    self.timeReference = timeReference
    self.codingHistory = codingHistory
  }

  /// The chunk as libsndfile takes it (version 1, no loudness fields).
  var libsndfileInfo: SF_BROADCAST_INFO {
    var info = SF_BROADCAST_INFO()
    Self.copy(description, into: &info.description)
    Self.copy(originator, into: &info.originator)
    Self.copy(originationDate, into: &info.origination_date)
    Self.copy(originationTime, into: &info.origination_time)
    info.time_reference_low = UInt32(truncatingIfNeeded: timeReference)
    info.time_reference_high = UInt32(truncatingIfNeeded: timeReference >> 32)
    info.version = 1
    let history = Array(codingHistory.utf8.prefix(255))
    Self.copy(codingHistory, into: &info.coding_history)
    info.coding_history_size = UInt32(history.count)
    return info
  }

  /// The chunk's fields read back by libsndfile from `info`.
  init(_ info: SF_BROADCAST_INFO) {
    var info = info
    description = Self.text(&info.description)
    originator = Self.text(&info.originator)
    originationDate = Self.text(&info.origination_date)
    originationTime = Self.text(&info.origination_time)
    timeReference = UInt64(info.time_reference_low) | UInt64(info.time_reference_high) << 32
    codingHistory = Self.text(&info.coding_history)
  }

  /// Copies `text` into a fixed C character array, cut to fit; the rest is zero.
  private static func copy<Field>(_ text: String, into field: inout Field) {
    withUnsafeMutableBytes(of: &field) { bytes in
      bytes.initializeMemory(as: UInt8.self, repeating: 0)
      for (index, byte) in text.utf8.prefix(bytes.count).enumerated() { bytes[index] = byte }
    }
  }

  /// The text in a fixed C character array, up to its first zero.
  private static func text<Field>(_ field: inout Field) -> String {
    withUnsafeBytes(of: &field) { bytes in
      String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}

extension AudioFileReader {
  /// The file's `bext` chunk, if it has one (WAV and RF64).
  public var broadcastInfo: BroadcastInfo? {
    guard let handle = handleForMetadata else { return nil }
    var info = SF_BROADCAST_INFO()
    guard
      sf_command(
        handle, Int32(SFC_GET_BROADCAST_INFO), &info, Int32(MemoryLayout.size(ofValue: info)))
        == Int32(SF_TRUE)
    else { return nil }
    return BroadcastInfo(info)
  }
}
