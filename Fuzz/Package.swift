// swift-tools-version: 6.0
// libFuzzer targets for every parser of untrusted input. Build and run with
// `make fuzz` (long) or `Scripts/fuzz.sh` (the short run in `make test`).
import PackageDescription

let package = Package(
  name: "micloop-fuzz",
  dependencies: [.package(name: "micloop", path: "..")],
  targets: [
    .executableTarget(
      name: "AudioFileFuzzer", dependencies: [.product(name: "AudioFiles", package: "micloop")]),
    .executableTarget(
      name: "TonePlanFuzzer", dependencies: [.product(name: "SignalDSP", package: "micloop")]),
    .executableTarget(
      name: "CommandLineFuzzer",
      dependencies: [.product(name: "MicLoopCLI", package: "micloop")]),
  ]
)
