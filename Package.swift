// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "micloop",
  products: [
    .executable(name: "micloop", targets: ["micloop"]),
    .library(name: "MicLoopKit", targets: ["MicLoopKit"]),
    .library(name: "SignalDSP", targets: ["SignalDSP"]),
    .library(name: "DuplexIO", targets: ["DuplexIO"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
  ],
  targets: [
    .systemLibrary(
      name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    .systemLibrary(
      name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
    .systemLibrary(
      name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    .target(
      name: "SignalDSP",
      dependencies: ["CFFTW"],
      swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]),
    .target(
      name: "DuplexIO",
      dependencies: ["CALSA"],
      swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]),
    .target(
      name: "MicLoopKit",
      dependencies: ["SignalDSP", "DuplexIO", "CSndFile"]),
    .executableTarget(
      name: "micloop",
      dependencies: [
        "MicLoopKit", "DuplexIO", "SignalDSP",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
    .testTarget(name: "SignalDSPTests", dependencies: ["SignalDSP"]),
    .testTarget(name: "DuplexIOTests", dependencies: ["DuplexIO", "AllocationCounter"]),
    .testTarget(
      name: "MicLoopKitTests",
      dependencies: ["MicLoopKit", "SignalDSP", "DuplexIO", "AllocationCounter"]),
    .testTarget(name: "MicLoopCLITests", dependencies: ["MicLoopKit"]),
  ]
)
