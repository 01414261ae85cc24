/// The Q of each two-pole section of a Butterworth filter: cascaded, the
/// sections give the flattest pass band of their order. Every filter that
/// is a Butterworth takes its sections' Q from here. Pure data; any thread.
public enum Butterworth {
  /// A 2nd-order filter's one section: 1/√2.
  public static let secondOrderQ = 0.707_106_8
  /// A 4th-order filter's two sections: 1 / (2 cos(π/8)) and
  /// 1 / (2 cos(3π/8)).
  public static let fourthOrderQ = (0.541_196_1, 1.306_563)
}
