#if canImport(Glibc)
  import Glibc
#endif

/// Keys a live job reacts to.
public enum TerminalKey: Sendable, Equatable {
  case up, down, mute, quit, clearClips
}

/// Reads single key presses from a terminal on standard input without
/// waiting for Enter, and restores the terminal afterwards. Control thread.
public final class TerminalKeys {
  private var original = termios()
  private let isActive: Bool
  private var pending = [UInt8]()

  /// Switches standard input to raw key reading when it is a terminal.
  public init() {
    guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0 else {
      isActive = false
      return
    }
    var raw = original
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
    withUnsafeMutableBytes(of: &raw.c_cc) { cc in
      cc[Int(VMIN)] = 0
      cc[Int(VTIME)] = 0
    }
    isActive = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
  }

  deinit { restore() }

  /// Puts the terminal back as it was.
  public func restore() {
    if isActive { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
  }

  /// Keys pressed since the last call (never blocks).
  public func read() -> [TerminalKey] {
    guard isActive else { return [] }
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = Glibc.read(STDIN_FILENO, &buffer, 64)
    if count > 0 { pending += buffer.prefix(count) }
    var keys = [TerminalKey]()
    while !pending.isEmpty {
      if pending.starts(with: [27, 91, 65]) {
        keys.append(.up)
        pending.removeFirst(3)
      } else if pending.starts(with: [27, 91, 66]) {
        keys.append(.down)
        pending.removeFirst(3)
      } else if pending == [27] || pending == [27, 91] {
        break  // the rest of an arrow key is on its way
      } else {
        switch pending.removeFirst() {
        case UInt8(ascii: "m"), UInt8(ascii: "M"): keys.append(.mute)
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
        case UInt8(ascii: "c"), UInt8(ascii: "C"): keys.append(.clearClips)
        case UInt8(ascii: "+"): keys.append(.up)
        case UInt8(ascii: "-"): keys.append(.down)
        default: break
        }
      }
    }
    return keys
  }
}
