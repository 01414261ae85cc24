import CCairo
import Foundation
import TestSupport
import Testing

/// `micloop plot` read back as a person sees it: the picture's pixels and
/// the SVG's words.
@Suite struct PlotCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// 1.5 s of silence, speech (1.5–about 4 s), silence to 6.5 s, the DTMF
  /// keys 1 5 9, silence to 8 s, a 1 kHz tone at −10 dBFS for 1.5 s, 1.5 s
  /// of silence. Returns the path and when the speech and the tone are.
  func talkWithTones() throws -> (path: String, speech: ClosedRange<Double>, tone: Double) {
    try MicLoopBinary.shell([
      "espeak-ng", "-w", file("speech.wav"), "Hello, this is a test of the plot.",
    ])
    try MicLoopBinary.shell([
      "sox", "-V1", file("speech.wav"), "-r", "48000", "-b", "16", file("speech48.wav"),
      "gain", "-n", "-6",
    ])
    let speechSeconds = Double(try MicLoopBinary.samples(file("speech48.wav")).count) / 48_000
    let sent = try MicLoopBinary.run(["send", "--plan", "dtmf", "159", "-o", file("keys.wav")])
    #expect(sent.status == 0, "\(sent.errorOutput)")
    func silence(_ name: String, _ seconds: Double) throws -> String {
      try MicLoopBinary.shell([
        "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", file(name), "trim", "0",
        String(seconds),
      ])
      return file(name)
    }
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", file("tone.wav"), "synth", "1.5",
      "sine", "1000", "vol", "0.316",
    ])
    let keysSeconds = Double(try MicLoopBinary.samples(file("keys.wav")).count) / 48_000
    let afterSpeech = 6.5 - 1.5 - speechSeconds
    let afterKeys = 8 - 6.5 - keysSeconds
    try MicLoopBinary.shell(
      [
        "sox", "-V1", try silence("lead.wav", 1.5), file("speech48.wav"),
        try silence("gap1.wav", afterSpeech), file("keys.wav"), try silence("gap2.wav", afterKeys),
        file("tone.wav"), try silence("tail.wav", 1.5), "-b", "16", file("talk.wav"),
      ])
    return (file("talk.wav"), 1.5...(1.5 + speechSeconds), 8.75)
  }

  /// The PNG's pixels as 0xRRGGBB, row by row.
  struct Picture {
    var width: Int
    var height: Int
    var pixels: [UInt32]

    init(png path: String) throws {
      let surface = try #require(cairo_image_surface_create_from_png(path))
      defer { cairo_surface_destroy(surface) }
      #expect(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS)
      width = Int(cairo_image_surface_get_width(surface))
      height = Int(cairo_image_surface_get_height(surface))
      let stride = Int(cairo_image_surface_get_stride(surface))
      let data = try #require(cairo_image_surface_get_data(surface))
      pixels = []
      for y in 0..<height {
        let row = UnsafeRawPointer(data + y * stride).assumingMemoryBound(to: UInt32.self)
        for x in 0..<width { pixels.append(row[x] & 0xFF_FFFF) }
      }
    }

    func colour(x: Int, y: Int) -> UInt32 { pixels[y * width + x] }
    /// Whether the pixel is `expected` within 2 of 255 in each component.
    func matches(x: Int, y: Int, _ expected: UInt32) -> Bool {
      let pixel = colour(x: x, y: y)
      return [16, 8, 0].allSatisfy {
        abs(Int(pixel >> UInt32($0) & 0xFF) - Int(expected >> UInt32($0) & 0xFF)) <= 2
      }
    }
    func brightness(x: Int, y: Int) -> Int {
      let pixel = colour(x: x, y: y)
      return Int(pixel >> 16 & 0xFF) + Int(pixel >> 8 & 0xFF) + Int(pixel & 0xFF)
    }
  }

  @Test func thePictureShowsTalkTonesAndTheSpectrumWhereTheyAre() throws {
    let signal = try talkWithTones()
    let png = file("talk.png")
    let result = try MicLoopBinary.run([
      "plot", "-i", signal.path, "-o", png, "--plan", "dtmf", "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let plot = try #require(
      try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    let duration = try #require(plot["duration"] as? Double)
    let levels = try #require(plot["levels"] as? [String: Int])
    let spectrogram = try #require(plot["spectrogram"] as? [String: Int])
    let maximumFrequency = try #require(plot["max_frequency"] as? Double)
    let picture = try Picture(png: png)
    let size = (picture.width, picture.height)
    #expect(size == (1600, 900))
    func x(_ time: Double) -> Int {
      levels["x"]! + Int(time / duration * Double(levels["width"]!))
    }
    // Above the curves, the level panel is shaded green in talk, white outside.
    let top = levels["y"]! + 3
    let talkShade: UInt32 = 0xCCEDCC
    for time in [
      signal.speech.lowerBound + 0.3, (signal.speech.lowerBound + signal.speech.upperBound) / 2,
    ] {
      let shaded = picture.matches(x: x(time), y: top, talkShade)
      #expect(shaded, "at \(time) s")
    }
    for time in [0.5, 1.2, signal.speech.upperBound + 1, 7.7, 10.8] {
      let white = picture.matches(x: x(time), y: top, 0xFFFFFF)
      #expect(white, "at \(time) s: \(String(picture.colour(x: x(time), y: top), radix: 16))")
    }
    // The keys were decoded and marked.
    let tones = try #require(plot["tones"] as? [[String: Any]])
    #expect(tones.compactMap { $0["label"] as? String } == ["1", "5", "9"])
    // During the tone, the brightest spectrogram row is the one of 1 kHz.
    let column = x(signal.tone)
    let rows = spectrogram["height"]!
    let brightest: Int = (0..<rows).max {
      picture.brightness(x: column, y: spectrogram["y"]! + $0)
        < picture.brightness(x: column, y: spectrogram["y"]! + $1)
    }!
    let expected = rows - 1 - Int(1000 / maximumFrequency * Double(rows))
    #expect(abs(brightest - expected) <= 1, "row \(brightest), 1 kHz is row \(expected)")

    // The SVG carries the same labels as words.
    let svg = file("talk.svg")
    let vector = try MicLoopBinary.run(["plot", "-i", signal.path, "-o", svg, "--plan", "dtmf"])
    #expect(vector.status == 0, "\(vector.errorOutput)")
    let text = try String(contentsOfFile: svg, encoding: .utf8)
    #expect(text.hasPrefix("<?xml"))
    for key in ["1", "5", "9"] { #expect(text.contains(">\(key)</text>"), "\(key) in the SVG") }
    #expect(vector.output.hasPrefix("Wrote \(svg) (1600×900)"))
  }

  @Test func badOutputsAndInputsAreOneLineErrors() throws {
    let wrongType = try MicLoopBinary.run(["plot", "-i", "x.wav", "-o", "plot.jpg"])
    #expect(wrongType.status != 0)
    #expect(wrongType.errorOutput.contains(".png, .svg or .pdf"))
    let tiny = try MicLoopBinary.run(["plot", "-i", "x.wav", "-o", "p.png", "--width", "10"])
    #expect(tiny.status != 0 && tiny.errorOutput.contains("--width"))
    let missing = try MicLoopBinary.run(["plot", "-i", file("none.wav"), "-o", file("p.png")])
    #expect(missing.status == 1)
    #expect(missing.errorLines.count == 1, "\(missing.errorOutput)")
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "8000", "-c", "1", file("short.wav"), "trim", "0", "1",
    ])
    let unwritable = try MicLoopBinary.run([
      "plot", "-i", file("short.wav"), "-o", "/nonexistent/dir/p.png",
    ])
    #expect(unwritable.status == 1)
    #expect(unwritable.errorLines.count == 1, "\(unwritable.errorOutput)")
    #expect(unwritable.errorOutput.contains("/nonexistent/dir/p.png"))
  }
}
