import Prometheus
import Synchronization

/// The station's Prometheus metrics (exposition through swift-prometheus).
/// Updated by the job's control thread; `/metrics` renders them on a server
/// task. Each labelled series is made once and kept, so an update is an
/// atomic store or add. Never call it from the audio thread.
public final class StationMetrics: Sendable {
  public let registry = PrometheusCollectorRegistry()
  private let talking: Gauge
  private let talkSeconds: Counter
  private let recordings: Counter
  private let recordedBytes: Counter
  private let deviceUp: Gauge
  private let clients: Gauge
  private let droppedClients: Counter
  private let labelled = Mutex<[String: Metric]>([:])

  private enum Metric: Sendable {
    case gauge(Gauge)
    case counter(Counter)
  }

  init(version: String) {
    talking = registry.makeGauge(
      descriptor: Self.descriptor(
        "micloop_talking", help: "1 while the talk detector hears talk, else 0."))
    talkSeconds = registry.makeCounter(
      descriptor: Self.descriptor(
        "micloop_talk_seconds_total", help: "Seconds of talk in finished talk segments."))
    recordings = registry.makeCounter(
      descriptor: Self.descriptor(
        "micloop_recordings_total", help: "Recordings the session closed and indexed."))
    recordedBytes = registry.makeCounter(
      descriptor: Self.descriptor(
        "micloop_recorded_bytes_total", help: "Bytes of the recordings the session closed."))
    deviceUp = registry.makeGauge(
      descriptor: Self.descriptor(
        "micloop_device_up", help: "1 while audio flows from the device, 0 while it is lost."))
    clients = registry.makeGauge(
      descriptor: Self.descriptor(
        "micloop_station_clients", help: "Connections the station is serving."))
    droppedClients = registry.makeCounter(
      descriptor: Self.descriptor(
        "micloop_station_dropped_clients_total",
        help: "Clients of /events dropped because they fell behind."))
    registry.makeGauge(
      descriptor: Self.descriptor(
        "micloop_build_info", help: "Always 1; the version of micloop in its label."),
      labels: [("version", version)]
    ).set(to: 1)
    deviceUp.set(to: 1)
    talking.set(to: 0)
  }

  /// A descriptor for the whole name `name` (swift-prometheus joins its parts with `_`).
  private static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
    let parts = name.split(separator: "_", maxSplits: 1).map(String.init)
    return MetricNameDescriptor(
      namespace: parts[0], metricName: parts.count > 1 ? parts[1] : "", unitName: "", helpText: help
    )
  }

  /// The gauge `name` with `label` set to `value` (or with no label), made
  /// the first time it is asked for.
  private func gauge(_ name: String, _ label: String? = nil, _ value: String = "", help: String)
    -> Gauge
  {
    labelled.withLock { metrics in
      let key = name + "\u{0}" + value
      if case .gauge(let gauge) = metrics[key] { return gauge }
      let gauge = registry.makeGauge(
        descriptor: Self.descriptor(name, help: help), labels: label.map { [($0, value)] } ?? [])
      metrics[key] = .gauge(gauge)
      return gauge
    }
  }

  private func counter(_ name: String, _ label: String, _ value: String, help: String) -> Counter {
    labelled.withLock { metrics in
      let key = name + "\u{0}" + value
      if case .counter(let counter) = metrics[key] { return counter }
      let counter = registry.makeCounter(
        descriptor: Self.descriptor(name, help: help), labels: [(label, value)])
      metrics[key] = .counter(counter)
      return counter
    }
  }

  /// A channel's latest RMS and peak in dBFS (nil: silence, shown as -Inf).
  public func setLevel(channel: Int, rms: Double?, peak: Double?) {
    gauge(
      "micloop_level_rms_dbfs", "channel", String(channel),
      help: "Latest RMS level in dBFS (sox convention: a full-scale sine is -3.01)."
    ).set(to: rms ?? -.infinity)
    gauge(
      "micloop_level_peak_dbfs", "channel", String(channel),
      help: "Latest sample peak level in dBFS."
    ).set(to: peak ?? -.infinity)
  }

  public func setTalking(_ isTalking: Bool) { talking.set(to: isTalking ? 1 : 0) }
  public func addTalk(seconds: Double) { if seconds > 0 { talkSeconds.increment(by: seconds) } }

  /// A decoded tone (a DTMF key, one tone of a sequence, a CTCSS tone).
  public func countTone(plan: String) {
    counter("micloop_tones_total", "plan", plan, help: "Decoded tones, by tone plan.")
      .increment()
  }

  /// A decoded call: a whole selective-call sequence or a page.
  public func countCall(plan: String) {
    counter("micloop_calls_total", "plan", plan, help: "Decoded calls and pages, by tone plan.")
      .increment()
  }

  /// An xrun on `bus` (`input` or `output`).
  public func countXrun(bus: String) {
    counter("micloop_xruns_total", "bus", bus, help: "Capture overruns and playback underruns.")
      .increment()
  }

  /// Audio lost for `reason` (`pause`, `xrun`, `device_lost` …).
  public func countGap(reason: String) {
    counter("micloop_gaps_total", "reason", reason, help: "Gaps in the audio, by cause.")
      .increment()
  }

  /// A closed recording of `bytes` bytes.
  public func countRecording(bytes: Int64) {
    recordings.increment()
    if bytes > 0 { recordedBytes.increment(by: bytes) }
  }

  public func setDeviceUp(_ isUp: Bool) { deviceUp.set(to: isUp ? 1 : 0) }

  /// Where a recording session's storage stands: the bytes its retention
  /// counts, the byte budget (`nil`: none), and the bytes free on the
  /// folder's file system (`nil`: it cannot tell). Shown only once set.
  public func setStorage(usedBytes: Int64, budgetBytes: Int64?, freeBytes: Int64?) {
    gauge(
      "micloop_recordings_bytes",
      help: "Bytes of recordings, sidecars and indexes the retention counts in the folder."
    ).set(to: Double(usedBytes))
    if let budgetBytes {
      gauge(
        "micloop_recordings_budget_bytes",
        help: "The byte budget the retention keeps the recordings within."
      ).set(to: Double(budgetBytes))
    }
    if let freeBytes {
      gauge(
        "micloop_disk_free_bytes",
        help: "Bytes free for micloop on the file system of the recordings' folder."
      ).set(to: Double(freeBytes))
    }
  }

  func setClients(_ count: Int) { clients.set(to: Double(count)) }
  func countDroppedClient() { droppedClients.increment() }

  /// The exposition text of every metric.
  public func render() -> String { registry.emitToString() }
}
