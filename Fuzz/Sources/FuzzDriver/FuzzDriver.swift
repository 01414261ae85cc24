/// libFuzzer's driver, in the fuzzer runtime the targets are linked with.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Hands a fuzz target's command line to libFuzzer, which calls `test` with
/// each input. A target's process entry is one call to this.
public func runFuzzer(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
  _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
  var count = argc
  var arguments = argv
  return runFuzzerDriver(&count, &arguments, test)
}
