import FuzzDriver

/// The process entry SwiftPM links this target with: libFuzzer runs `fuzzHTTPRequest`.
@_cdecl("HTTPRequestFuzzer_main")
func fuzzerEntry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
  runFuzzer(argc, argv, fuzzHTTPRequest)
}
