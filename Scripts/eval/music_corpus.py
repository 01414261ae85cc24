#!/usr/bin/env python3
"""Real music for the howl guard's evaluation, built from Debian packages.

Two groups, never mixed: the guard's settings may be chosen on the `tune`
clips; the `check` clips (other packages, other instruments) are only
measured. Each clip is 60 s of one recording, decoded by ffmpeg to 48 kHz
mono 32-bit float, its peak set to -12 dBFS (the evaluation scales it to
the loop's gain). Held notes of sampled instruments are rendered with
fluidsynth from fluid-soundfont-gm (real recorded samples played by a MIDI
file this script writes: three notes at a time, each held 4-8 s, with
the swells of a player's expression). Everything is deterministic and
cached in the output folder.

Usage: music_corpus.py [OUTPUT_DIR]    writes OUTPUT_DIR/{tune,check}/KIND-NAME.wav
                                        and OUTPUT_DIR/index.tsv (group, kind, name, source),
                                        by default `music-corpus` in the corpus cache
                                        (`real_corpus.CACHE_ROOT`), and prints the folder
"""
import hashlib
import os
import struct
import subprocess
import sys

import numpy as np

import real_corpus

RATE = 48_000
SECONDS = 60
PEAK_DBFS = -12.0
SOUNDFONT = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

WESNOTH = "/usr/share/games/wesnoth/1.16/data/core/music"
HEDGEWARS = "/usr/share/games/hedgewars/Data/Music"
MOH = "/usr/share/asterisk/moh"
WARZONE = "/usr/share/games/warzone2100/music/albums"
DRASCULA = "/usr/share/scummvm/drascula/audio"
FRETS = "/usr/share/games/fretsonfire/data/songs"
SINGULARITY = "/usr/share/games/singularity/music"
HORIZONS = "/usr/share/unknown-horizons/content/audio/music"
CSOUND = "/usr/share/csoundqt/Examples/SourceMaterials"
# Where the evaluations keep it, beside the recorded-speech corpus, between clones.
DEFAULT_OUTPUT = os.path.join(real_corpus.CACHE_ROOT, "music-corpus")

# (group, kind, name, path or ("gm", program), start second). Only these files are read.
CLIPS = [
    # Tune: the guard's rules may be chosen on these.
    ("tune", "orchestral", "wesnoth-battle-epic", f"{WESNOTH}/battle-epic.ogg", 20),
    ("tune", "orchestral", "wesnoth-breaking-the-chains", f"{WESNOTH}/breaking_the_chains.ogg", 20),
    ("tune", "orchestral", "wesnoth-elvish-theme", f"{WESNOTH}/elvish-theme.ogg", 10),
    ("tune", "game", "hedgewars-art", f"{HEDGEWARS}/Art.ogg", 10),
    ("tune", "game", "hedgewars-castle", f"{HEDGEWARS}/Castle.ogg", 10),
    ("tune", "tracker", "frozen-bubble-mainzik", "/usr/share/games/frozen-bubble/snd/frozen-mainzik-2p.xm", 30),
    ("tune", "hold-music", "macroform-robot-dity", f"{MOH}/macroform-robot_dity.wav", 0),
    ("tune", "hold-music", "macroform-the-simplicity", f"{MOH}/macroform-the_simplicity.wav", 0),
    ("tune", "held-notes", "church-organ", ("gm", 19), 0),
    ("tune", "held-notes", "string-ensemble", ("gm", 48), 0),
    ("tune", "held-notes", "flute", ("gm", 73), 0),
    ("tune", "held-notes", "choir-aahs", ("gm", 52), 0),
    # Check: never tuned on.
    ("check", "electronic", "warzone-track17", f"{WARZONE}/aftermath_soundtrack/track17.opus", 20),
    ("check", "electronic", "singularity-awakening", f"{SINGULARITY}/Awakening.ogg", 20),
    ("check", "adventure", "drascula-track1", f"{DRASCULA}/track1.ogg", 5),
    ("check", "adventure", "drascula-track10", f"{DRASCULA}/track10.ogg", 5),
    ("check", "rock", "sectoid-metal-madness", f"{FRETS}/sectoid/Metal madness/song.ogg", 20),
    ("check", "rock", "muldjord-chaos-god", f"{FRETS}/muldjord/chaos_god/song.ogg", 20),
    ("check", "classical", "grieg-morning", f"{HORIZONS}/Peer Gynt Suite No. 1, Op. 46 - I. Morning.ogg", 0),
    ("check", "hold-music", "macroform-cold-day", f"{MOH}/macroform-cold_day.wav", 0),
    ("check", "held-notes", "violin", ("gm", 40), 0),
    ("check", "held-notes", "cello", ("gm", 42), 0),
    ("check", "held-notes", "oboe", ("gm", 68), 0),
    ("check", "held-notes", "reed-organ", ("gm", 20), 0),
    ("check", "singing", "voice-oohs", ("gm", 53), 0),
    ("check", "singing", "csound-choir", f"{CSOUND}/choir.wav", 0),
]


def seed(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def held_notes_midi(path, program, name):
    """A type-0 MIDI file: three-note chords held 4-8 s, each note with a
    slow swell and fade of its expression (controller 11), for 60 s."""
    random = np.random.default_rng(seed(name))
    ticks = 480  # per quarter note at 120 bpm: 960 ticks a second
    events = [(0, bytes([0xC0, program])), (0, bytes([0xB0, 7, 110]))]
    time = 0
    while time < SECONDS * 960:
        length = int(random.uniform(4, 8) * 960)
        root = int(random.integers(48, 67))
        chord = [root, root + int(random.choice([3, 4])), root + 7]
        for note in chord:
            events.append((time, bytes([0x90, note, 90])))
        # Expression: a swell over the first 40 %, a fade over the last 30 %.
        for step in range(0, length, 96):
            share = step / length
            level = 60 + 67 * min(1.0, share / 0.4) * min(1.0, (1 - share) / 0.3)
            events.append((time + step, bytes([0xB0, 11, int(min(127, level))])))
        for note in chord:
            events.append((time + length, bytes([0x80, note, 0])))
        time += length + int(random.uniform(0.05, 0.4) * 960)
    events.sort(key=lambda event: event[0])
    track = bytearray()
    last = 0
    for when, message in events:
        delta = when - last
        last = when
        quantity = bytearray([delta & 0x7F])
        delta >>= 7
        while delta:
            quantity.insert(0, 0x80 | (delta & 0x7F))
            delta >>= 7
        track += quantity + message
    track += b"\x00\xff\x2f\x00"
    with open(path, "wb") as out:
        out.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, ticks))
        out.write(b"MTrk" + struct.pack(">I", len(track)) + track)


def decode(source, start):
    """`SECONDS` of `source` from `start`, 48 kHz mono float (looped when shorter)."""
    command = [
        "ffmpeg", "-v", "error", "-ss", str(start), "-i", source, "-t", str(SECONDS),
        "-ac", "1", "-ar", str(RATE), "-f", "f32le", "-",
    ]
    samples = np.frombuffer(subprocess.run(command, check=True, capture_output=True).stdout, "<f4")
    if samples.size == 0:
        raise SystemExit(f"{source}: no audio decoded")
    repeats = int(np.ceil(SECONDS * RATE / samples.size))
    return np.tile(samples, repeats)[: SECONDS * RATE].astype(np.float32)


def write_wav(path, samples):
    data = samples.astype("<f4").tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 3, 1, RATE, RATE * 4, 4, 32)
    header += b"data" + struct.pack("<I", len(data))
    with open(path + ".tmp", "wb") as out:
        out.write(header + data)
    os.replace(path + ".tmp", path)


def build(output):
    rows = []
    for group, kind, name, source, start in CLIPS:
        folder = os.path.join(output, group)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{kind}-{name}.wav")
        described = source if isinstance(source, str) else f"fluid-soundfont-gm program {source[1]}"
        rows.append((group, kind, name, described))
        if os.path.exists(path):
            continue
        if isinstance(source, tuple):
            midi = path + ".mid"
            rendered = path + ".render.wav"
            held_notes_midi(midi, source[1], name)
            subprocess.run(
                ["fluidsynth", "-ni", "-q", "-g", "0.6", "-r", str(RATE), "-F", rendered,
                 SOUNDFONT, midi], check=True, capture_output=True)
            samples = decode(rendered, 0)
            os.remove(midi)
            os.remove(rendered)
        else:
            samples = decode(source, start)
        peak = float(np.max(np.abs(samples)))
        if peak <= 0:
            raise SystemExit(f"{source}: silent")
        write_wav(path, samples * (10 ** (PEAK_DBFS / 20) / peak))
    with open(os.path.join(output, "index.tsv"), "w") as index:
        for row in rows:
            index.write("\t".join(row) + "\n")
    print(f"music corpus: {len(rows)} clips of {SECONDS} s in {output}", file=sys.stderr)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if len(arguments) > 1 or arguments and arguments[0].startswith("-"):
        raise SystemExit(__doc__)
    output = arguments[0] if arguments else DEFAULT_OUTPUT
    build(output)
    print(output)
