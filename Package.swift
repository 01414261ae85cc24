// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "micloop",
  products: [
    .executable(name: "micloop", targets: ["micloop"]),
    .library(name: "DuplexIO", targets: ["DuplexIO"]),
    .library(name: "DuplexIOTesting", targets: ["DuplexIOTesting"]),
    .library(name: "SignalDSP", targets: ["SignalDSP"]),
    .library(name: "FeedbackControl", targets: ["FeedbackControl"]),
    .library(name: "Metering", targets: ["Metering"]),
    .library(name: "TonePlans", targets: ["TonePlans"]),
    .library(name: "ToneDecoding", targets: ["ToneDecoding"]),
    .library(name: "AudioFiles", targets: ["AudioFiles"]),
    .library(name: "Recording", targets: ["Recording"]),
    .library(name: "MicLoopKit", targets: ["MicLoopKit"]),
    .library(name: "Plotting", targets: ["Plotting"]),
    .library(name: "Station", targets: ["Station"]),
    // The command line itself, for checking arguments without running them.
    .library(name: "MicLoopCLI", targets: ["MicLoopCLI"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
  ],
  targets: [
    .systemLibrary(
      name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    .systemLibrary(
      name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
    .systemLibrary(
      name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    // Declarations only: plotting loads libcairo.so.2 when it draws.
    .systemLibrary(name: "CCairo", providers: [.apt(["libcairo2-dev"])]),
    // Declarations only: JACK and PipeWire are loaded with dlopen when a device needs them.
    .systemLibrary(name: "CJack", providers: [.apt(["libjack-jackd2-dev"])]),
    // SPA is header-only: its pkg-config entry adds include paths, no library.
    .systemLibrary(
      name: "CPipeWire", pkgConfig: "libspa-0.2", providers: [.apt(["libspa-0.2-dev"])]),
    // Inner loops for wider vectors than the baseline build, chosen at run time.
    .target(name: "CVectorKernels"),
    .target(name: "DuplexIO", dependencies: ["CALSA", "CJack", "CPipeWire"]),
    .target(name: "DuplexIOTesting", dependencies: ["DuplexIO", "SignalDSP"]),
    .target(name: "SignalDSP", dependencies: ["CFFTW", "CVectorKernels"]),
    // The howl guard: detection, notches, ring-out and learned plans, the loop learner.
    .target(name: "FeedbackControl", dependencies: ["SignalDSP", "CVectorKernels"]),
    .target(name: "Metering", dependencies: ["SignalDSP", "CVectorKernels"]),
    .target(name: "TonePlans", dependencies: ["TextFormatting"]),
    .target(
      name: "ToneDecoding", dependencies: ["SignalDSP", "TonePlans", "CFFTW", "CVectorKernels"]),
    .target(name: "AudioFiles", dependencies: ["CSndFile"]),
    // The triggered recorder: transmissions to files, an index, retention.
    .target(
      name: "Recording",
      dependencies: [
        "SignalDSP", "Metering", "TonePlans", "ToneDecoding", "AudioFiles", "TextFormatting",
      ]),
    .target(
      name: "MicLoopKit",
      dependencies: [
        "DuplexIO", "SignalDSP", "FeedbackControl", "Metering", "TonePlans", "ToneDecoding",
        "AudioFiles", "Recording", "TextFormatting",
      ]),
    .target(name: "TextFormatting"),
    .target(
      name: "Console",
      dependencies: [
        "DuplexIO", "FeedbackControl", "Metering", "SignalDSP", "TonePlans", "TextFormatting",
      ]),
    .target(
      name: "Plotting",
      dependencies: ["CCairo", "SignalDSP", "Metering", "TonePlans", "ToneDecoding", "AudioFiles"]),
    // The monitoring station: a read-only HTTP server fed by the control cycle of a live job.
    .target(
      name: "Station",
      dependencies: [
        "TextFormatting",
        .product(name: "FlyingSocks", package: "FlyingFox"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ]),
    .target(
      name: "MicLoopCLI",
      dependencies: [
        "MicLoopKit", "DuplexIO", "DuplexIOTesting", "SignalDSP", "FeedbackControl", "Metering",
        "TonePlans", "ToneDecoding", "AudioFiles", "Recording", "Console", "Plotting",
        "TextFormatting", "Station",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .executableTarget(name: "micloop", dependencies: ["MicLoopCLI"]),
    .executableTarget(
      name: "Passthrough", dependencies: ["DuplexIO"], path: "Examples/Passthrough"),
    .executableTarget(
      name: "ToneGenerator", dependencies: ["DuplexIO"], path: "Examples/ToneGenerator"),
    .executableTarget(
      name: "Recorder", dependencies: ["DuplexIO", "AudioFiles"], path: "Examples/Recorder"),
    // A day of simulated audio through a live job; `make test` runs it optimised.
    .executableTarget(
      name: "micloop-soak",
      dependencies: [
        "MicLoopKit", "DuplexIO", "DuplexIOTesting", "FeedbackControl", "Metering", "TonePlans",
        "AudioFiles", "Recording",
      ],
      path: "Tests/Soak"),
    // The howl guard in simulated rooms; `make feedback-eval` runs it optimised.
    .executableTarget(
      name: "micloop-feedback-eval",
      dependencies: [
        "MicLoopKit", "DuplexIO", "DuplexIOTesting", "SignalDSP", "FeedbackControl", "AudioFiles",
      ],
      path: "Tests/FeedbackEval",
      // Top-level code shared by the cases it runs on two threads.
      swiftSettings: [.swiftLanguageMode(.v5)]),
    .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
    .target(
      name: "TestSupport", dependencies: ["DuplexIO", "AudioFiles", "AllocationCounter"],
      path: "Tests/TestSupport"),
    .testTarget(
      name: "DuplexIOTests",
      dependencies: [
        "DuplexIO", "DuplexIOTesting", "AllocationCounter", "TestSupport", "CPipeWire",
      ]),
    .testTarget(name: "DuplexIOTestingTests", dependencies: ["DuplexIO", "DuplexIOTesting"]),
    .testTarget(name: "SignalDSPTests", dependencies: ["SignalDSP", "TonePlans", "TestSupport"]),
    .testTarget(
      name: "FeedbackControlTests",
      dependencies: ["FeedbackControl", "SignalDSP", "TestSupport", "AllocationCounter"]),
    .testTarget(
      name: "MeteringTests",
      dependencies: ["Metering", "SignalDSP", "CVectorKernels", "TestSupport"]),
    .testTarget(name: "TonePlansTests", dependencies: ["TonePlans"]),
    .testTarget(
      name: "ToneDecodingTests",
      dependencies: ["ToneDecoding", "TonePlans", "CVectorKernels", "TestSupport"]),
    .testTarget(name: "AudioFilesTests", dependencies: ["AudioFiles", "TestSupport"]),
    .testTarget(
      name: "RecordingTests",
      dependencies: ["Recording", "AudioFiles", "Metering", "SignalDSP", "TestSupport"]),
    .testTarget(
      name: "MicLoopKitTests",
      dependencies: [
        "MicLoopKit", "Recording", "SignalDSP", "FeedbackControl", "TonePlans", "ToneDecoding",
        "Metering", "DuplexIO", "DuplexIOTesting", "AudioFiles", "AllocationCounter", "TestSupport",
      ]),
    .testTarget(name: "TextFormattingTests", dependencies: ["TextFormatting"]),
    .testTarget(
      name: "ConsoleTests",
      dependencies: ["Console", "FeedbackControl", "Metering", "TonePlans", "DuplexIO"]),
    .testTarget(name: "PlottingTests", dependencies: ["Plotting", "SignalDSP", "TestSupport"]),
    .testTarget(name: "StationTests", dependencies: ["Station", "TestSupport"]),
    .testTarget(
      name: "MicLoopCLITests",
      dependencies: [
        "MicLoopCLI", "MicLoopKit", "AudioFiles", "Metering", "SignalDSP", "FeedbackControl",
        "CCairo", "TestSupport",
      ],
      linkerSettings: [.linkedLibrary("cairo")]),
  ]
)
