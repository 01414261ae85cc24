#!/usr/bin/env bash
# Live DTMF through the virtual microphone at every period size: for each
# size one `micloop tones` listens on pulse:mic.monitor while CALLS calls of
# "123#" are sent into pulse:mic one after another (each a new stream
# waking the idle sink, as the README's example does); prints the keys
# expected, decoded and the capture overruns reported per size, and the
# keys a reference recorder (arecord, on the same monitor at the same time)
# heard: a key missing there never reached the monitor. Fails when a key is
# missing and neither a capture overrun nor a gap (audio lost while micloop
# was held) was reported.
# Usage: Scripts/live_keys_check.sh [CALLS] [PERIODS...]   (default 50; 64 … 4096)
# With HOG=1 busy loops, twice as many as the machine has cores, load it while it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
M=${MICLOOP:-.build/release/micloop}
calls=${1:-50}
shift || true
periods=("${@:-64 128 256 512 1024 2048 4096}")
# shellcheck source=Scripts/virtual-devices.sh
source Scripts/virtual-devices.sh
virtual_devices_start
# The server stands in for a sound card, whose clock no CPU hog delays (as the
# live tests run it): every thread of it at real-time priority, below micloop's.
for task in /proc/"$(pgrep -n -x pulseaudio)"/task/*; do chrt -r -p 60 "${task##*/}" > /dev/null; done
hogs=()
if [ "${HOG:-0}" = 1 ]; then
  for _ in $(seq $((2 * $(nproc)))); do (while :; do :; done) & hogs+=($!); done
fi
trap 'for h in "${hogs[@]}"; do kill "$h" 2>/dev/null; done; virtual_devices_stop' EXIT
expected=$(printf '123#%.0s' $(seq "$calls"))
failed=0
for period in ${periods[*]}; do
  out=$(mktemp)
  "$M" tones --plan dtmf -D pulse:mic.monitor --period "$period" --json > "$out" &
  listener=$!
  reference=$(mktemp --suffix=.wav)
  arecord -q -D pulse:mic.monitor -f S16_LE -r 48000 -c 1 --buffer-time=500000 "$reference" &
  recorder=$!
  sleep 1
  for _ in $(seq "$calls"); do
    chrt -r 50 "$M" send --plan dtmf '123#' -D pulse:mic > /dev/null
    sleep 0.7
  done
  sleep 0.5
  kill -INT "$listener" "$recorder"
  wait "$listener" || true
  wait "$recorder" || true
  heard=$("$M" tones --plan dtmf --input "$reference" --json | grep -c '"event":"tone"' || true)
  got=$(grep '"event":"tone"' "$out" | sed 's/.*"symbol":"\([^"]*\)".*/\1/' | tr -d '\n')
  overruns=$(grep -c '"bus":"input"' "$out" || true)
  gaps=$(grep -c '"event":"gap"' "$out" || true)
  keys=$(( ${#got} ))
  verdict=ok
  if [ "$got" != "$expected" ]; then
    # A key may be lost to a stall the machine imposed, but never silently:
    # the overrun or the audio lost in a pause must be in the output.
    if [ "$overruns" -gt 0 ] || [ "$gaps" -gt 0 ]; then
      verdict="keys lost, the loss reported"
    else
      verdict="DIFFERENT, nothing reported"
      failed=1
    fi
  fi
  echo "period $period: $keys of $(( 4 * calls )) keys, $overruns capture overruns, $gaps gaps, $verdict (the reference recorder heard $heard)"
  [ "$verdict" = ok ] || echo "  decoded: $got"
  rm -f "$out" "$reference"
done
exit $failed
