#!/usr/bin/env python3
"""Recorded speech and music for the real-recording evaluations.

Speech: the prompt sets of Debian's `asterisk-core-sounds-{en,es,fr}-g722`
(16 kHz G.722 recordings of professional speakers reading telephone
prompts, digits, letters and words), decoded with ffmpeg. Music: the three
`macroform-*` tracks of `asterisk-moh-opsound-wav` (8 kHz music on hold).

Files are chosen by allow-list only: the three speaker folders in
`SPEAKERS`, the sub-folders in `SUBFOLDERS`, the tracks in `MUSIC` and the
files of the packages in `INDEPENDENT_SPEAKERS`. Nothing else under /usr/share/asterisk is ever listed or read, so other
sound sets installed beside these are never picked up. Prompts that are not
speech (beeps, tone pairs, the silence files) are left out by name.

Every phrase falls into a tuning half or a check half by a hash of its name
inside its speaker folder (the same prompt in every language lands in the
same half); the music tracks are split in time (first half of each track
for tuning, second half for checking). The evaluations report both halves,
so a change tuned on one can be seen not to overfit.

Two more speakers, never tuned on (`INDEPENDENT`): the French and the
Colombian Spanish prompts of `asterisk-prompt-fr-armelle` and
`asterisk-prompt-es-co` (8 kHz GSM, decoded by ffmpeg to 16 kHz), listed
from their own packages' file lists (`dpkg -L`) so that nothing else is
picked up. The evaluations report them apart, as a group of their own: no
setting is chosen by how micloop does on them, so they show how it does on
voices it has never met.

Decoded audio is cached under .build/real-corpus (rebuilt when missing).
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import wave
from math import gcd

import numpy as np
from scipy.signal import resample_poly

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, ".build", "real-corpus")
SOUNDS = "/usr/share/asterisk/sounds"
MOH = "/usr/share/asterisk/moh"
RATE = 16000  # the prompts' own rate; everything is built at this rate

# The only speaker folders read (language: folder), and their Debian packages.
SPEAKERS = {
    "en": "en_US_f_Allison",
    "es": "es_MX_f_Allison",
    "fr": "fr_CA_f_June",
}
PACKAGES = ["asterisk-core-sounds-en-g722", "asterisk-core-sounds-es-g722", "asterisk-core-sounds-fr-g722",
            "asterisk-moh-opsound-wav", "asterisk-prompt-fr-armelle", "asterisk-prompt-es-co"]
# Sub-folders of a speaker folder that hold speech ("" is the folder itself).
SUBFOLDERS = ("", "digits", "letters", "phonetic", "dictate", "followme")
# Prompts that are not speech: tones, and monkeys screeching.
NOT_SPEECH = frozenset({"beep", "beeperr", "ascending-2tone", "descending-2tone", "tt-monkeys"})
# The only music tracks read.
MUSIC = ("macroform-cold_day.wav", "macroform-robot_dity.wav", "macroform-the_simplicity.wav")
HALVES = ("tune", "check")
# Speakers no setting is tuned on (name: Debian package), reported as a group of their own.
INDEPENDENT = "independent"
INDEPENDENT_SPEAKERS = {
    "fr-armelle": "asterisk-prompt-fr-armelle",
    "es-co": "asterisk-prompt-es-co",
}
INDEPENDENT_PACKAGES = list(INDEPENDENT_SPEAKERS.values())
GROUPS = HALVES + (INDEPENDENT,)


def group_name(which):
    """How a group is named in a line: "tune half", "check half", "independent"."""
    return f"{which} half" if which in HALVES else which
# A 30 s reading, no noise, on which talk detection is known to fail.
CONGRATS = ("en", "demo-congrats")


def half(name):
    """The half of a phrase, "tune" or "check", from its name (such as "digits/7" or "vm-goodbye")."""
    return HALVES[hashlib.sha256(name.encode()).digest()[0] & 1]


def require_packages():
    missing = [folder for folder in SPEAKERS.values() if not os.path.isdir(os.path.join(SOUNDS, folder))]
    missing += [track for track in MUSIC if not os.path.isfile(os.path.join(MOH, track))]
    missing += [package for package in INDEPENDENT_PACKAGES if not package_files(package)]
    if missing:
        sys.exit(f"real corpus: {', '.join(missing)} missing; install {' '.join(PACKAGES)} (make setup)")


def phrase_names(language):
    """The speech prompts of one speaker, sorted: names relative to its folder, no extension."""
    folder = os.path.join(SOUNDS, SPEAKERS[language])
    names = []
    for sub in SUBFOLDERS:
        directory = os.path.join(folder, sub)
        if not os.path.isdir(directory):
            continue
        for entry in sorted(os.listdir(directory)):
            stem, extension = os.path.splitext(entry)
            if extension == ".g722" and stem not in NOT_SPEECH:
                names.append(f"{sub}/{stem}" if sub else stem)
    return names


def package_files(package):
    """The GSM prompts a Debian package installed, sorted (empty when it is not installed)."""
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    if listing.returncode != 0:
        return []
    return sorted(line for line in listing.stdout.splitlines()
                  if line.startswith(SOUNDS + "/") and line.endswith(".gsm") and os.path.isfile(line))


def independent_speech(speaker):
    """{name: samples at 16 kHz} for every prompt of an independent speaker (cached); names are
    paths under the sounds folder, without extension."""
    paths = package_files(INDEPENDENT_SPEAKERS[speaker])
    names = [os.path.relpath(p, SOUNDS)[: -len(".gsm")] for p in paths]
    names = [n for n in names if os.path.basename(n) not in NOT_SPEECH]
    return cached_speech(f"speech-{speaker}.npz", names,
                         lambda: decode([os.path.join(SOUNDS, n + ".gsm") for n in names], "gsm"))


def independent_phrases(speaker):
    """[(name, samples)] of an independent speaker."""
    return list(independent_speech(speaker).items())


def decode_g722(paths, rate=RATE, batch=100):
    """G.722 files decoded by ffmpeg (each with a fresh decoder), as floats at `rate`."""
    return decode(paths, "g722", rate, batch)


def decode(paths, container, rate=RATE, batch=100):
    """Files of ffmpeg's raw `container` (g722, gsm) decoded each with a fresh decoder, as floats
    at `rate` (ffmpeg resamples); one ffmpeg process per `batch` files."""
    decoded = []
    with tempfile.TemporaryDirectory() as directory:
        for first in range(0, len(paths), batch):
            chunk = paths[first:first + batch]
            inputs, outputs = [], []
            for index, path in enumerate(chunk):
                inputs += ["-f", container, "-i", path]
                outputs += ["-map", f"{index}:a", "-ar", str(rate), "-ac", "1", "-f", "s16le",
                            os.path.join(directory, f"{index}.raw")]
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *inputs, *outputs], check=True)
            for index in range(len(chunk)):
                raw = np.fromfile(os.path.join(directory, f"{index}.raw"), dtype="<i2")
                decoded.append(raw.astype(np.float64) / 32768)
    return decoded


def speech(language):
    """{name: samples at 16 kHz} for every speech prompt of one speaker (cached)."""
    require_packages()
    names = phrase_names(language)
    folder = os.path.join(SOUNDS, SPEAKERS[language])
    return cached_speech(f"speech-{language}.npz", names,
                         lambda: decode_g722([os.path.join(folder, n + ".g722") for n in names]))


def cached_speech(file, names, decode_all):
    """{name: samples} from the cache `file`, or decoded by `decode_all()` and cached."""
    cache = os.path.join(CACHE, file)
    if os.path.exists(cache):
        with np.load(cache) as stored:
            if sorted(stored.files) == sorted(n.replace("/", "__") for n in names):
                return {n: stored[n.replace("/", "__")].astype(np.float64) / 32768 for n in names}
    decoded = decode_all()
    os.makedirs(CACHE, exist_ok=True)
    partial = f"{cache}.{os.getpid()}.npz"
    np.savez(partial, **{n.replace("/", "__"): np.round(x * 32768).astype("<i2") for n, x in zip(names, decoded)})
    os.replace(partial, cache)
    return dict(zip(names, decoded))


def phrases(language, which=None):
    """[(name, samples)] of one speaker, only the phrases of half `which` if given."""
    return [(n, x) for n, x in speech(language).items() if which is None or half(n) == which]


def music(track, which=None, rate=RATE):
    """A macroform track at `rate`; `which` picks its tuning or check half (in time)."""
    require_packages()
    if track not in MUSIC:
        raise ValueError(f"{track} is not one of the music tracks used")
    samples = read_wav16(os.path.join(MOH, track))
    if which is not None:
        middle = len(samples) // 2
        samples = samples[:middle] if which == "tune" else samples[middle:]
    return resample(samples, 8000, rate)


def resample(samples, rate_from, rate_to):
    if rate_from == rate_to:
        return samples
    g = gcd(rate_from, rate_to)
    return resample_poly(samples, rate_to // g, rate_from // g)


def read_wav16(path):
    with wave.open(path, "rb") as file:
        if file.getsampwidth() != 2 or file.getnchannels() != 1:
            raise ValueError(f"{path}: expected 16-bit mono")
        return np.frombuffer(file.readframes(file.getnframes()), dtype="<i2").astype(np.float64) / 32768


def read_wav(path):
    """A mono 16 or 24-bit PCM WAV as floats."""
    with wave.open(path, "rb") as file:
        width, frames = file.getsampwidth(), file.readframes(file.getnframes())
    if width == 2:
        return np.frombuffer(frames, dtype="<i2").astype(np.float64) / 32768
    raw = np.frombuffer(frames, dtype=np.uint8).reshape(-1, 3)
    ints = (raw[:, 0].astype(np.int32) | (raw[:, 1].astype(np.int32) << 8) | (raw[:, 2].astype(np.int32) << 16))
    return np.where(ints >= 1 << 23, ints - (1 << 24), ints).astype(np.float64) / (1 << 23)


def write_wav(path, samples, rate, bits=16):
    """A mono WAV of 16 or 24-bit PCM (clipped to full scale)."""
    scale = 2 ** (bits - 1)
    ints = np.round(np.clip(samples, -1.0, 1.0 - 1 / scale) * scale).astype("<i4")
    raw = ints.astype("<i2").tobytes() if bits == 16 else \
        np.frombuffer(ints.tobytes(), dtype=np.uint8).reshape(-1, 4)[:, :3].tobytes()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with wave.open(partial, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(bits // 8)
        w.setframerate(rate)
        w.writeframes(raw)
    os.replace(partial, path)


def dtmf_receiver():
    """spandsp's DTMF receiver (Bench/dtmf_rx.c) built under .build/real-corpus."""
    source = os.path.join(ROOT, "Bench", "dtmf_rx.c")
    binary = os.path.join(CACHE, "dtmf_rx")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(["sh", "-c", f"cc -O2 -o {binary} {source} $(pkg-config --cflags --libs spandsp sndfile)"],
                       check=True)
    return binary


def summary():
    lines = []
    for language, folder in SPEAKERS.items():
        pool = speech(language)
        for which in HALVES:
            chosen = [x for n, x in pool.items() if half(n) == which]
            lines.append(f"{language} ({folder}) {which}: {len(chosen)} phrases, "
                         f"{sum(len(x) for x in chosen) / RATE / 60:.1f} min")
    for speaker, package in INDEPENDENT_SPEAKERS.items():
        pool = independent_speech(speaker)
        lines.append(f"{speaker} ({package}, {INDEPENDENT}): {len(pool)} phrases, "
                     f"{sum(len(x) for x in pool.values()) / RATE / 60:.1f} min")
    for track in MUSIC:
        lines.append(f"{track}: {len(music(track)) / RATE / 60:.1f} min")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
