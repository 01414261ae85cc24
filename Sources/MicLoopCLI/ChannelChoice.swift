/// `--channel N` (counted from 1) checked against the channels there are;
/// shared by the commands that analyse one channel. Control thread.
enum ChannelChoice {
  /// The zero-based channel for a live capture of `count` channels.
  static func index(_ channel: Int?, capturing count: Int) throws -> Int? {
    guard let channel else { return nil }
    guard channel <= count else {
      throw CommandFailure(
        message:
          "--channel \(channel): capturing \(count) channel(s); raise --channels or pick 1 to \(count)"
      )
    }
    return channel - 1
  }

  /// The zero-based channel for a file of `count` channels.
  static func index(_ channel: Int?, in path: String, channelCount count: Int) throws -> Int? {
    guard let channel else { return nil }
    guard channel <= count else {
      throw CommandFailure(
        message:
          "--channel \(channel): \(path) has \(count) channel\(count == 1 ? "" : "s"); pick 1 to \(count)"
      )
    }
    return channel - 1
  }
}
