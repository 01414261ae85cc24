/// Something that went wrong in a session without ending it: what happened
/// and, apart, what frees the way, so that a front end can word the fix
/// with its own options. Pure data; any thread.
public struct RecorderProblem: Sendable, Equatable, CustomStringConvertible {
  /// What the user can do about it.
  public enum Fix: Sendable, Equatable {
    /// Free space on the disk, or set a byte budget or a free-space floor
    /// so that the oldest recordings are deleted.
    case freeSpaceOrSetABudget
    /// Raise the byte budget (`RecorderSettings.maximumBytes`).
    case raiseTheByteBudget
    /// Free space on the disk, or lower the free-space floor
    /// (`RecorderSettings.minimumFreeBytes`).
    case freeSpaceOrLowerTheFloor
    /// Check the directory's permissions and disk.
    case checkTheDirectory
    /// Nothing to do but know it.
    case none

    /// The fix in the library's own words.
    public var words: String {
      switch self {
      case .freeSpaceOrSetABudget:
        "free space there, or set a byte budget or a free-space floor to delete the oldest recordings"
      case .raiseTheByteBudget: "raise the byte budget"
      case .freeSpaceOrLowerTheFloor: "free space there or lower the free-space floor"
      case .checkTheDirectory: "check the directory's permissions and disk"
      case .none: ""
      }
    }
  }

  /// What happened.
  public var cause: String
  public var fix: Fix
  /// What goes on meanwhile (after the fix).
  public var meanwhile: String

  public init(cause: String, fix: Fix = .none, meanwhile: String = "") {
    self.cause = cause
    self.fix = fix
    self.meanwhile = meanwhile
  }

  /// The problem in one line with `fixWords` (by default the library's
  /// own words for `fix`).
  public func line(fixWords: String? = nil) -> String {
    let words = fixWords ?? fix.words
    return cause + (words.isEmpty ? "" : "; " + words) + (meanwhile.isEmpty ? "" : ". " + meanwhile)
  }

  public var description: String { line() }
}
