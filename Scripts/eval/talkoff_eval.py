#!/usr/bin/env python3
"""Talk-off evaluation for `micloop tones`.

Speech must never decode as tones. Builds at least ten minutes of espeak-ng
speech (several voices, male and female, different speeds and pitches, text
full of numbers and long vowels), normalised to -3 dBFS peak per voice, at
48 kHz so that every plan (Handshake too) can listen, then decodes it with
every plan at once and counts the tones and sequences reported. Then the
same for four minutes of synthesized chords (music holds notes as steadily
as an encoder holds a tone).

`--check` exits non-zero when anything at all is decoded.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from talk_eval import RATE, read_float_wav, write_wav24  # noqa: E402

VOICES = [
    ("en-us", 160, 50),
    ("en-gb", 175, 40),
    ("en-us+f3", 150, 70),
    ("en-us+f2", 170, 80),
    ("en+m3", 140, 30),
    ("en-gb-scotland", 165, 50),
    ("de", 155, 60),
    ("fr", 170, 65),
]
TEXT = """
One, two, three, four, five, six, seven, eight, nine, zero. Call me back on
five five five, one two one two. Ooooh, aaaah, eeee, mmmm. The meeting is at
nine thirty on the fourth floor, room four hundred and twelve. Hello, can you
hear me? Testing, testing, one, two, three. We need seventy-seven units by
Tuesday, and another ninety-nine by Friday the thirteenth. Please hold the
line. Your call is important to us. The number you have dialled is not
available. Press one for sales, two for support, or hash for the operator.
Roger, roger, this is base, over. Copy that, mobile three, proceeding to the
north gate. Beautiful weather today, isn't it? A long, long, long sustained
note: laaaaaa, looooo, leeeeee. Whistle while you work.
"""


def speak(voice, speed, pitch, directory):
    raw = os.path.join(directory, f"{voice}.wav")
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", raw, TEXT * 2],
        check=True,
    )
    out = os.path.join(directory, f"{voice}_48k.wav")
    subprocess.run(["sox", "-V1", raw, "-r", str(RATE), "-b", "32", "-e", "floating-point", out], check=True)
    speech = read_float_wav(out)
    return speech / np.max(np.abs(speech)) * 10 ** (-3 / 20)


def chords(seconds, seed=5):
    """Synthesized music: chords of a bass note and a triad or seventh
    (roots A1 to C5), 1–3 s each, as pure sines or with five harmonics,
    struck and decaying at random rates: notes as steady as any encoder's,
    many within a fraction of a percent of a signalling tone."""
    rng = np.random.default_rng(seed)
    pieces = []
    total = 0
    while total < seconds * RATE:
        root = int(rng.integers(33, 73))
        shape = [0, 4, 7] if rng.random() < 0.5 else [0, 3, 7, 10]
        length = int(rng.uniform(1.0, 3.0) * RATE)
        t = np.arange(length) / RATE
        envelope = np.minimum(1, t / 0.02) * np.exp(-t * rng.uniform(0, 1.5))
        harmonics = [1] if rng.random() < 0.4 else [1, 2, 3, 4, 5]
        chord = np.zeros(length)
        for note in [root - 12] + [root + k for k in shape]:
            frequency = 440 * 2 ** ((note - 69) / 12)
            for h in harmonics:
                if frequency * h < RATE / 2:
                    chord += np.sin(2 * np.pi * frequency * h * t + rng.random() * 2 * np.pi) / h
        pieces.append(chord * envelope)
        total += length
    music = np.concatenate(pieces)
    return music / np.max(np.abs(music)) * 10 ** (-3 / 20)


def decode(micloop, plans, path):
    """The tone and sequence events micloop reports for a file."""
    out = subprocess.run([micloop, "tones", "--plan", plans, "--input", path, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [e for e in events if e["event"] in ("tone", "tone_start", "sequence", "page")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--music-minutes", type=float, default=4.0)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--keep", help="also save the speech file here")
    args = parser.parse_args()
    plans = ("dtmf,ccir-1,ccir-2,pccir,zvei1,zvei2,zvei3,dzvei,pzvei,eea,eia,handshake,ctcss,siren,"
             "twotone:1000,1200,twotone:600,1500:1000,3000,twotone:220,440")
    music = chords(args.music_minutes * 60)
    with tempfile.TemporaryDirectory() as directory:
        pieces = []
        total = 0
        while total < args.minutes * 60 * RATE:
            for voice, speed, pitch in VOICES:
                piece = speak(voice, speed, pitch, directory)
                pieces.append(piece)
                total += len(piece)
        speech = np.concatenate(pieces)
        path = os.path.join(directory, "speech.wav")
        write_wav24(path, speech)
        minutes = len(speech) / RATE / 60
        if args.keep:
            write_wav24(args.keep, speech)
        music_path = os.path.join(directory, "music.wav")
        write_wav24(music_path, music)
        try:
            found = decode(args.micloop, plans, path)
            found_in_music = decode(args.micloop, plans, music_path)
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 1
    print(f"talk-off: {minutes:.1f} min of speech, {len(VOICES)} voices, "
          f"{len(music) / RATE / 60:.1f} min of synthesized chords, plans {plans}")
    for what, events in (("speech", found), ("music", found_in_music)):
        per_plan = {}
        for event in events:
            per_plan[event["plan"]] = per_plan.get(event["plan"], 0) + 1
        print(f"talk-off: {len(events)} false decodes in {what} " + (json.dumps(per_plan) if per_plan else ""))
        for event in events[:20]:
            print("  " + json.dumps(event))
    if args.check and (found or found_in_music or minutes < args.minutes):
        print("talk-off: FAILED (speech and music must decode as nothing)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
