#!/usr/bin/env python3
"""Tone talk-off on recorded speech and music: micloop beside spandsp and multimon-ng.

Speech: every prompt of the three speaker folders of `real_corpus.py`
(English, Spanish, French; about 80 minutes), one long file per speaker and
half, the prompts one after another as recorded, at 8 kHz (a phone line)
and 16 kHz (the recordings' own rate), and at 48 kHz for the one plan that
needs it (Handshake); and, as a group of their own, every prompt of the two
independent speakers (French and Colombian Spanish, 25 minutes of 8 kHz
GSM recordings no setting was tuned on), one file per speaker. Men's and women's
voices (`real_corpus.VOICES`: a Russian man in the tune group, a Czech man
and woman in the check group, codec2's sample speakers independent), one
file per voice and up to `PART_MINUTES` of it; every speech row is
reported per group and per sex. Music: the three macroform music-on-hold tracks (8 kHz
originals; first half of each track tuning, second half check), and the 26
clips of real music of `music_corpus.py` (orchestral, game, tracker, rock,
classical, singing, held notes of sampled instruments; 60 s each, in its
tune and check groups, resampled from 48 kHz), at the same rates; and, in
the independent group, every track of supertux-data whole (game music
from chiptune to orchestral, about 98 minutes, decoded from Ogg Vorbis),
which no rule was ever chosen on.

Decoded with
* micloop `tones --plan dtmf --input F --json`, and with every other plan
  at once (`ALL_PLANS`: the 5-tone plans, the siren signals, two-tone
  pages; Handshake too at 48 kHz), with `--repeat-window 0` so that every
  decode counts;
* CTCSS only on radio-filtered audio (a transmitter's 300 Hz sub-audible
  high-pass: 6th-order elliptic, 40 dB down below it, as
  Scripts/eval/ctcss_eval.py), where a voice or a bass line cannot sit on the
  sub-tones; CTCSS on the music as it is (full band) is reported apart, for
  information only;
* spandsp's `dtmf_rx` (Bench/dtmf_rx.c, default settings, 8 kHz) and
  `multimon-ng -a DTMF` (8 and 16 kHz files; it resamples through sox).

Every false DTMF key, call, page and siren signal micloop decodes is listed
with its file, time and the prompt playing then. The peers print no times:
with `--place-peers`, a peer's false key is placed by decoding the file cut
ever shorter (the decoders are causal: the k-th key is in a file cut at t
exactly when it was decoded by t; a bisection per key), to within 50 ms of
when the peer decoded it, which costs most of the evaluation's time (about
ten minutes of its eleven); without it the peers' keys are counted and
listed without a time.

`--check` fails (exit 1) unless micloop decodes no DTMF key and no call,
page or siren signal in any of it (on the independent music and the calls
on the real-music clips, no more than today's floors), and no CTCSS sub-tone in the
radio-filtered audio, over at least `TARGET_SPEECH_MINUTES` of speech
(`TARGET_MINUTES_EACH` of it men's and as much women's);
`--report-only` prints the verdict without failing. The files are cached
in the corpus cache (real_corpus.CACHE) as talkoff-* (the 48 kHz copies are made afresh).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.signal import ellip, sosfilt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import music_corpus  # noqa: E402
import real_corpus  # noqa: E402
from talk_eval import read_float_wav  # noqa: E402

# Targets (micloop): nothing decoded, on at least this much speech.
TARGET_FALSE_KEYS = 0
TARGET_FALSE_CALLS = 0  # 5-tone calls, two-tone pages, siren signals, Handshake messages
# On the real music of `music_corpus.py` an orchestra's trill of a note and its octave decoded as an EIA call
# (at 8 and 16 kHz) until the rule for notes that swell and waver (SelectiveCallRule). --check fails when
# music's calls grow past this floor.
FLOOR_MUSIC_CORPUS_CALLS = 0
# Music no setting was tuned on, a group of its own: every track of supertux-data (game music of many kinds,
# 98 minutes), whole, at its own level. Its false keys and calls are an open target: --check fails when
# they grow past what micloop decodes today.
INDEPENDENT_MUSIC = "/usr/share/games/supertux2/music"
INDEPENDENT_MUSIC_PACKAGE = "supertux-data"
# Keys: none (the 3 it decoded, a `*`, a `3` and a `B`, went with the rules for two notes, a pair over music's bass
# and a keypad's tolerance, chosen on other game music); calls: none (a melody as CCIR-1 and PCCIR 2124212 and
# 24212, and a trill as EIA E00000, at both rates, went with the rule for notes that swell and waver, chosen on
# other game music); sub-tones: one at both rates (radio-filtered).
FLOOR_INDEPENDENT_MUSIC_KEYS = 0
FLOOR_INDEPENDENT_MUSIC_CALLS = 0
FLOOR_INDEPENDENT_MUSIC_SUBTONES = 2
TARGET_FALSE_SUBTONES = 0  # CTCSS on radio-filtered speech and music
TARGET_SPEECH_MINUTES = 120
# Of it men's and women's each: a low voice's harmonics land where a woman's do not.
TARGET_MINUTES_EACH = 60

PAGERS = "twotone:669.9,1153.4,twotone:832.5,1433.4,twotone:1092.4,1881,twotone:1285.8,2096.9"
ALL_PLANS = ("dtmf,ccir-1,ccir-2,pccir,zvei1,zvei2,zvei3,dzvei,pzvei,eea,eia,siren,"
             "twotone:1000,1200,twotone:600,1500:1000,3000,twotone:220,440," + PAGERS)
WIDE_ONLY_PLANS = "handshake"  # needs 41 kHz or more
RATES = (8000, 16000)
WIDE_RATE = 48000
MUSIC_BLOCK = 5.0  # seconds: the stretches of music named in the list of false decodes
# The real music of the howl guard's evaluation (`music_corpus.py`: 26 clips of 60 s, orchestral, game,
# tracker and rock music, held notes of sampled instruments, in tune and check groups), built here once.
MUSIC_CORPUS = music_corpus.DEFAULT_OUTPUT
PLACE_RESOLUTION = 0.05  # seconds: how finely a peer's false key is placed
CORPUS_VERSION = 1
PART_MINUTES = 10  # a voice's recordings are cut into files this long: a peer's false keys are placed by bisection


def radio_filter(samples, rate):
    """A transmitter's sub-audible filter: 6th-order elliptic high-pass at 300 Hz, 40 dB stop band."""
    return sosfilt(ellip(6, 0.5, 40, 300, "highpass", fs=rate, output="sos"), samples)


def independent_music_tracks():
    """Every track of the independent music, sorted: [(name, path)]."""
    if not os.path.isdir(INDEPENDENT_MUSIC):
        sys.exit(f"real talk-off evaluation: {INDEPENDENT_MUSIC} missing; install {INDEPENDENT_MUSIC_PACKAGE} "
                 "(make setup)")
    tracks = []
    for folder, _, names in os.walk(INDEPENDENT_MUSIC):
        for name in names:
            if name.endswith(".ogg"):
                tracks.append((f"supertux-{os.path.basename(folder)}-{name.removesuffix('.ogg')}",
                               os.path.join(folder, name)))
    return sorted(tracks)


def track_seconds(path):
    out = subprocess.run(["ffprobe", "-v", "quiet", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                         capture_output=True, text=True).stdout
    return float(out.strip() or 0)


def voice_parts(voice):
    """A voice's recordings in order, cut into parts of at most PART_MINUTES: [(source, [(name, samples)])]."""
    parts, part, length = [], [], 0
    for name, samples in real_corpus.voice_phrases(voice):
        if part and length + len(samples) > PART_MINUTES * 60 * real_corpus.RATE:
            parts.append(part)
            part, length = [], 0
        part.append((name, samples))
        length += len(samples)
    parts.append(part)
    return [(voice if len(parts) == 1 else f"{voice}-{k + 1}", chosen) for k, chosen in enumerate(parts)]


def build(directory, wide_directory=None):
    """The audio files: [(kind, half, source, rate, variant, path, pieces, sex)], pieces (start s, end s, name);
    sex "man" or "woman" for speech, None for music. 48 kHz copies (for Handshake) only with
    `wide_directory`, which is not kept."""
    files = []
    music_corpus.build(MUSIC_CORPUS)
    for which in real_corpus.GROUPS:
        sources = []
        if which == real_corpus.INDEPENDENT:
            speakers = [(speaker, real_corpus.independent_phrases(speaker), "", ".gsm", real_corpus.SPEAKER_SEX[speaker])
                        for speaker in real_corpus.INDEPENDENT_SPEAKERS]
        else:
            speakers = [(language, real_corpus.phrases(language, which), folder + "/", ".g722",
                         real_corpus.SPEAKER_SEX[language])
                        for language, folder in real_corpus.SPEAKERS.items()]
        for voice in real_corpus.voices(group=which):
            v = real_corpus.VOICES[voice]
            speakers += [(source, chosen, v.folder + "/", "", v.sex) for source, chosen in voice_parts(voice)]
        for speaker, chosen, folder, extension, sex in speakers:
            pieces, position = [], 0
            for name, samples in chosen:
                pieces.append((position / real_corpus.RATE, (position + len(samples)) / real_corpus.RATE,
                               f"{folder}{name}{extension}"))
                position += len(samples)
            sources.append(("speech", speaker, lambda c=chosen: np.concatenate([x for _, x in c]), pieces, sex))
        # The independent speakers come without music: the tracks are all in the halves.
        for track in real_corpus.MUSIC if which != real_corpus.INDEPENDENT else ():
            length = len(real_corpus.music(track, which, rate=8000)) / 8000
            offset = 0.0 if which == "tune" else len(real_corpus.music(track, rate=8000)) / 2 / 8000
            blocks = np.arange(0, length, MUSIC_BLOCK)
            pieces = [(a, min(length, a + MUSIC_BLOCK), f"{track} at {offset + a:.0f} s") for a in blocks]
            sources.append(("music", track.removesuffix(".wav"), lambda t=track, w=which: real_corpus.music(t, w),
                            pieces, None))
        for name, track in independent_music_tracks() if which == real_corpus.INDEPENDENT else ():
            length = track_seconds(track)
            pieces = [(a, min(length, a + MUSIC_BLOCK), f"{name} at {a:.0f} s")
                      for a in np.arange(0, length, MUSIC_BLOCK)]
            sources.append(("music", name, lambda t=track: real_corpus.decode_inputs([["-i", t]])[0], pieces, None))
        if which != real_corpus.INDEPENDENT:
            for group, kind, name, _, _ in music_corpus.CLIPS:
                if group != which:
                    continue
                clip = os.path.join(MUSIC_CORPUS, group, f"{kind}-{name}.wav")
                blocks = np.arange(0, music_corpus.SECONDS, MUSIC_BLOCK)
                pieces = [(a, min(music_corpus.SECONDS, a + MUSIC_BLOCK), f"{kind}-{name} at {a:.0f} s")
                          for a in blocks]
                sources.append(("music", f"{kind}-{name}",
                                lambda c=clip: real_corpus.resample(read_float_wav(c), music_corpus.RATE,
                                                                    real_corpus.RATE),
                                pieces, None))
        for kind, source, load, pieces, sex in sources:
            samples = None
            wanted = [(rate, variant, directory) for rate in RATES for variant in ("full", "radio")]
            if wide_directory:
                wanted.append((WIDE_RATE, "full", wide_directory))
            for rate, variant, folder in wanted:
                path = os.path.join(folder, f"{kind}-{source}-{which}-{rate // 1000}k-{variant}.wav")
                if not os.path.exists(path):
                    if samples is None:
                        samples = load()
                    audio = real_corpus.resample(samples, real_corpus.RATE, rate)
                    if variant == "radio":
                        audio = radio_filter(audio, rate)
                    real_corpus.write_wav(path, audio, rate)
                files.append((kind, which, source, rate, variant, path, pieces, sex))
    return files


def micloop_events(micloop, plans, path):
    out = subprocess.run([micloop, "tones", "--plan", plans, "--input", path, "--json", "--repeat-window", "0"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"micloop tones failed on {path}: {out.stderr.strip()}")
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [e for e in events if e["event"] in ("tone", "tone_start", "sequence", "page")]


def peer_keys(peer, path, receiver):
    if peer == "spandsp":
        out = subprocess.run([receiver, path], capture_output=True, text=True, check=True).stdout
    else:
        out = subprocess.run(["multimon-ng", "-q", "-t", "wav", "-a", "DTMF", path], capture_output=True,
                             text=True, check=True).stdout
    return [line[6:].strip() for line in out.splitlines() if line.startswith("DTMF: ")]


def place_peer_keys(peer, path, rate, receiver, count):
    """When a peer's `count` keys come: [(key, time s)]. The decoders are causal, so the
    k-th key is decoded by time t exactly when a file cut at t holds k keys: a bisection on
    the cut finds each key's time to within PLACE_RESOLUTION."""
    samples = real_corpus.read_wav(path)
    placed = []
    with tempfile.TemporaryDirectory() as directory:
        part = os.path.join(directory, "part.wav")

        def keys_until(t):
            real_corpus.write_wav(part, samples[: int(t * rate)], rate)
            return peer_keys(peer, part, receiver)

        low = 0.0
        for k in range(1, count + 1):
            high = len(samples) / rate
            if len(keys_until(high)) < k:
                placed.append(("?", None))
                continue
            while high - low > PLACE_RESOLUTION:
                middle = (low + high) / 2
                if len(keys_until(middle)) >= k:
                    high = middle
                else:
                    low = middle
            placed.append((keys_until(high)[k - 1], high))
            low = high
    return placed


def piece_at(pieces, t):
    for a, b, name in pieces:
        if a <= t < b:
            return name
    return "?"


def jobs_for(kind, rate, variant):
    """The decoder runs on one file: (tool, plans)."""
    if variant == "radio":
        return [("micloop", "ctcss")]
    if rate == WIDE_RATE:
        return [("micloop", "all")]
    jobs = [("micloop", "dtmf"), ("micloop", "all"), ("multimon-ng", "dtmf")]
    if rate == 8000:
        jobs.append(("spandsp", "dtmf"))
    if kind == "music":
        jobs.append(("micloop", "ctcss full band"))
    return jobs


def classify(event):
    """What a micloop event counts as: keys, calls, subtones or lone tones (None: not counted)."""
    if event["event"] == "tone_start":
        return None  # counted by its tone event
    if event["event"] in ("sequence", "page"):
        return "calls"
    if event.get("plan") == "dtmf":
        return "keys"
    if event.get("plan") == "ctcss":
        return "subtones"
    return "lone tones"


def run_job(micloop, receiver, tool, plans, rate, path, place_peers=False):
    """[(what, plan, decoded, time s or None)] of one decoder run."""
    if tool == "micloop":
        decoding = {"dtmf": "dtmf", "ctcss": "ctcss", "ctcss full band": "ctcss",
                    "all": ALL_PLANS + ("," + WIDE_ONLY_PLANS if rate == WIDE_RATE else "")}[plans]
        found = []
        for e in micloop_events(micloop, decoding, path):
            what = classify(e)
            if what:
                found.append((what, e.get("plan", "?"), e.get("symbol") or e.get("text") or e.get("frequencies"),
                              e.get("time")))
        return found
    keys = peer_keys(tool, path, receiver)
    if not keys:
        return []
    if not place_peers:
        return [("keys", "dtmf", key, None) for key in keys]
    return [("keys", "dtmf", key, t) for key, t in place_peer_keys(tool, path, rate, receiver, len(keys))]


def evaluate(micloop, directory, receiver, wide_directory=None, workers=2, place_peers=False):
    files = build(directory, wide_directory)
    tasks = []
    for kind, which, source, rate, variant, path, pieces, sex in files:
        minutes = len(real_corpus.read_wav(path)) / rate / 60 if rate == 8000 and variant == "full" else None
        base = dict(kind=kind, half=which, sex=sex, source=source, rate=rate, variant=variant,
                    file=os.path.basename(path), minutes=minutes)
        for tool, plans in jobs_for(kind, rate, variant):
            tasks.append((base, pieces, tool, plans, path))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda t: run_job(micloop, receiver, t[2], t[3], t[0]["rate"], t[4], place_peers),
                                tasks))
    runs, false_events = [], []
    for (base, pieces, tool, plans, path), found in zip(tasks, results):
        counts = {}
        for what, plan, decoded, t in found:
            counts.setdefault(what, {}).setdefault(plan, 0)
            counts[what][plan] += 1
            if what != "lone tones":
                false_events.append(dict(base, tool=tool, plans=plans, what=what, plan=plan, symbol=decoded, time=t,
                                         piece="?" if t is None else piece_at(pieces, t)))
        runs.append(dict(base, tool=tool, plans=plans, counts=counts))
    return runs, false_events


def count(runs, tool, plans, what, **where):
    total = 0
    for r in runs:
        if r["tool"] == tool and r["plans"] == plans and all(r[k] == v for k, v in where.items()):
            total += sum(r["counts"].get(what, {}).values())
    return total


def render(runs, false_events):
    lines = []
    speech = {(which, sex): sum(r["minutes"] or 0 for r in runs if r["kind"] == "speech" and r["half"] == which
                                and r["sex"] == sex and r["tool"] == "micloop" and r["plans"] == "dtmf"
                                and r["rate"] == 8000)
              for which in real_corpus.GROUPS for sex in real_corpus.SEXES}
    music = {(which, None): sum(r["minutes"] or 0 for r in runs if r["kind"] == "music" and r["half"] == which
                                and r["tool"] == "micloop" and r["plans"] == "dtmf" and r["rate"] == 8000)
             for which in real_corpus.GROUPS}
    lines += ["| audio | half or group | voices | minutes | rate | micloop DTMF keys (dtmf plan) | micloop DTMF keys (all plans) "
              "| micloop calls, pages, signals | micloop tones of other plans | micloop CTCSS (radio-filtered) "
              "| spandsp keys | multimon-ng keys |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kind, minutes in (("speech", speech), ("music", music)):
        for which, sex in minutes:
            if not minutes[(which, sex)]:
                continue
            for rate in sorted({r["rate"] for r in runs}):
                w = dict(kind=kind, half=which, sex=sex, rate=rate)
                wide = rate == WIDE_RATE
                spandsp = count(runs, "spandsp", "dtmf", "keys", **w) if rate == 8000 else "-"
                multimon = "-" if wide else count(runs, "multimon-ng", "dtmf", "keys", **w)
                ctcss = "-" if wide else count(runs, "micloop", "ctcss", "subtones", **w)
                plan_keys = "-" if wide else count(runs, "micloop", "dtmf", "keys", **w)
                lines.append(f"| {kind} | {which} | {VOICES_OF.get(sex, '-')} | {minutes[(which, sex)]:.1f} | {rate // 1000} kHz"
                             f"{' (+handshake)' if wide else ''} | {plan_keys} | "
                             f"{count(runs, 'micloop', 'all', 'keys', **w)} | {count(runs, 'micloop', 'all', 'calls', **w)} | "
                             f"{count(runs, 'micloop', 'all', 'lone tones', **w)} | {ctcss} | {spandsp} | {multimon} |")
    lines += ["", "False DTMF keys on speech by group and sex (8 and 16 kHz together; spandsp at 8 kHz):", "",
              "| group | voices | minutes | micloop (dtmf plan) | micloop (all plans) | spandsp | multimon-ng |",
              "|---|---|---|---|---|---|---|"]
    for (which, sex), m in speech.items():
        if m:
            w = dict(kind="speech", half=which, sex=sex)
            lines.append(f"| {which} | {VOICES_OF[sex]} | {m:.1f} | {count(runs, 'micloop', 'dtmf', 'keys', **w)} | "
                         f"{count(runs, 'micloop', 'all', 'keys', **w)} | {count(runs, 'spandsp', 'dtmf', 'keys', **w)} | "
                         f"{count(runs, 'multimon-ng', 'dtmf', 'keys', **w)} |")
    info = {which: count(runs, "micloop", "ctcss full band", "subtones", kind="music", half=which)
            for which in real_corpus.GROUPS}
    lines += ["", "Informational: CTCSS on the music as it is (full band, bass on the sub-tones): "
              + ", ".join(f"{which} {n} sub-tones" for which, n in info.items())]
    per_plan = {}
    for r in runs:
        if r["tool"] != "micloop":
            continue
        for what, plans in r["counts"].items():
            for plan, n in plans.items():
                key = (plan, what, r["kind"], r["plans"] == "ctcss full band")
                per_plan[key] = per_plan.get(key, 0) + n
    lines += ["", "micloop, per plan (both halves, every rate):", ""]
    if per_plan:
        lines += ["| plan | what | audio | count |", "|---|---|---|---|"]
        for (plan, what, kind, full_band), n in sorted(per_plan.items()):
            lines.append(f"| {plan} | {what} | {kind}{' (full band, informational)' if full_band else ''} | {n} |")
    else:
        lines.append("nothing decoded")
    listed = [e for e in false_events if not (e["plans"] == "ctcss full band")]
    lines += ["", f"False decodes ({len(listed)}; CTCSS on full-band music left out):", ""]
    if listed:
        lines += ["| tool | plans | file | time s | plan | decoded | prompt or music there |", "|---|---|---|---|---|---|---|"]
        for e in listed:
            when = "?" if e["time"] is None else f"{e['time']:.2f}"
            lines.append(f"| {e['tool']} | {e['plans']} | {e['file']} | {when} | {e['plan']} | {e['symbol']} | "
                         f"{e['piece']} |")
    else:
        lines.append("none")
    return lines, speech


VOICES_OF = {"man": "men", "woman": "women"}


def corpus_music_calls(runs):
    """micloop's calls, pages and signals on the clips of `music_corpus.py` (an open target)."""
    return sum(count(runs, "micloop", "all", "calls", source=f"{kind}-{name}")
               for _, kind, name, _, _ in music_corpus.CLIPS)


def independent_music_decodes(runs):
    """micloop's false DTMF keys (both plan sets), calls and CTCSS sub-tones (radio-filtered) on the independent
    music (an open target)."""
    where = dict(kind="music", half=real_corpus.INDEPENDENT)
    keys = count(runs, "micloop", "dtmf", "keys", **where) + count(runs, "micloop", "all", "keys", **where)
    return keys, count(runs, "micloop", "all", "calls", **where), count(runs, "micloop", "ctcss", "subtones", **where)


def failures(runs, speech_minutes):
    problems = []
    independent_keys, independent_calls, independent_subtones = independent_music_decodes(runs)
    keys = count(runs, "micloop", "dtmf", "keys") + count(runs, "micloop", "all", "keys") - independent_keys
    music_calls = corpus_music_calls(runs)
    calls = count(runs, "micloop", "all", "calls") - music_calls - independent_calls
    for found, floor, what in (
            (music_calls, FLOOR_MUSIC_CORPUS_CALLS, "false calls, pages or signals on the real-music clips"),
            (independent_keys, FLOOR_INDEPENDENT_MUSIC_KEYS, "false DTMF keys on the independent music"),
            (independent_calls, FLOOR_INDEPENDENT_MUSIC_CALLS,
             "false calls, pages or signals on the independent music"),
            (independent_subtones, FLOOR_INDEPENDENT_MUSIC_SUBTONES,
             "false CTCSS sub-tones on the radio-filtered independent music")):
        if found > floor:
            problems.append(f"{found} {what} > {floor} (today's floor)")
    subtones = count(runs, "micloop", "ctcss", "subtones") - independent_subtones
    if keys > TARGET_FALSE_KEYS:
        problems.append(f"{keys} false DTMF keys > {TARGET_FALSE_KEYS}")
    if calls > TARGET_FALSE_CALLS:
        problems.append(f"{calls} false calls, pages or signals > {TARGET_FALSE_CALLS}")
    if subtones > TARGET_FALSE_SUBTONES:
        problems.append(f"{subtones} false CTCSS sub-tones on radio-filtered audio > {TARGET_FALSE_SUBTONES}")
    minutes = sum(speech_minutes.values())
    if minutes < TARGET_SPEECH_MINUTES:
        problems.append(f"only {minutes:.0f} minutes of speech < {TARGET_SPEECH_MINUTES}")
    for sex, voices in VOICES_OF.items():
        each = sum(m for (_, of), m in speech_minutes.items() if of == sex)
        if each < TARGET_MINUTES_EACH:
            problems.append(f"only {each:.0f} minutes of {voices}'s speech < {TARGET_MINUTES_EACH}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--full", action="store_true", help="also every plan and Handshake at 48 kHz")
    parser.add_argument("--place-peers", action="store_true",
                        help="place each of the peers' false keys in time (by bisection on cut files; slow)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    parser.add_argument("--check", action="store_true", help="fail (exit 1) below the targets")
    parser.add_argument("--report-only", action="store_true", help="with --check: print the verdict, exit 0")
    args = parser.parse_args()
    real_corpus.require_packages()
    started = time.monotonic()
    directory = os.path.join(real_corpus.CACHE, f"talkoff-v{CORPUS_VERSION}")
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=real_corpus.CACHE) as wide:
        runs, false_events = evaluate(args.micloop, directory, real_corpus.dtmf_receiver(),
                                      wide if args.full else None, args.jobs, args.place_peers)
    lines, speech_minutes = render(runs, false_events)
    problems = failures(runs, speech_minutes)
    elapsed = time.monotonic() - started
    if args.json:
        speech_minutes = {f"{which} {VOICES_OF[sex]}": m for (which, sex), m in speech_minutes.items()}
        print(json.dumps(dict(runs=runs, false_decodes=false_events, speech_minutes=speech_minutes,
                              failures=problems, seconds=round(elapsed, 1)), indent=1))
    else:
        print("\n".join(lines))
        keys, calls, subtones = independent_music_decodes(runs)
        print(f"\nOpen target: {keys} false DTMF keys (floor {FLOOR_INDEPENDENT_MUSIC_KEYS}), {calls} calls, pages "
              f"or signals (floor {FLOOR_INDEPENDENT_MUSIC_CALLS}) and {subtones} CTCSS sub-tones (floor "
              f"{FLOOR_INDEPENDENT_MUSIC_SUBTONES}) on the independent music; targets {TARGET_FALSE_KEYS}, "
              f"{TARGET_FALSE_CALLS} and {TARGET_FALSE_SUBTONES}")
        print(f"\nOpen target: {corpus_music_calls(runs)} false calls, pages or signals on the real-music clips "
              f"(floor {FLOOR_MUSIC_CORPUS_CALLS}, target {TARGET_FALSE_CALLS}); every DTMF key on them counts against "
              f"the target of {TARGET_FALSE_KEYS}")
        print(f"\n{elapsed:.0f} s")
    if args.check:
        for problem in problems:
            print("real talk-off evaluation: below target:", problem, file=sys.stderr)
        if problems and not args.report_only:
            print("real talk-off evaluation FAILED", file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
        print("real talk-off evaluation " + ("passed" if not problems else
                                             f"below {len(problems)} targets (report only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
