#!/usr/bin/env python3
"""A DTMF test file with a known answer, and scoring of decoders against it.

Calls of 6-12 random keys (all 16) with every condition ITU-T Q.24 says a
receiver must accept, drawn at random per call: each tone off by up to
±1.5 %, twist from -8 to +4 dB (high group relative to low), tones and
pauses of 40-100 ms, white noise from 6 to 25 dB SNR relative to the low
tone. 8 kHz 16-bit mono, so every decoder (spandsp needs 8 kHz) reads the
same samples. The truth is the concatenated keys.
"""

import argparse
import wave

import numpy as np

RATE = 8000
LOW = [697, 770, 852, 941]
HIGH = [1209, 1336, 1477, 1633]
KEYS = "123A456B789C*0#D"
NOISE_RMS = 0.01  # -40 dBFS


def build(seconds, seed=1):
    rng = np.random.default_rng(seed)
    pieces = []
    truth = []
    total = 0
    while total < seconds * RATE:
        gap = np.zeros(int(rng.uniform(0.5, 2.0) * RATE))
        pieces.append(gap)
        total += len(gap)
        snr = rng.uniform(6, 25)
        low_amplitude = NOISE_RMS * np.sqrt(2 * 10 ** (snr / 10))
        twist = rng.uniform(-8, 4)
        for _ in range(rng.integers(6, 13)):
            key = KEYS[rng.integers(16)]
            index = KEYS.index(key)
            low = LOW[index // 4] * (1 + rng.uniform(-0.015, 0.015))
            high = HIGH[index % 4] * (1 + rng.uniform(-0.015, 0.015))
            length = int(rng.uniform(0.040, 0.100) * RATE)
            t = np.arange(length) / RATE
            tone = low_amplitude * np.sin(2 * np.pi * low * t + rng.uniform(0, 2 * np.pi))
            tone += low_amplitude * 10 ** (twist / 20) * np.sin(2 * np.pi * high * t + rng.uniform(0, 2 * np.pi))
            pause = np.zeros(int(rng.uniform(0.040, 0.100) * RATE))
            pieces += [tone, pause]
            total += len(tone) + len(pause)
            truth.append(key)
    signal = np.concatenate(pieces)
    signal += rng.standard_normal(len(signal)) * NOISE_RMS
    return signal, "".join(truth)


def limit_case(scale=(1.0, 1.0), twist=0.0, tone=0.07, pause=0.07, snr=None, seed=2):
    """Every key 10 times under one condition, clean unless `snr` is given."""
    rng = np.random.default_rng(seed)
    amplitude = 0.2
    pieces = [np.zeros(RATE // 2)]
    truth = KEYS * 10
    for key in truth:
        index = KEYS.index(key)
        length = int(tone * RATE)
        t = np.arange(length) / RATE
        low = LOW[index // 4] * scale[0]
        high = HIGH[index % 4] * scale[1]
        burst = amplitude * np.sin(2 * np.pi * low * t + rng.uniform(0, 2 * np.pi))
        burst += amplitude * 10 ** (twist / 20) * np.sin(2 * np.pi * high * t + rng.uniform(0, 2 * np.pi))
        pieces += [burst, np.zeros(int(pause * RATE))]
    pieces.append(np.zeros(RATE // 2))
    signal = np.concatenate(pieces)
    if snr is not None:
        signal += rng.standard_normal(len(signal)) * np.sqrt(amplitude**2 / 2 / 10 ** (snr / 10))
    return signal, truth


LIMIT_CASES = [
    ("twist -8 dB", dict(twist=-8.0), True),
    ("twist +4 dB", dict(twist=4.0), True),
    ("both tones +1.5 %", dict(scale=(1.015, 1.015)), True),
    ("both tones -1.5 %", dict(scale=(0.985, 0.985)), True),
    ("40 ms tones, 40 ms pauses", dict(tone=0.04, pause=0.04), True),
    ("6 dB SNR, twist -8 dB", dict(snr=6.0, twist=-8.0), True),
    ("both tones +3.5 %", dict(scale=(1.035, 1.035)), False),
    ("low tone -3.5 %", dict(scale=(0.965, 1.0)), False),
    ("20 ms tones", dict(tone=0.02, pause=0.07), False),
    ("23 ms tones", dict(tone=0.023, pause=0.07), False),
]


def write_wav16(path, samples):
    ints = np.round(np.clip(samples, -1, 1 - 2**-15) * 32768).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(ints.tobytes())


def score(truth, decoded):
    """Aligns decoded keys to the truth (edit distance): (right, wrong, missed, extra)."""
    n, m = len(truth), len(decoded)
    cost = np.zeros((n + 1, m + 1), dtype=np.int32)
    cost[:, 0] = np.arange(n + 1)
    cost[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        same = np.array([truth[i - 1] == c for c in decoded], dtype=np.int32)
        row = cost[i]
        previous = cost[i - 1]
        diagonal = previous[:-1] + 1 - same
        up = previous[1:] + 1
        best = np.minimum(diagonal, up)
        for j in range(1, m + 1):
            row[j] = min(best[j - 1], row[j - 1] + 1)
    i, j = n, m
    right = wrong = missed = extra = 0
    while i > 0 or j > 0:
        if i > 0 and j > 0 and cost[i, j] == cost[i - 1, j - 1] + (truth[i - 1] != decoded[j - 1]):
            if truth[i - 1] == decoded[j - 1]:
                right += 1
            else:
                wrong += 1
            i, j = i - 1, j - 1
        elif i > 0 and cost[i, j] == cost[i - 1, j] + 1:
            missed += 1
            i -= 1
        else:
            extra += 1
            j -= 1
    return right, wrong, missed, extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output")
    parser.add_argument("--seconds", type=float, default=600)
    args = parser.parse_args()
    signal, truth = build(args.seconds)
    write_wav16(args.output, signal)
    print(truth)


if __name__ == "__main__":
    main()
