#!/usr/bin/env python3
"""Measures `micloop record` on recorded speech: Debian's Asterisk prompts
(asterisk-core-sounds-en-g722, decoded with ffmpeg) joined by pauses some
shorter and some longer than the hang, in white noise at a given SNR.

Prints, per SNR: prompts, the transmissions they make (prompts closer than
the hang are one), the files micloop made, and for each transmission the
onset margin (its first audible sample minus its file's first sample), the
onsets that fell outside every file, and transmissions split in two.

    python3 Scripts/eval/record_eval.py [--micloop .build/release/micloop] [--snr 30 20 10] [--check]

With --check it fails (exit 1) when an onset falls outside every file at
any SNR, or when at 20 dB SNR or more the files are not the transmissions
(one file each, none split).
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

RATE = 16000
SOUNDS = "/usr/share/asterisk/sounds/en_US_f_Allison"
PROMPTS = ["activated", "added", "agent-pass", "all-circuits-busy-now", "agent-loginok",
           "agent-newlocation", "agent-alreadyon", "agent-incorrect", "agent-loggedoff", "agent-user",
           "activated", "added"]
# Pauses between prompts (s): with the default hang of 1.5 s, those under
# 1.45 join two prompts into one transmission, those over 1.55 split.
PAUSES = [3.0, 0.6, 2.5, 1.2, 4.0, 0.9, 1.8, 0.3, 2.0, 1.1, 3.5]
HANG = 1.5
# A prompt's first audible sample: the first above -50 dBFS in the clean prompt.
AUDIBLE = 10 ** (-50 / 20)
# From this SNR up (dB) every transmission must be one file.
CLEAN_SNR = 20


def decode(name, folder):
    path = os.path.join(folder, name + ".f32")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "g722", "-i",
                    os.path.join(SOUNDS, name + ".g722"), "-ar", str(RATE), "-ac", "1", "-f", "f32le",
                    path], check=True)
    return np.fromfile(path, dtype="<f4")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--snr", type=float, nargs="+", default=[30, 20, 10])
    parser.add_argument("--check", action="store_true", help="fail below the targets (see above)")
    arguments = parser.parse_args()
    failures = []
    folder = tempfile.mkdtemp(prefix="micloop-record-eval-")
    clean = [np.zeros(int(RATE * 2.0), dtype=np.float32)]
    onsets, ends = [], []
    position = len(clean[0])
    for index, name in enumerate(PROMPTS):
        prompt = decode(name, folder)
        loud = np.nonzero(np.abs(prompt) > AUDIBLE)[0]
        onsets.append(position + int(loud[0]))
        ends.append(position + int(loud[-1]) + 1)
        clean.append(prompt)
        position += len(prompt)
        pause = PAUSES[index] if index < len(PAUSES) else 3.0
        # The pause is measured between audible samples.
        silence = max(0, int(pause * RATE) - (len(prompt) - (int(loud[-1]) + 1)))
        clean.append(np.zeros(silence, dtype=np.float32))
        position += silence
    clean = np.concatenate(clean)
    speech = np.concatenate([clean[o:e] for o, e in zip(onsets, ends)])
    speech_rms = float(np.sqrt(np.mean(speech.astype(np.float64) ** 2)))
    for snr in arguments.snr:
        noise_rms = speech_rms / 10 ** (snr / 20)
        noise = np.random.default_rng(7).standard_normal(len(clean)) * noise_rms
        # Transmissions: prompts whose pause is under the hang join; the
        # pause runs between samples of the clean prompts above the noise's
        # RMS (a tail buried in the noise is part of the pause).
        above = np.abs(clean) > noise_rms
        heard = []
        for onset, end in zip(onsets, ends):
            loud = np.nonzero(above[onset:end])[0]
            heard.append((onset + int(loud[0]), onset + int(loud[-1]) + 1))
        groups = [[0]]
        shortest_split, longest_join = float("inf"), 0.0
        for index in range(1, len(PROMPTS)):
            pause = (heard[index][0] - heard[index - 1][1]) / RATE
            if pause < HANG:
                groups[-1].append(index)
                longest_join = max(longest_join, pause)
            else:
                groups.append([index])
                shortest_split = min(shortest_split, pause)
        mixed = (clean + noise).astype("<f4")
        raw = os.path.join(folder, f"mix{snr:g}.f32")
        mixed.tofile(raw)
        wav = os.path.join(folder, f"mix{snr:g}.wav")
        subprocess.run(["sox", "-V1", "-t", "f32", "-r", str(RATE), "-c", "1", raw, "-e", "float", wav], check=True)
        out = os.path.join(folder, f"out{snr:g}")
        result = subprocess.run([arguments.micloop, "record", "--input", wav, "--dir", out, "--json",
                                 "--hang", str(HANG)], capture_output=True, text=True)
        events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        files = [e for e in events if e["event"] == "recording"]
        margins, outside, split = [], 0, 0
        for group in groups:
            first = onsets[group[0]]
            holders = [f for f in files if f["start_frame"] <= first < f["start_frame"] + f["frames"]]
            if not holders:
                outside += 1
                continue
            margins.append((first - holders[0]["start_frame"]) / RATE * 1000)
            last = ends[group[-1]] - 1
            if not holders[0]["start_frame"] <= last < holders[0]["start_frame"] + holders[0]["frames"]:
                split += 1
                print(f"  split: prompts {group}, pauses {[round((heard[i][0] - heard[i - 1][1]) / RATE, 2) for i in group[1:]]} s")
        print(f"SNR {snr:g} dB: {len(PROMPTS)} prompts, {len(groups)} transmissions (pauses joined up to "
              f"{longest_join:.2f} s, split from {shortest_split:.2f} s), {len(files)} files; "
              f"onset margin {min(margins):.0f}-{max(margins):.0f} ms (mean {np.mean(margins):.0f}); "
              f"onsets outside a file: {outside}; transmissions split: {split}; exit {result.returncode}")
        if result.returncode != 0:
            failures.append(f"SNR {snr:g} dB: micloop record exited {result.returncode}")
        if outside:
            failures.append(f"SNR {snr:g} dB: {outside} onsets outside every file")
        if snr >= CLEAN_SNR and (split or len(files) != len(groups)):
            failures.append(f"SNR {snr:g} dB: {len(files)} files for {len(groups)} transmissions, {split} split")
    for failure in failures:
        print(f"record evaluation: below target: {failure}")
    if arguments.check and failures:
        raise SystemExit(1)
    print("record evaluation " + ("passed" if not failures else "below target (report only)"))


if __name__ == "__main__":
    main()
