import DuplexIO
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Each device failure reads as one line that names the device and the fix.
@Suite struct ALSAErrorTests {
  @Test func busyDeviceNamesTheDeviceAndHowToFreeIt() {
    let error = ALSAError(operation: "open", device: "hw:1,0", code: -EBUSY)
    #expect(error.description.contains("'hw:1,0' is busy"))
    #expect(error.description.contains("fuser"))
    #expect(!error.description.contains("\n"))
  }

  @Test func unknownDeviceAndUnsupportedRatePointToTheFix() {
    let unknown = ALSAError(operation: "open", device: "hw:9", code: -ENOENT)
    #expect(unknown.description.contains("micloop devices"))
    let rate = ALSAError(operation: "set rate", device: "hw:1,0", value: "705600 Hz", code: -EINVAL)
    #expect(rate.description.contains("705600 Hz on hw:1,0 not available"))
    #expect(rate.description.contains("--rate"))
  }

  @Test func lostDeviceSaysItWentAway() {
    let lost = ALSAError(operation: "capture", device: "pulse", code: -EIO)
    #expect(lost.isDeviceLost)
    #expect(lost.description.contains("went away"))
  }
}
