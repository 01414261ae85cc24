#!/usr/bin/env python3
"""Talkers for the feedback evaluation (Scripts/feedback_eval.sh, `make feedback-eval`).

Writes into DIR, at 48 kHz, 32-bit float, mono, deterministic:

* speech.wav: 60 s of espeak-ng speech, eight voices (English, German,
  French, Spanish; female and male), sentences at 140-175 words a
  minute, each at its own level (0 to -4 dB), pauses of 0.3-1.2 s;
* music.wav: 60 s of synthesized music, in random order: chords of
  organ-like notes held 2-8 s; a saw lead with +-20 cent vibrato over a
  bass; bass lines of 40-120 Hz notes; DTMF keys over a CTCSS sub-tone;
  long flute-like notes (nearly pure sines, slow attack); a 220 Hz saw.

Usage: .build/venv/bin/python Scripts/eval/feedback_signals.py DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import room_impulse_responses  # noqa: E402  (the float WAV writer)
import talk_eval  # noqa: E402  (espeak-ng, trimming)

RATE = 48_000
VOICES = ["en-us", "en-gb", "en-us+f3", "de", "en+m3", "fr", "en-us+f2", "es"]
CTCSS = [67.0, 88.5, 100.0, 123.0, 151.4, 186.2, 250.3]
DTMF = [(697, 1209), (770, 1336), (852, 1477), (941, 1633), (697, 1336), (852, 1209)]


def speech(seconds, directory, seed=1):
    rng = np.random.default_rng(seed)
    parts, total, index = [], 0, 0
    while total < seconds * RATE:
        text = talk_eval.SENTENCES[index % len(talk_eval.SENTENCES)]
        voice = VOICES[index % len(VOICES)]
        utterance = talk_eval.trim(talk_eval.espeak(text, voice, [140, 160, 175][index % 3], directory, index))
        utterance = utterance / np.max(np.abs(utterance)) * 10 ** (rng.uniform(-4, 0) / 20)
        pause = np.zeros(int(rng.uniform(0.3, 1.2) * RATE))
        parts += [utterance, pause]
        total += len(utterance) + len(pause)
        index += 1
    return np.concatenate(parts)[: seconds * RATE]


def note(frequency, duration, partials, vibrato_cents=0.0, vibrato_rate=5.5, attack=0.03, release=0.1):
    n = int(duration * RATE)
    t = np.arange(n) / RATE
    instantaneous = frequency * 2 ** (vibrato_cents / 1200 * np.sin(2 * np.pi * vibrato_rate * t))
    phase = 2 * np.pi * np.cumsum(instantaneous) / RATE
    x = sum(amplitude * np.sin(k * phase) for k, amplitude in partials)
    envelope = np.clip(np.minimum(t / attack, (duration - t) / release), 0, 1)
    return x * envelope


def music(seconds, seed=2):
    rng = np.random.default_rng(seed)
    n = seconds * RATE
    x = np.zeros(n)

    def add(signal, at):
        start = int(at * RATE)
        end = min(n, start + len(signal))
        if end > start:
            x[start:end] += signal[: end - start]

    organ = [(1, 1), (2, 0.5), (3, 0.3), (4, 0.2), (6, 0.1)]
    saw = [(k, 1 / k) for k in range(1, 16)]
    flute = [(1, 1), (2, 0.05), (3, 0.02)]
    t = 0.0
    while t < seconds:
        kind = rng.integers(0, 6)
        if kind == 0:  # chord
            duration = rng.uniform(2, 8)
            root = rng.choice([220, 247, 262, 294, 330, 349, 392])
            for ratio in (1, 1.26, 1.5, 2):
                add(0.08 * note(root * ratio, duration, organ), t)
        elif kind == 1:  # vibrato lead over a bass
            duration = rng.uniform(3, 6)
            f = rng.choice([440, 523, 587, 659, 784, 880])
            add(0.12 * note(f, duration, saw[:8], vibrato_cents=20), t)
            add(0.15 * note(f / 8, duration, [(1, 1), (2, 0.4), (3, 0.2)]), t)
        elif kind == 2:  # bass line
            duration = 0.0
            for _ in range(8):
                add(0.25 * note(rng.uniform(40, 120), 0.45, [(1, 1), (2, 0.5), (3, 0.25)]), t + duration)
                duration += 0.5
        elif kind == 3:  # DTMF keys over a CTCSS sub-tone
            duration = 0.0
            subtone = rng.choice(CTCSS)
            for _ in range(8):
                low, high = DTMF[rng.integers(len(DTMF))]
                key = note(low, 0.1, [(1, 1)], attack=0.002, release=0.002)
                key += note(high, 0.1, [(1, 1)], attack=0.002, release=0.002)
                add(0.12 * key, t + duration)
                duration += 0.2
            add(0.05 * note(subtone, duration + 1, [(1, 1)]), t)
            duration += 1
        elif kind == 4:  # a long, nearly pure note
            duration = rng.uniform(2, 6)
            f = rng.choice([523, 587, 659, 698, 784, 880, 988, 1047, 1175, 1319, 1568, 2093, 2349, 2637])
            add(0.15 * note(f, duration, flute, attack=0.08), t)
        else:  # the 220 Hz saw
            duration = rng.uniform(2, 4)
            add(0.1 * note(220, duration, saw), t)
        t += duration
    return x / np.max(np.abs(x)) * 0.5


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    work = os.path.join(directory, "espeak")
    os.makedirs(work, exist_ok=True)
    room_impulse_responses.write_float_wav(os.path.join(directory, "speech.wav"), speech(60, work).astype(np.float32))
    room_impulse_responses.write_float_wav(os.path.join(directory, "music.wav"), music(60).astype(np.float32))


if __name__ == "__main__":
    main()
