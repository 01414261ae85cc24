#!/usr/bin/env bash
# `make demo`: micloop live on virtual devices, no sound card needed.
# A private PulseAudio server provides a virtual microphone and speaker;
# speech with pauses is played into the microphone while
# `micloop loopback --meter` monitors it on the speaker for 15 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
MICLOOP=${MICLOOP:-.build/release/micloop}
source Scripts/virtual-devices.sh
work=$(mktemp -d /tmp/micloop-demo.XXXXXX)
cleanup() {
  [ -n "${player:-}" ] && kill "$player" 2>/dev/null || true
  virtual_devices_stop
  rm -rf "$work"
}
trap cleanup EXIT

# Three sentences from different voices with pauses, then silence, at 48 kHz.
espeak-ng -v en-us -w "$work/1.wav" "Hello, this is the micloop demo. Watch the meter."
espeak-ng -v en-gb+f3 -w "$work/2.wav" "When I talk, it says talk. When I stop, it says silence."
espeak-ng -v en-us+m3 -w "$work/3.wav" "That is all. Goodbye."
sox -V1 -n -r 22050 -c 1 "$work/pause.wav" trim 0 1.5
sox -V1 -n -r 22050 -c 1 "$work/long.wav" trim 0 4
sox -V1 "$work/pause.wav" "$work/1.wav" "$work/pause.wav" "$work/2.wav" "$work/pause.wav" "$work/3.wav" \
  "$work/long.wav" -r 48000 -b 16 "$work/speech.wav" vol 0.8

virtual_devices_start
echo "Virtual microphone: pulse:mic.monitor   virtual speaker: pulse:spk"
echo "Running: micloop loopback --meter --capture pulse:mic.monitor --playback pulse:spk --duration 15"
echo
aplay -q -D pulse:mic "$work/speech.wav" 2>/dev/null &
player=$!
"$MICLOOP" loopback --meter --capture pulse:mic.monitor --playback pulse:spk --duration 15
