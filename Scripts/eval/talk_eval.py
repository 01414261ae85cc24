#!/usr/bin/env python3
"""Talk-detection evaluation for `micloop meter`.

Builds speech tracks from espeak-ng (several voices, sentences of different
lengths, pauses of 0.5-3 s), mixes them with white, pink and brown noise and
50 Hz mains hum at 30, 20, 10 and 5 dB SNR, at speech peak levels of -12 and
-30 dBFS, runs `micloop meter --input F --json` with default settings and
scores the talk_start/talk_end events against the truth:

* frame-level F1 of "talking" on 10 ms frames, ignoring 100 ms around each
  true utterance boundary;
* detected talk segments per true utterance (flapping shows as > 1);
* onset delay: detected start minus true start of each utterance.

SNR is active-speech RMS (over the true utterances) to noise RMS.
`--check` exits non-zero unless F1 >= 0.97 overall, >= 0.92 at 5 dB SNR,
<= 1.1 segments per utterance and median |onset delay| <= 50 ms.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np

RATE = 48000
FRAME = 0.010
VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb-scotland", "en+m3", "en-us+f2"]
SENTENCES = [
    "Hello.",
    "Check one two.",
    "The quick brown fox jumps over the lazy dog.",
    "Please call me back when you get this message.",
    "Testing the microphone, can you hear me?",
    "It is a bright cold day in April, and the clocks are striking thirteen.",
    "Yes.",
    "Roger that, over.",
    "She sells sea shells by the sea shore, and the shells she sells are surely sea shells.",
    "Seven.",
    "We will meet at the station at half past nine tomorrow morning.",
    "Fine, thanks.",
]
NOISES = ["white", "pink", "brown", "hum"]
SNRS = [30, 20, 10, 5]
LEVELS = [-12, -30]
# --check targets.
TARGET_F1 = 0.97  # frame F1 over every noise and SNR
TARGET_F1_5DB = 0.92  # frame F1 at 5 dB SNR
TARGET_SEGMENTS = 1.1  # detected segments per true utterance


def espeak(text, voice, speed, directory, index):
    raw = os.path.join(directory, f"u{index}.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text], check=True)
    out = os.path.join(directory, f"u{index}_48k.wav")
    subprocess.run(["sox", "-V1", raw, "-r", str(RATE), "-b", "32", "-e", "floating-point", out], check=True)
    return read_float_wav(out)


def read_float_wav(path):
    with open(path, "rb") as f:
        data = f.read()
    # Find the data chunk of a float WAV written by sox.
    pos = 12
    while pos < len(data):
        cid = data[pos : pos + 4]
        size = int.from_bytes(data[pos + 4 : pos + 8], "little")
        if cid == b"data":
            return np.frombuffer(data[pos + 8 : pos + 8 + size], dtype="<f4").astype(np.float64)
        pos += 8 + size + (size & 1)
    raise ValueError(path)


def trim(clean):
    """Active span of a clean utterance: frames within 40 dB of its loudest."""
    n = int(FRAME * RATE)
    frames = len(clean) // n
    rms = np.sqrt(np.mean(clean[: frames * n].reshape(frames, n) ** 2, axis=1) + 1e-20)
    active = np.nonzero(rms > rms.max() * 10 ** (-40 / 20))[0]
    return clean[active[0] * n : (active[-1] + 1) * n]


def utterance_pool(directory):
    pool = []
    index = 0
    for v, voice in enumerate(VOICES):
        for s in range(4):
            text = SENTENCES[(v * 5 + s * 3) % len(SENTENCES)]
            speed = [140, 160, 175, 190][(v + s) % 4]
            pool.append(trim(espeak(text, voice, speed, directory, index)))
            index += 1
    return pool


def build_track(pool, rng, count=12):
    pieces = [np.zeros(int(rng.uniform(1.0, 2.0) * RATE))]
    truth = []
    position = len(pieces[0])
    for i in range(count):
        u = pool[rng.integers(len(pool))]
        pieces.append(u)
        truth.append((position / RATE, (position + len(u)) / RATE))
        position += len(u)
        gap = np.zeros(int(rng.uniform(0.5, 3.0) * RATE))
        pieces.append(gap)
        position += len(gap)
    pieces.append(np.zeros(RATE))
    return np.concatenate(pieces), truth


def noise(kind, length, rng):
    if kind == "hum":
        t = np.arange(length) / RATE
        phase = rng.uniform(0, 2 * np.pi)
        return np.sin(2 * np.pi * 50 * t + phase) + 0.3 * np.sin(2 * np.pi * 150 * t) + 0.1 * np.sin(2 * np.pi * 250 * t)
    white = rng.standard_normal(length)
    if kind == "white":
        return white
    spectrum = np.fft.rfft(white)
    f = np.fft.rfftfreq(length, 1 / RATE)
    f[0] = f[1]
    shaped = spectrum / (np.sqrt(f) if kind == "pink" else f)
    shaped[0] = 0
    return np.fft.irfft(shaped, length)


def write_wav24(path, samples):
    clipped = np.clip(samples, -1.0, 1.0 - 2**-23)
    ints = np.round(clipped * 2**23).astype(np.int32)
    raw = np.frombuffer(ints.astype("<i4").tobytes(), dtype=np.uint8).reshape(-1, 4)[:, :3].tobytes()
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(3)
        w.setframerate(RATE)
        w.writeframes(raw)


def detect(micloop, path, extra):
    out = subprocess.run([micloop, "meter", "--input", path, "--json", *extra], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    segments, start = [], None
    for line in out.stdout.splitlines():
        event = json.loads(line)
        if event["event"] == "talk_start":
            start = event["time"]
        elif event["event"] == "talk_end":
            segments.append((start, event["time"]))
            start = None
    return segments


def score(truth, detected, duration):
    frames = int(duration / FRAME)
    centers = (np.arange(frames) + 0.5) * FRAME
    truth_mask = np.zeros(frames, bool)
    ignore = np.zeros(frames, bool)
    for a, b in truth:
        truth_mask |= (centers >= a) & (centers < b)
        for edge in (a, b):
            ignore |= np.abs(centers - edge) < 0.100
    detected_mask = np.zeros(frames, bool)
    for a, b in detected:
        detected_mask |= (centers >= a) & (centers < b)
    keep = ~ignore
    tp = np.sum(truth_mask & detected_mask & keep)
    fp = np.sum(~truth_mask & detected_mask & keep)
    fn = np.sum(truth_mask & ~detected_mask & keep)
    # Segments overlapping each utterance (flapping), and onset delays.
    per_utterance, delays = [], []
    for a, b in truth:
        overlapping = [s for s in detected if s[1] > a and s[0] < b]
        per_utterance.append(len(overlapping))
        starts = [s[0] for s in detected if a - 0.3 <= s[0] <= b]
        covering = [s for s in detected if s[0] < a - 0.3 and s[1] > a]
        if starts and not covering:
            delays.append(min(starts) - a)
    return tp, fp, fn, per_utterance, delays


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--check", action="store_true", help="fail below the targets")
    parser.add_argument("--markdown", help="write the results table to this file")
    parser.add_argument("--meter-args", default="", help="extra options for micloop meter (for tuning)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    totals = {"tp": 0, "fp": 0, "fn": 0, "segments": [], "delays": []}
    by_snr = {snr: {"tp": 0, "fp": 0, "fn": 0} for snr in SNRS}
    with tempfile.TemporaryDirectory() as directory:
        pool = utterance_pool(directory)
        for kind in NOISES:
            for snr in SNRS:
                for level in LEVELS:
                    speech, truth = build_track(pool, rng)
                    speech *= 10 ** (level / 20) / np.max(np.abs(speech))
                    active = np.zeros(len(speech), bool)
                    for a, b in truth:
                        active[int(a * RATE) : int(b * RATE)] = True
                    speech_rms = np.sqrt(np.mean(speech[active] ** 2))
                    n = noise(kind, len(speech), rng)
                    n *= speech_rms / np.sqrt(np.mean(n**2)) * 10 ** (-snr / 20)
                    path = os.path.join(directory, f"{kind}_{snr}_{-level}.wav")
                    write_wav24(path, speech + n)
                    detected = detect(args.micloop, path, args.meter_args.split())
                    tp, fp, fn, per, delays = score(truth, detected, len(speech) / RATE)
                    f1 = 2 * tp / max(1, 2 * tp + fp + fn)
                    rows.append((kind, snr, level, f1, len(detected) / len(truth), np.median(delays) if delays else float("nan")))
                    for key, value in (("tp", tp), ("fp", fp), ("fn", fn)):
                        totals[key] += value
                        by_snr[snr][key] += value
                    totals["segments"].append(len(detected) / len(truth))
                    totals["delays"].extend(delays)
    f1_all = 2 * totals["tp"] / (2 * totals["tp"] + totals["fp"] + totals["fn"])
    f1_snr = {s: 2 * v["tp"] / (2 * v["tp"] + v["fp"] + v["fn"]) for s, v in by_snr.items()}
    segments = float(np.mean(totals["segments"]))
    delays = np.array(totals["delays"])
    median_delay = float(np.median(np.abs(delays)))
    within = float(np.mean(np.abs(delays) <= 0.050))
    lines = ["| noise | SNR dB | speech peak dBFS | F1 | segments / utterance | median onset delay ms |", "|---|---|---|---|---|---|"]
    for kind, snr, level, f1, seg, delay in rows:
        lines.append(f"| {kind} | {snr} | {level} | {f1:.3f} | {seg:.2f} | {delay * 1000:.0f} |")
    lines.append("")
    lines.append(f"Overall F1 {f1_all:.3f}; by SNR: " + ", ".join(f"{s} dB {f1_snr[s]:.3f}" for s in SNRS))
    lines.append(f"Segments per true utterance {segments:.2f}; onset |delay| median {median_delay * 1000:.0f} ms, {within * 100:.0f} % within 50 ms")
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.check:
        failures = []
        if f1_all < TARGET_F1:
            failures.append(f"overall F1 {f1_all:.3f} < {TARGET_F1}")
        if f1_snr[5] < TARGET_F1_5DB:
            failures.append(f"F1 at 5 dB SNR {f1_snr[5]:.3f} < {TARGET_F1_5DB}")
        if segments > TARGET_SEGMENTS:
            failures.append(f"{segments:.2f} segments per utterance > {TARGET_SEGMENTS}")
        if median_delay > 0.050:
            failures.append(f"median onset delay {median_delay * 1000:.0f} ms > 50 ms")
        if failures:
            print("talk evaluation FAILED: " + "; ".join(failures), file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
        print("talk evaluation passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
