#!/usr/bin/env bash
# Starts (or stops) a private PulseAudio server with two null sinks, so ALSA
# has a virtual microphone and speaker on machines without a sound card:
#   whatever is played to pulse:mic is captured from pulse:mic.monitor;
#   micloop plays to pulse:spk, and pulse:spk.monitor hears it.
# Usage: source it, then `virtual_devices_start` / `virtual_devices_stop`.

virtual_devices_start() {
  export XDG_RUNTIME_DIR
  XDG_RUNTIME_DIR=$(mktemp -d /tmp/micloop-pulse.XXXXXX)
  export PULSE_RUNTIME_PATH="$XDG_RUNTIME_DIR/pulse"
  pulseaudio --daemonize=yes --exit-idle-time=-1 -n --disallow-exit=no \
    --log-target=file:"$XDG_RUNTIME_DIR/pulse.log" \
    --load=module-native-protocol-unix \
    --load="module-null-sink sink_name=mic rate=48000 channels=1" \
    --load="module-null-sink sink_name=spk rate=48000 channels=1" 2>/dev/null
  for _ in $(seq 50); do
    pactl info >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the private PulseAudio server did not start; see $XDG_RUNTIME_DIR/pulse.log" >&2
  return 1
}

virtual_devices_stop() {
  [ -n "${XDG_RUNTIME_DIR:-}" ] || return 0
  pulseaudio --kill 2>/dev/null || true
  rm -rf "$XDG_RUNTIME_DIR"
}
