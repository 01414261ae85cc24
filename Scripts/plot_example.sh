#!/usr/bin/env bash
# Makes the README's example plot: speech, three DTMF keys and a 1 kHz tone
# with silence between, drawn by `micloop plot`.
# Usage: Scripts/plot_example.sh [micloop binary] [output picture]
set -euo pipefail
micloop=${1:-.build/release/micloop}
output=${2:-Docs/plot-example.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
espeak-ng -w "$work/speech.wav" "Hello, this is a test of the plot. Three keys and a tone follow."
sox -V1 "$work/speech.wav" -r 48000 -b 16 "$work/speech48.wav" gain -n -6
"$micloop" send --plan dtmf 159 -o "$work/keys.wav" >/dev/null
"$micloop" tone -f 1000 --level-db -10 --duration 1.5 -o "$work/tone.wav" >/dev/null
sox -V1 -n -r 48000 -b 16 -c 1 "$work/gap.wav" trim 0 1
sox -V1 "$work/gap.wav" "$work/speech48.wav" "$work/gap.wav" "$work/keys.wav" "$work/gap.wav" \
  "$work/tone.wav" "$work/gap.wav" "$work/talk.wav"
"$micloop" plot -i "$work/talk.wav" -o "$output" --plan dtmf --loudness --width 1200 --height 640
