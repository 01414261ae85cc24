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

Men's and women's voices (`VOICES`): every voice above is a woman's, and a
low voice's harmonics reach where a woman's do not, so three more packages
of recorded people (none synthesized) add men, and women of other languages:
the recorded utterances of `festvox-ru` (one Russian man reading
sentences, the units of a Festival cluster-unit voice: the recordings
themselves, 16 kHz), the Czech dialogue of `fillets-ng-data-cs` (the game's
big fish, a man, and small fish, a woman: files `*-v-*` and `*-m-*`;
22.05 kHz Vorbis), and the sample speech of `codec2-examples` (short
clips of several men and two women, 8 kHz, listed by name in
`CODEC2_CLIPS`). Each voice lies wholly in one group, so a detector tuned
on the tune group is checked on men and women it never heard: the Russian
man tunes, the two Czech voices check, the codec2 clips are independent.
Their files come from the packages' own file lists (`dpkg -L`), by folder
and name pattern, and nothing else is read.

Decoded audio is cached under the user's cache folder, in
`micloop/real-corpus` (`$XDG_CACHE_HOME`, else `~/.cache`; or wherever
`MICLOOP_CORPUS_CACHE` names), rebuilt when missing: a fresh clone reuses
what an earlier one decoded, and each file's name carries its version.
"""

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import wave
from math import gcd

import numpy as np
from scipy.signal import resample_poly

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE_ROOT = os.environ.get("MICLOOP_CORPUS_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "micloop")
CACHE = os.path.join(CACHE_ROOT, "real-corpus")
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
            "asterisk-moh-opsound-wav", "asterisk-prompt-fr-armelle", "asterisk-prompt-es-co",
            "festvox-ru", "fillets-ng-data-cs", "codec2-examples"]
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

SEXES = ("man", "woman")
# The speakers above are all women (Allison twice, June, Armelle, and the Colombian speaker).
SPEAKER_SEX = dict.fromkeys(list(SPEAKERS) + list(INDEPENDENT_SPEAKERS), "woman")


class Voice:
    """A recorded voice of a known sex: its package, the files of it read (a folder and a
    pattern of names among the package's own files), how ffmpeg reads them, and its group."""

    def __init__(self, sex, language, group, package, folder, pattern, input_format=()):
        self.sex, self.language, self.group, self.package = sex, language, group, package
        self.folder, self.pattern, self.input_format = folder, re.compile(pattern), tuple(input_format)


FESTVOX_RU = "/usr/share/festival/voices/russian/msu_ru_nsh_clunits/wav"
FILLETS = "/usr/share/games/fillets-ng/sound"
CODEC2 = "/usr/share/codec2/raw"
# codec2's sample speech, originals only (not the clips coded at 2400 bit/s, nor the
# concatenations and the noisy off-air recordings): median pitch 83-131 Hz for the men,
# 178-184 Hz for the women.
CODEC2_CLIPS = {
    "man": ("big_dog", "cq_ref", "cross", "g3plx", "hts1", "kristoff", "mmt1", "morig", "ve9qrp", "vk5qi"),
    "woman": ("forig", "hts2"),
}
# 8 kHz 16-bit little-endian PCM without a header.
CODEC2_RAW = ("-f", "s16le", "-ar", "8000", "-ac", "1")
VOICES = {
    "ru-man": Voice("man", "ru", "tune", "festvox-ru", FESTVOX_RU, r"^ru_\d+\.wav$"),
    "cs-man": Voice("man", "cs", "check", "fillets-ng-data-cs", FILLETS, r"^[^/]+/cs/[^/]+-v-[^/]+\.ogg$"),
    "cs-woman": Voice("woman", "cs", "check", "fillets-ng-data-cs", FILLETS, r"^[^/]+/cs/[^/]+-m-[^/]+\.ogg$"),
    "en-men": Voice("man", "en", INDEPENDENT, "codec2-examples", CODEC2,
                    "^(" + "|".join(CODEC2_CLIPS["man"]) + r")\.raw$", CODEC2_RAW),
    "en-women": Voice("woman", "en", INDEPENDENT, "codec2-examples", CODEC2,
                      "^(" + "|".join(CODEC2_CLIPS["woman"]) + r")\.raw$", CODEC2_RAW),
}
VOICE_PACKAGES = sorted({v.package for v in VOICES.values()})


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
    missing += [package for package in VOICE_PACKAGES if not installed_files(package)]
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


def installed_files(package):
    """Every file a Debian package installed, sorted (empty when it is not installed)."""
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    if listing.returncode != 0:
        return []
    return sorted(line for line in listing.stdout.splitlines() if os.path.isfile(line))


def package_files(package):
    """The GSM prompts a Debian package installed, sorted (empty when it is not installed)."""
    return [line for line in installed_files(package) if line.startswith(SOUNDS + "/") and line.endswith(".gsm")]


def voice_files(voice):
    """The files of a voice: names relative to its folder, sorted."""
    v = VOICES[voice]
    names = [os.path.relpath(p, v.folder) for p in installed_files(v.package) if p.startswith(v.folder + "/")]
    return [n for n in names if v.pattern.match(n)]


def voice_speech(voice):
    """{name: samples at 16 kHz} for every file of a voice (cached); names without extension."""
    v = VOICES[voice]
    files = voice_files(voice)
    names = [os.path.splitext(n)[0] for n in files]
    return cached_speech(f"voice-{voice}.npz", names,
                         lambda: decode_inputs([[*v.input_format, "-i", os.path.join(v.folder, f)] for f in files]))


def voice_phrases(voice):
    """[(name, samples)] of a voice."""
    return list(voice_speech(voice).items())


def voices(group=None, sex=None):
    """The voices of a group and sex (all when not given), in the order of VOICES."""
    return [name for name, v in VOICES.items() if (group is None or v.group == group) and (sex is None or v.sex == sex)]


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
    return decode_inputs([["-f", container, "-i", path] for path in paths], rate, batch)


def decode_inputs(inputs_per_file, rate=RATE, batch=100):
    """Files decoded by ffmpeg, each given by its input options (ending with `-i PATH`), as
    floats at `rate` (ffmpeg resamples); one ffmpeg process per `batch` files."""
    decoded = []
    with tempfile.TemporaryDirectory() as directory:
        for first in range(0, len(inputs_per_file), batch):
            chunk = inputs_per_file[first:first + batch]
            inputs, outputs = [], []
            for index, options in enumerate(chunk):
                inputs += options
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


def shown(path):
    """`path` as a report prints it: under the home folder as ~/..., else relative."""
    home = os.path.expanduser("~")
    if path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return os.path.relpath(path)


def dtmf_receiver():
    """spandsp's DTMF receiver (Bench/dtmf_rx.c) built into the cache (again when the source is newer)."""
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
    for voice, v in VOICES.items():
        pool = voice_speech(voice)
        lines.append(f"{voice} ({v.package}, {v.sex}, {v.language}, {v.group}): {len(pool)} files, "
                     f"{sum(len(x) for x in pool.values()) / RATE / 60:.1f} min")
    for track in MUSIC:
        lines.append(f"{track}: {len(music(track)) / RATE / 60:.1f} min")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
