import Testing

@testable import DuplexIO

#if canImport(Glibc)
  import Glibc
#endif

/// Each device failure reads as one line that names the device and what
/// failed, in the library's words (no command-line options).
@Suite struct DuplexErrorTests {
  @Test func alsaCodesAreClassified() {
    #expect(
      DuplexError.alsa(step: .open, device: "hw:9", code: -ENOENT).kind == .unknownDevice)
    #expect(DuplexError.alsa(step: .open, device: "hw:1,0", code: -EBUSY).kind == .deviceBusy)
    #expect(
      DuplexError.alsa(step: .setRate, device: "hw:1,0", code: -EINVAL).kind
        == .rateUnavailable)
    #expect(
      DuplexError.alsa(step: .loop(.capture), device: "pulse", code: -EIO).kind == .deviceLost)
    // A stream that stopped moving for seconds: the loop's verdict, worded as a timeout.
    let stalled = DuplexError.alsa(step: .loop(.wait), device: "pulse", code: -ETIMEDOUT)
    #expect(stalled.kind == .deviceLost && stalled.description.contains("timed out"))
    // Refused while being set up: a server without that source, not a device gone.
    #expect(
      DuplexError.alsa(
        step: .parameter("apply the hardware parameters of"), device: "pulse:x", code: -EIO
      )
      .kind == .setUpRefused)
    #expect(
      DuplexError.alsa(step: .open, device: "pulse", code: -ECONNREFUSED).kind
        == .serverUnreachable)
  }

  @Test func descriptionsNameDeviceAndValueOnOneLineWithoutOptions() {
    let errors = [
      DuplexError.alsa(step: .open, device: "hw:1,0", code: -EBUSY),
      DuplexError.alsa(step: .setRate, device: "hw:1,0", value: "705600 Hz", code: -EINVAL),
      DuplexError.alsa(step: .loop(.capture), device: "pulse", code: -EIO),
      DuplexError(
        .threadUnavailable, operation: "start the audio thread", device: "", code: EAGAIN),
    ]
    #expect(errors[0].description.contains("'hw:1,0' is busy"))
    #expect(errors[1].description.contains("705600 Hz on hw:1,0 not available"))
    #expect(errors[2].description.contains("went away during capture"))
    #expect(errors[2].isDeviceLost)
    for error in errors {
      #expect(!error.description.contains("\n"))
      #expect(!error.description.contains("--"), "\(error.description)")
    }
  }

  @Test func errnoIsStoredPositive() {
    let error = DuplexError(.failed, operation: "wait", device: "x", code: -EIO)
    #expect(error.code == EIO)
    #expect(error.reason == String(cString: strerror(EIO)))
  }
}
