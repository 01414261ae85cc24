import Foundation
import TestSupport
import Testing

/// `micloop meter --loudness` on the EBU Tech 3341 and 3342 cases (made
/// with sox) and against libebur128 on twenty programme-like files.
@Suite struct LoudnessCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// A file of 1 kHz sine segments (seconds, dBFS); `channels` copies of each.
  func tones(_ name: String, _ segments: [(Double, Double)], channels: Int = 2) throws -> String {
    var parts = [String]()
    for (index, segment) in segments.enumerated() {
      let part = file("\(name)-\(index).wav")
      try MicLoopBinary.shell([
        "sox", "-V1", "-n", "-r", "48000", "-b", "32", "-e", "floating-point", "-c",
        String(channels), part, "synth", String(segment.0), "sine", "1000", "vol",
        "\(segment.1)dB",
      ])
      parts.append(part)
    }
    let path = file("\(name).wav")
    try MicLoopBinary.shell(["sox", "-V1"] + parts + [path])
    return path
  }

  func summary(_ path: String) throws -> [String: Any] {
    let result = try MicLoopBinary.run(["meter", "--loudness", "--json", "--input", path])
    #expect(result.status == 0, "\(result.errorOutput)")
    let last = result.output.split(separator: "\n").last ?? ""
    return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
  }

  @Test func tech3341CasesReadWithinATenthOfALoudnessUnit() throws {
    let cases: [(name: String, segments: [(Double, Double)], expected: Double)] = [
      ("case1", [(20, -23)], -23),
      ("case2", [(20, -33)], -33),
      ("case3", [(10, -36), (60, -23), (10, -36)], -23),
      ("case4", [(10, -72), (10, -36), (60, -23), (10, -36), (10, -72)], -23),
      ("case5", [(20, -26), (20.1, -20), (20, -26)], -23),
    ]
    for item in cases {
      let measured = try summary(try tones(item.name, item.segments))
      let integrated = try #require(measured["integrated_lufs"] as? Double)
      #expect(abs(integrated - item.expected) <= 0.1, "\(item.name): \(integrated) LUFS")
    }
    // Case 6: 5.0 — L and R at −28, C at −24, Ls and Rs at −30 dBFS.
    let levels = [-28.0, -28, -24, -30, -30]
    let channels = try levels.enumerated().map {
      try tones("case6-\($0.offset)", [(20, $0.element)], channels: 1)
    }
    let surround = file("case6.wav")
    try MicLoopBinary.shell(["sox", "-V1", "-M"] + channels + [surround])
    let integrated = try #require(try summary(surround)["integrated_lufs"] as? Double)
    #expect(abs(integrated - -23) <= 0.1, "case6: \(integrated) LUFS")
  }

  @Test func tech3342CasesReadWithinOneLoudnessUnit() throws {
    let cases: [(levels: [Double], expected: Double)] = [
      ([-20, -30], 10), ([-20, -15], 5), ([-40, -20], 20), ([-50, -35, -20, -35, -50], 15),
    ]
    for (index, item) in cases.enumerated() {
      let path = try tones("lra\(index + 1)", item.levels.map { (20, $0) })
      let range = try #require(try summary(path)["loudness_range_lu"] as? Double)
      #expect(abs(range - item.expected) <= 1, "case \(index + 1): \(range) LU")
    }
  }

  /// Twenty files like the ones people measure — speech, noise, music and
  /// mixes, mono and stereo, 44.1 and 48 kHz — against libebur128: the same
  /// integrated loudness, loudness range and true peak within 0.1.
  @Test func agreesWithLibebur128OnProgrammeLikeFiles() throws {
    let make = """
      set -e
      cd "$DIR"
      espeak-ng -v en -s 150 -w s1.wav "The meter reads the level of every word you say, and the pauses between them."
      espeak-ng -v de -s 140 -w s2.wav "Die Lautheit wird ueber alle Kanaele gemessen und dann gemittelt."
      espeak-ng -v fr+f3 -s 160 -w s3.wav "Le niveau monte et descend avec la voix, puis le silence revient."
      sox -V1 s1.wav -r 48000 -c 1 speech1.wav pad 0.5 1 gain -6
      sox -V1 s2.wav -r 44100 -c 1 speech2.wav pad 1 0.5 gain -14
      sox -V1 s3.wav -r 48000 -c 2 speech3.wav remix 1v0.9 1v0.5 pad 0.3 0.3
      sox -V1 s1.wav s2.wav s3.wav -r 48000 -c 2 speech4.wav gain -20
      sox -V1 s2.wav -r 44100 -c 2 speech5.wav reverb 60 gain -3
      sox -V1 s3.wav s1.wav -r 48000 -c 1 speech6.wav tremolo 0.5 60
      sox -V1 -n -r 48000 -c 2 noise1.wav synth 12 pinknoise vol 0.2 tremolo 0.3 80
      sox -V1 -n -r 44100 -c 1 noise2.wav synth 10 brownnoise vol 0.5 fade 2 10 3
      sox -V1 -n -r 48000 -c 2 noise3.wav synth 8 whitenoise vol 0.02
      sox -V1 -n -r 44100 -c 2 noise4.wav synth 15 pinknoise synth 15 pinknoise amod 0.1 90 gain -12
      sox -V1 -n -r 48000 -c 1 noise5.wav synth 10 pinknoise lowpass 500 gain -8
      sox -V1 -n -r 48000 -c 2 music1.wav synth 12 pluck C3 pluck E3 pluck G3 pluck C4 repeat 2 gain -6
      sox -V1 -n -r 44100 -c 2 music2.wav synth 10 sine 220 sine 277 sine 330 tremolo 5 40 reverb 50 gain -10
      sox -V1 -n -r 48000 -c 1 music3.wav synth 0.4 pluck A2 pluck E3 pluck A3 repeat 25 gain -3
      sox -V1 -n -r 48000 -c 2 music4.wav synth 12 square 110 square 165 lowpass 2000 tremolo 2 70 gain -18
      sox -V1 -n -r 44100 -c 2 music5.wav synth 10 sawtooth 147 sawtooth 220 fade 0.5 10 4 gain -12
      sox -V1 -m speech4.wav music1.wav mix1.wav
      sox -V1 -m speech1.wav noise5.wav mix2.wav trim 0 8
      sox -V1 -m speech3.wav music4.wav mix3.wav
      sox -V1 -m speech6.wav noise3.wav -c 1 mix4.wav
      """
    let made = try MicLoopBinary.script(make, directory: directory)
    #expect(made.status == 0, "\(made.errorOutput)")
    let names =
      (1...6).map { "speech\($0).wav" } + (1...5).map { "noise\($0).wav" }
      + (1...5).map { "music\($0).wav" } + (1...4).map { "mix\($0).wav" }
    let paths = names.map(file)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let oracleScript = root.appendingPathComponent("Scripts/loudness_oracle.py").path
    // The evaluation tools' Python: MICLOOP_PYTHON, else the one `make setup`
    // makes in .build/venv, else python3.
    let venv = root.appendingPathComponent(".build/venv/bin/python").path
    let python =
      ProcessInfo.processInfo.environment["MICLOOP_PYTHON"]
      ?? (FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3")
    let oracle = try MicLoopBinary.script(
      "'\(python)' '\(oracleScript)' " + paths.map { "'\($0)'" }.joined(separator: " "),
      directory: directory)
    #expect(oracle.status == 0, "\(oracle.errorOutput)")
    let expected = oracle.output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(expected.count == 20)
    for (path, reference) in zip(paths, expected) {
      let measured = try summary(path)
      for key in ["integrated_lufs", "loudness_range_lu", "true_peak_dbtp"] {
        let ours = try #require(measured[key] as? Double, "\(path): no \(key)")
        let theirs = try #require(reference[key] as? Double, "\(path): oracle has no \(key)")
        #expect(abs(ours - theirs) <= 0.1, "\(path) \(key): \(ours) vs libebur128 \(theirs)")
      }
    }
  }
}
