import DuplexIO
import FeedbackControl
import Metering
import SignalDSP
import TonePlans

/// Something a live job reports, in the order it happened. Times are
/// stream times in seconds: frames captured by the job before the moment,
/// across reconnects, divided by the rate (a gap adds no stream time; a
/// filled recording holds stream time plus the gaps before it).
public enum LiveJobEvent {
  /// A meter reading, a talk start or end, or (last) the meter's summary.
  case meter(MeterEvent)
  /// A decoded tone, call or page, after repeat suppression.
  case tone(ToneDecoderEvent)
  /// What the howl guard did to the output.
  case feedback(HowlGuardEvent)
  /// A capture overrun (`.input`) or playback underrun (`.output`), with
  /// the frames a sound server said were lost (0 when it cannot tell).
  case xrun(bus: Bus, time: Double, lostFrames: Int)
  /// The whole process was held (Ctrl-Z, SIGSTOP, starved) for `seconds`:
  /// audio of that time may be missing.
  case pause(time: Double, seconds: Double)
  /// Of a pause or a playback underrun's recovery (`cause`), `seconds` of
  /// audio the device or its sound server could not hold never reached
  /// micloop: the stream jumps over them at stream time `time` (known once
  /// what the device held has arrived, `AudioLossWatch`).
  case audioLost(time: Double, seconds: Double, cause: AudioLossCause)
  /// The device or its sound server went away; with reconnection the job
  /// now waits for it (else the job ends with this failure).
  case deviceLost(time: Double, failure: DuplexError)
  /// Audio flows again after a gap of `gap` seconds of wall time (from the
  /// last audio before the loss to the first after it, however long the
  /// devices took to open and to start); `filled` when the recording got
  /// the gap as silence.
  case deviceBack(time: Double, gap: Double, filled: Bool)
  /// The connections others had made to the ports of the client the sound
  /// server lost (JACK) were made again on the new one, but for those
  /// whose other port did not come back in time.
  case connectionsRestored(time: Double, connections: RestoredConnections)
}

/// Where a live job sends what happens, and who decides when it stops.
/// Every method is called on the thread that runs the job (the control
/// thread), about 50 times a second while audio flows and twice a second
/// while the job waits for a lost device. Features that need the captured
/// audio or the decoder's progress are stages of the job (`LiveJobStage`).
public protocol LiveJobObserver: AnyObject {
  /// Each event, in order.
  func handle(_ event: LiveJobEvent)
  /// Asked once a control cycle (and while waiting for a lost device),
  /// after the job's stages: true ends the job with what it has. Read keys
  /// and redraw here.
  func shouldStop() -> Bool
}

extension LiveJobObserver {
  public func shouldStop() -> Bool { false }
}

/// An observer made of two closures, for a caller that needs no type of
/// its own. Control thread (the job's).
public final class LiveJobCallbacks: LiveJobObserver {
  private let onEvent: (LiveJobEvent) -> Void
  private let stops: () -> Bool

  public init(
    handle onEvent: @escaping (LiveJobEvent) -> Void = { _ in },
    shouldStop stops: @escaping () -> Bool = { false }
  ) {
    self.onEvent = onEvent
    self.stops = stops
  }

  public func handle(_ event: LiveJobEvent) { onEvent(event) }
  public func shouldStop() -> Bool { stops() }
}
