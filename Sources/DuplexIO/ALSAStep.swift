/// A step of opening, setting up or running an ALSA stream, as its errors
/// name it. The step, not the wording, decides what kind of failure an
/// errno is (`DuplexError.alsa`).
enum ALSAStep {
  /// `snd_pcm_open`.
  case open
  /// A hardware or software parameter call other than the three below,
  /// worded as a verb phrase on the device ("set avail_min of").
  case parameter(String)
  case setFormat
  case setChannels
  case setRate
  /// `snd_pcm_prepare` after the parameters are applied.
  case prepare
  /// A call of the running loop.
  case loop(LoopOperation)

  /// Whether the step belongs to setting the device up (a server's plugin
  /// answers EIO there when it has no source or sink of that name).
  var isSetUp: Bool {
    switch self {
    case .parameter, .setFormat, .setChannels, .setRate, .prepare: return true
    case .open, .loop: return false
    }
  }

  var description: String {
    switch self {
    case .open: return "open"
    case .parameter(let words): return words
    case .setFormat: return "set format"
    case .setChannels: return "set channels"
    case .setRate: return "set rate"
    case .prepare: return "prepare"
    case .loop(let operation): return operation.description
    }
  }
}
