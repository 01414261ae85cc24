import Foundation
import TestSupport
import Testing

/// `--http` on live jobs against a private PulseAudio server: a tone played
/// into the virtual microphone shows on `/metrics` and `/events`, DTMF keys
/// are counted and streamed, a recorded transmission is listed and served
/// with ranges.
@Suite(.serialized, .tags(.live, .pulseaudio), .needsSoundServer) struct StationLiveTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// The station's URL from the job's `{"event":"http"}` line, once printed.
  static func stationURL(_ process: SpawnedProcess) -> String? {
    var url: String?
    process.waitForOutput(timeout: 60) { output in
      for line in output.split(separator: "\n") where line.contains(#""event":"http""#) {
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        url = object?["url"] as? String
      }
      return url != nil
    }
    return url
  }

  static func objects(_ text: String, prefix: String = "") -> [[String: Any]] {
    text.split(separator: "\n").compactMap { line in
      guard line.hasPrefix(prefix) else { return nil }
      return try? JSONSerialization.jsonObject(with: Data(line.dropFirst(prefix.count).utf8))
        as? [String: Any]
    }
  }

  /// A 1 kHz sine peaking at -20 dBFS (RMS -23.01 dBFS by sox's convention, which
  /// micloop's meter follows) shows on the RMS and peak gauges within 1 dB, and
  /// `/events` streams the meter's level lines with the same levels.
  @Test func meterLevelsOnMetricsAndEvents() throws {
    let devices = try VirtualDevices()
    let sine = file("sine.wav")
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", sine, "synth", "12", "sine",
      "1000", "vol", "0.1",
    ])
    let player = try devices.play(sine, into: "mic")
    defer { player.signal(SIGTERM) }
    usleep(300_000)
    let meter = try devices.startMicloop([
      "meter", "-D", "pulse:mic.monitor", "--period", "1024", "--periods", "4", "--json",
      "--http", "127.0.0.1:0", "--duration", "8",
    ])
    defer { meter.signal(SIGKILL) }
    let base = try #require(Self.stationURL(meter), "\(meter.printedSoFar)")
    #expect(base.hasPrefix("http://127.0.0.1:"))
    sleep(3)
    let metrics = try HTTPFetch.get(base + "metrics")
    #expect(metrics.status == 200)
    let samples = try PrometheusText.samples(metrics.text)
    let rms = try #require(samples[#"micloop_level_rms_dbfs{channel="1"}"#], "\(metrics.text)")
    let peak = try #require(samples[#"micloop_level_peak_dbfs{channel="1"}"#])
    #expect(abs(rms - -23.01) <= 1, "rms \(rms)")
    #expect(abs(peak - -20) <= 1, "peak \(peak)")
    #expect(samples["micloop_device_up"] == 1)
    #expect(try HTTPFetch.get(base + "healthz").text == "ok\n")

    let events = try HTTPFetch.get(base + "events", maxTime: 1.5)
    let levels = Self.objects(events.text, prefix: "data: ").filter {
      $0["event"] as? String == "level"
    }
    #expect(levels.count >= 5, "\(events.text)")
    for level in levels {
      let value = try #require(level["rms_dbfs"] as? Double)
      #expect(abs(value - -23.01) <= 1, "\(level)")
    }
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    // The station's lines are the ones --json prints.
    let printed = Set(result.output.split(separator: "\n").map(String.init))
    let streamed = events.text.split(separator: "\n").filter { $0.hasPrefix("data: ") }
      .map { String($0.dropFirst(6)) }
    #expect(!streamed.isEmpty && streamed.allSatisfy(printed.contains))
  }

  /// `tones --http` while `micloop send` plays 123#: the tones counter
  /// rises by 4 and `/events` carries the four keys.
  @Test func dtmfKeysAreCountedAndStreamed() throws {
    let devices = try VirtualDevices()
    // Quiet audio keeps the microphone running, so the keys are heard when played.
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    let signal = file("dtmf.wav")
    let length = try VirtualDevices.programme([("dtmf", "123#")], lead: 2.5, tail: 1, at: signal)
    let tones = try devices.startMicloop([
      "tones", "--plan", "dtmf", "-D", "pulse:mic.monitor", "--period", "1024", "--periods", "4",
      "--json", "--http", "0", "--duration", String(length + 4),
    ])
    defer { tones.signal(SIGKILL) }
    let base = try #require(Self.stationURL(tones), "\(tones.printedSoFar)")
    let before = try PrometheusText.samples(try HTTPFetch.get(base + "metrics").text)
    #expect(before[#"micloop_tones_total{plan="dtmf"}"#] == nil)
    // The event stream is read while the keys are played, until the job ends.
    let stream = BackgroundFetch(base + "events", maxTime: length + 4)
    usleep(300_000)
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    // Scraped while the job runs, as Prometheus would, until the four keys are counted.
    var counted: Double?
    let deadline = Date().addingTimeInterval(length + 2.5)
    while counted != 4 && Date() < deadline {
      usleep(250_000)
      let scrape = try? HTTPFetch.get(base + "metrics").text
      counted =
        scrape.flatMap { try? PrometheusText.samples($0) }?[
          #"micloop_tones_total{plan="dtmf"}"#]
    }
    let events = try stream.result()
    let result = tones.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(counted == 4, "\(result.output)")
    let keys = Self.objects(events.text, prefix: "data: ").filter {
      $0["event"] as? String == "tone" && $0["plan"] as? String == "dtmf"
    }.compactMap { $0["symbol"] as? String }
    #expect(keys.joined() == "123#", "\(events.text)")
  }

  /// `record --http`: a transmission's file appears in `/recordings.json`
  /// and `/recordings/NAME` serves it, whole and by a range, byte for byte.
  @Test func recordingsAreListedAndServedWithRanges() throws {
    let devices = try VirtualDevices()
    let keep = try devices.keepRunning("mic")
    defer { keep.signal(SIGTERM) }
    var scene = TransmissionScene(seconds: 8, floor: -46, seed: 51, rate: 48_000)
    scene.talk(at: 2, seconds: 2)
    let float = file("scene-float.wav")
    try scene.write(to: float)
    let signal = file("scene.wav")
    try MicLoopBinary.shell(["sox", "-V1", float, "-b", "16", signal])
    let out = file("recordings")
    let recorder = try devices.startMicloop([
      "record", "-D", "pulse:mic.monitor", "--period", "1024", "--periods", "4", "--dir", out,
      "--json", "--hang", "1", "--max-bytes", "50M", "--http", "127.0.0.1:0", "--duration", "14",
    ])
    defer { recorder.signal(SIGKILL) }
    let base = try #require(Self.stationURL(recorder), "\(recorder.printedSoFar)")
    #expect(recorder.waitForOutput("\"session_start\""))
    let player = try devices.play(signal, into: "mic")
    defer { player.signal(SIGTERM) }
    #expect(recorder.waitForOutput(timeout: 30) { $0.contains(#""event":"recording""#) })
    let list = try HTTPFetch.get(base + "recordings.json")
    #expect(list.status == 200)
    let object = try JSONSerialization.jsonObject(with: list.body) as? [String: Any]
    let entries = try #require(object?["recordings"] as? [[String: Any]], "\(list.text)")
    let name = try #require(entries.first?["file"] as? String, "\(list.text)")
    let onDisk = try #require(FileManager.default.contents(atPath: out + "/" + name))
    let whole = try HTTPFetch.get(base + "recordings/" + name)
    #expect(whole.status == 200)
    #expect(whole.body == onDisk)
    let part = try HTTPFetch.get(base + "recordings/" + name, ["-H", "Range: bytes=44-1043"])
    #expect(part.status == 206)
    #expect(part.header("Content-Range") == "bytes 44-1043/\(onDisk.count)")
    #expect(part.body == onDisk[44..<1044])
    #expect(try HTTPFetch.get(base + "recordings/..%2f" + name).status == 404)
    let metrics = try PrometheusText.samples(try HTTPFetch.get(base + "metrics").text)
    #expect((metrics["micloop_recordings_total"] ?? 0) >= 1)
    #expect((metrics["micloop_recorded_bytes_total"] ?? 0) >= Double(onDisk.count))
    // The storage, looked at once a second: the closed recording counted
    // against the budget, the budget, and the disk's free bytes.
    var storage = metrics
    for _ in 0..<30 where (storage["micloop_recordings_bytes"] ?? 0) < Double(onDisk.count) {
      usleep(100_000)
      storage = try PrometheusText.samples(try HTTPFetch.get(base + "metrics").text)
    }
    #expect((storage["micloop_recordings_bytes"] ?? 0) >= Double(onDisk.count), "\(storage)")
    let budget = try #require(storage["micloop_recordings_budget_bytes"], "\(storage)")
    #expect(abs(budget - 52_428_800) < 1, "50M is 50 MiB")
    #expect((storage["micloop_disk_free_bytes"] ?? 0) > 0, "\(storage)")
    let result = recorder.result()
    #expect(result.status == 0, "\(result.errorOutput)")
  }

  /// Listening beyond this machine without a token is refused in one line,
  /// status 64, before any device opens (there is no server to open).
  @Test func openAddressWithoutTokenIsRefused() throws {
    let result = try MicLoopBinary.run([
      "meter", "-D", "pulse:no-such-device", "--http", "0.0.0.0:0", "--duration", "1",
    ])
    #expect(result.status == 64)
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains("--http-token-file"))
    #expect(result.output.isEmpty)
  }
}

/// A fetch on a thread of its own, started at once: a task of Swift's
/// shared pool may wait for a thread that a busy parallel test run has not
/// got to spare, and a stream read late misses what it was there to hear.
private final class BackgroundFetch: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var fetched: Result<HTTPFetch, any Error>?

  init(_ url: String, maxTime: Double) {
    Thread.detachNewThread { [self] in
      fetched = Result { try HTTPFetch.get(url, maxTime: maxTime) }
      done.signal()
    }
  }

  /// The fetch's result, once curl has ended.
  func result() throws -> HTTPFetch {
    done.wait()
    return try fetched!.get()
  }
}
