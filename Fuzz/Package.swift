// swift-tools-version: 6.0
// libFuzzer targets for every parser of untrusted input. Build and run with
// `make fuzz` (long) or `Scripts/fuzz.sh` (the short run in `make test`).
import PackageDescription

let package = Package(
  name: "micloop-fuzz",
  dependencies: [.package(name: "micloop", path: "..")],
  targets: [
    .target(name: "FuzzDriver"),
    .executableTarget(
      name: "AudioFileFuzzer",
      dependencies: ["FuzzDriver", .product(name: "AudioFiles", package: "micloop")]),
    .executableTarget(
      name: "TonePlanFuzzer",
      dependencies: [
        "FuzzDriver", .product(name: "TonePlans", package: "micloop"),
        .product(name: "ToneDecoding", package: "micloop"),
      ]),
    .executableTarget(
      name: "FileJobFuzzer",
      dependencies: [
        "FuzzDriver", .product(name: "AudioFiles", package: "micloop"),
        .product(name: "Metering", package: "micloop"),
        .product(name: "MicLoopKit", package: "micloop"),
        .product(name: "Plotting", package: "micloop"),
        .product(name: "Recording", package: "micloop"),
        .product(name: "SignalDSP", package: "micloop"),
        .product(name: "ToneDecoding", package: "micloop"),
        .product(name: "TonePlans", package: "micloop"),
      ]),
    .executableTarget(
      name: "HTTPRequestFuzzer",
      dependencies: ["FuzzDriver", .product(name: "Station", package: "micloop")]),
    .executableTarget(
      name: "CommandLineFuzzer",
      dependencies: ["FuzzDriver", .product(name: "MicLoopCLI", package: "micloop")]),
  ]
)
