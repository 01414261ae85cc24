#!/usr/bin/env python3
"""DTMF keys under recorded speech and music through a phone line: micloop beside multimon-ng and spandsp.

For each half of the corpus (`real_corpus.py`) and each background, one
file of 400 keys (all 16) in calls of 4-10 keys, timed as ITU-T Q.23 allows
a keypad: every tone 50-100 ms, every pause 50-100 ms, the two tones off
by up to 0.5 %; the low tone at -20 to -10 dBFS per call (a full-scale sine
is 0 dBFS), the high tone 2 dB either side of it. Under the keys, all
through the file:

* speech: a caller talking (the prompts of the half, every speaker, with
  0.2-1 s pauses), its active-speech RMS 10-20 dB under the keys' RMS; a
  third file has the two independent speakers (`real_corpus.INDEPENDENT`,
  never tuned on) talking;
* men's and women's speech: the same, with the men's and the women's voices
  of the group (`real_corpus.VOICES`: the Russian man tunes; the Czech man
  and woman check; codec2's sample speakers are independent), one file per
  sex and group that has such voices (the prompts above are all women's);
* music: music on hold (the macroform tracks of the half), its RMS 10-20 dB
  under the keys';

the relation drawn again for every call, 0.5-2 s of background alone
between calls. Built at 8 kHz, then through a telephone channel
(300-3400 Hz, G.711 mu-law, by sox: `channels.telephone`).

Decoded by micloop (`tones --plan dtmf --input F --json`, default
settings), spandsp's `dtmf_rx` (Bench/dtmf_rx.c) and `multimon-ng -a DTMF`,
scored by edit distance against the keys sent (`Bench/dtmf_corpus.score`):
right, wrong, missed, extra. micloop's misses and extras are listed with
their times (a key counts as found when micloop reports it while it sounds,
30 ms either side).

`--loud` puts every background 4-10 dB under the keys instead (a caller
talking over the keys), in files of its own (keys-v*-loud-*): the tune
group's files there are what the rules for keys dented by a voice were
placed on; the rest check them. Its floor, and its target with `--check`,
is `LOUD_FLOOR_RIGHT`.

`--guard` fails (exit 1) on a regression from today's floor (`FLOOR_RIGHT`
keys right in every file, no extra key), whatever `--report-only` says.
`--check` fails (exit 1) unless micloop gets at least `TARGET_RIGHT` keys of
every file right with no extra key; `--report-only` prints the verdict
without failing. Files are cached in the corpus cache (real_corpus.CACHE) as keys-*.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Bench"))
import channels  # noqa: E402
import real_corpus  # noqa: E402
import signalling  # noqa: E402
from dtmf_corpus import score as score_keys  # noqa: E402

# Targets (micloop), per file of KEYS keys.
TARGET_RIGHT = 399
TARGET_EXTRA = 0
# With --guard, the fewest keys right micloop gets today in any file (under a man or a woman of the
# check and independent groups talking, 399-400): no file may fall below it, nor gain an extra key.
FLOOR_RIGHT = 399
# With --loud --guard, the fewest keys right in any file with the background 4-10 dB under the keys.
LOUD_FLOOR_RIGHT = 383
LOUD_BELOW_KEYS_DB = (4.0, 10.0)

KEYS = 400
RATE = 8000
KEYS_PER_CALL = (4, 10)
TONE = (0.050, 0.100)
PAUSE = (0.050, 0.100)
DRIFT = 0.005
LOW_LEVEL_DBFS = (-20.0, -10.0)
TWIST_DB = (-2.0, 2.0)
BELOW_KEYS_DB = (10.0, 20.0)
BETWEEN_CALLS = (0.5, 2.0)
SPEECH_PAUSE = (0.2, 1.0)
MATCH_SLACK = 0.030
# "speech": the prompt speakers (women); "men", "women": the voices of real_corpus.VOICES.
BACKGROUNDS = ("speech", "music", "men", "women")
SEX_OF = {"men": "man", "women": "woman"}
LABELS = {"speech": "speech (prompts, women)", "music": "music", "men": "men's speech", "women": "women's speech"}
CORPUS_VERSION = 1


def active_rms(samples, rate):
    """RMS over the 10 ms frames within 40 dB of the loudest."""
    n = rate // 100
    frames = len(samples) // n
    power = np.mean(samples[: frames * n].reshape(frames, n) ** 2, axis=1)
    return np.sqrt(np.mean(power[power > power.max() * 1e-4]))


def background(kind, which, rng, length):
    """`length` samples of the background at 8 kHz, unit active RMS."""
    if kind == "music":
        music = np.concatenate([real_corpus.music(track, which, rate=RATE) for track in real_corpus.MUSIC])
        out = np.tile(music, length // len(music) + 2)
        offset = rng.integers(len(music))
        out = out[offset : offset + length]
    else:
        pool = ([x for voice in real_corpus.voices(group=which, sex=SEX_OF[kind]) for _, x in real_corpus.voice_phrases(voice)]
                if kind in SEX_OF else
                [x for speaker in real_corpus.INDEPENDENT_SPEAKERS for _, x in real_corpus.independent_phrases(speaker)]
                if which == real_corpus.INDEPENDENT else
                [x for language in real_corpus.SPEAKERS for _, x in real_corpus.phrases(language, which)])
        pieces, total = [], 0
        while total < length:
            phrase = real_corpus.resample(pool[rng.integers(len(pool))], real_corpus.RATE, RATE)
            pause = np.zeros(int(rng.uniform(*SPEECH_PAUSE) * RATE))
            pieces += [phrase, pause]
            total += len(phrase) + len(pause)
        out = np.concatenate(pieces)[:length]
    return out / active_rms(out, RATE)


def keys_file(kind, which, seed):
    """(audio at 8 kHz after the phone channel, keys sent, [(key, start s, end s, low tone dBFS,
    twist dB, background dB under the keys)])."""
    rng = np.random.default_rng([seed, CORPUS_VERSION, BACKGROUNDS.index(kind), real_corpus.GROUPS.index(which)])
    pieces, sent, gains = [np.zeros(RATE)], [], []
    position = RATE
    while len(sent) < KEYS:
        count = min(int(rng.integers(KEYS_PER_CALL[0], KEYS_PER_CALL[1] + 1)), KEYS - len(sent))
        low_dbfs, twist, below = rng.uniform(*LOW_LEVEL_DBFS), rng.uniform(*TWIST_DB), rng.uniform(*BELOW_KEYS_DB)
        low_amplitude = 10 ** (low_dbfs / 20)
        high_amplitude = low_amplitude * 10 ** (twist / 20)
        keys_rms = np.sqrt((low_amplitude**2 + high_amplitude**2) / 2)
        gain = keys_rms * 10 ** (-below / 20)
        call_start = position
        for _ in range(count):
            key = signalling.DTMF_KEYS[rng.integers(16)]
            index = signalling.DTMF_KEYS.index(key)
            length = rng.uniform(*TONE)
            tone = (signalling.sine(signalling.DTMF_LOW[index // 4] * (1 + rng.uniform(-DRIFT, DRIFT)), length,
                                    RATE, low_amplitude, rng)
                    + signalling.sine(signalling.DTMF_HIGH[index % 4] * (1 + rng.uniform(-DRIFT, DRIFT)), length,
                                      RATE, high_amplitude, rng))
            pause = np.zeros(int(rng.uniform(*PAUSE) * RATE))
            sent.append((key, position / RATE, (position + len(tone)) / RATE, round(low_dbfs, 1), round(twist, 1),
                         round(below, 1)))
            pieces += [tone, pause]
            position += len(tone) + len(pause)
        between = np.zeros(int(rng.uniform(*BETWEEN_CALLS) * RATE))
        pieces.append(between)
        position += len(between)
        # The background's level for this call holds from before the call to its end.
        gains.append((call_start, position, gain))
    keys = np.concatenate(pieces)
    level = np.zeros(len(keys))
    previous = 0
    for start, end, gain in gains:
        level[previous:end] = gain
        previous = end
    # 50 ms ramps where the level changes.
    ramp = int(0.05 * RATE)
    level = np.convolve(np.pad(level, (ramp, ramp), mode="edge"), np.ones(ramp) / ramp, mode="same")[ramp:-ramp]
    mix = keys + background(kind, which, rng, len(keys)) * level
    return channels.telephone(mix, "g711"), "".join(k[0] for k in sent), sent


def micloop_keys(micloop, path):
    out = subprocess.run([micloop, "tones", "--plan", "dtmf", "--input", path, "--json"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"micloop tones failed on {path}: {out.stderr.strip()}")
    return [(e["symbol"], e["time"]) for e in map(json.loads, out.stdout.splitlines())
            if e["event"] == "tone" and e.get("plan") == "dtmf"]


def peer_keys(peer, path, receiver):
    command = [receiver, path] if peer == "spandsp" else ["multimon-ng", "-q", "-t", "wav", "-a", "DTMF", path]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return "".join(line[6:].strip() for line in out.splitlines() if line.startswith("DTMF: "))


def timed_mistakes(sent, found):
    """micloop's misses and extras by time: (missed [the key as sent], extra [(key, time)])."""
    used = set()
    missed = []
    for sending in sent:
        key, start, end = sending[:3]
        match = next((i for i, (symbol, t) in enumerate(found) if i not in used and symbol == key
                      and start - MATCH_SLACK <= t <= end + MATCH_SLACK), None)
        if match is None:
            missed.append(sending)
        else:
            used.add(match)
    extra = [(symbol, t) for i, (symbol, t) in enumerate(found) if i not in used]
    return missed, extra


def evaluate(micloop, seed, receiver, loud=False):
    directory = os.path.join(real_corpus.CACHE, f"keys-v{CORPUS_VERSION}-{'loud-' if loud else ''}seed{seed}")
    rows, mistakes = [], []
    for which in real_corpus.GROUPS:
        # The independent speakers talk over keys; the music is all in the halves.
        kinds = [kind for kind in BACKGROUNDS
                 if (kind == "speech" or (kind == "music" and which != real_corpus.INDEPENDENT)
                     or (kind in SEX_OF and real_corpus.voices(group=which, sex=SEX_OF[kind])))]
        for kind in kinds:
            path = os.path.join(directory, f"{kind}-{which}.wav")
            meta_path = path + ".json"
            if os.path.exists(path) and os.path.exists(meta_path):
                with open(meta_path) as f:
                    sent = [tuple(k) for k in json.load(f)["sent"]]
            else:
                audio, _, sent = keys_file(kind, which, seed)
                real_corpus.write_wav(path, audio, RATE)
                with open(meta_path, "w") as f:
                    json.dump({"sent": sent}, f)
            truth = "".join(k[0] for k in sent)
            found = micloop_keys(micloop, path)
            decoded = {"micloop": "".join(k for k, _ in found),
                       "multimon-ng": peer_keys("multimon-ng", path, receiver),
                       "spandsp": peer_keys("spandsp", path, receiver)}
            for tool, keys in decoded.items():
                right, wrong, missed, extra = score_keys(truth, keys)
                rows.append(dict(half=which, background=kind, tool=tool, sent=len(truth), right=right, wrong=wrong,
                                 missed=missed, extra=extra))
            missed, extra = timed_mistakes(sent, found)
            mistakes += [dict(half=which, background=kind, file=os.path.basename(path), what="missed", key=k[0],
                              time=k[1], detail=f"{(k[2] - k[1]) * 1000:.0f} ms, low tone {k[3]} dBFS, twist {k[4]} dB, "
                                                f"{kind} {k[5]} dB under the keys")
                         for k in missed]
            mistakes += [dict(half=which, background=kind, file=os.path.basename(path), what="extra", key=k, time=t,
                              detail="")
                         for k, t in extra]
    return rows, mistakes


def render(rows, mistakes):
    lines = ["| half or group | under the keys | decoder | keys right | wrong | missed | extra |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['half']} | {LABELS[r['background']]} | {r['tool']} | {r['right']}/{r['sent']} | {r['wrong']} | "
                     f"{r['missed']} | {r['extra']} |")
    lines += ["", f"micloop's keys missed and extra, by time ({len(mistakes)}):", ""]
    if mistakes:
        lines += ["| file | what | key | time s | the key as sent |", "|---|---|---|---|---|"]
        lines += [f"| {m['file']} | {m['what']} | {m['key']} | {m['time']:.2f} | {m['detail']} |" for m in mistakes]
    else:
        lines.append("none")
    return lines


def failures(rows, target=TARGET_RIGHT):
    problems = []
    for r in rows:
        if r["tool"] != "micloop":
            continue
        if r["right"] < target:
            problems.append(f"{real_corpus.group_name(r['half'])}, under {LABELS[r['background']]}: {r['right']}/{r['sent']} keys right "
                            f"< {target}")
        if r["extra"] > TARGET_EXTRA:
            problems.append(f"{real_corpus.group_name(r['half'])}, under {LABELS[r['background']]}: {r['extra']} extra keys > {TARGET_EXTRA}")
    return problems


def regressions(rows, floor=FLOOR_RIGHT):
    """What --guard fails on: a file below today's floor, or any extra key."""
    problems = []
    for r in rows:
        if r["tool"] != "micloop":
            continue
        where = f"{real_corpus.group_name(r['half'])}, under {LABELS[r['background']]}"
        if r["right"] < floor:
            problems.append(f"{where}: {r['right']}/{r['sent']} keys right < {floor} (today's floor)")
        if r["extra"] > TARGET_EXTRA:
            problems.append(f"{where}: {r['extra']} extra keys > {TARGET_EXTRA}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--full", action="store_true", help="the same as the default: every file")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    parser.add_argument("--check", action="store_true", help="fail (exit 1) below the targets")
    parser.add_argument("--report-only", action="store_true", help="with --check: print the verdict, exit 0")
    parser.add_argument("--guard", action="store_true",
                        help="fail (exit 1) on a regression from today's floors, whatever --report-only says")
    parser.add_argument("--loud", action="store_true",
                        help=f"the backgrounds {LOUD_BELOW_KEYS_DB[0]:g}-{LOUD_BELOW_KEYS_DB[1]:g} dB under the keys")
    args = parser.parse_args()
    real_corpus.require_packages()
    global BELOW_KEYS_DB
    if args.loud:
        BELOW_KEYS_DB = LOUD_BELOW_KEYS_DB
    started = time.monotonic()
    rows, mistakes = evaluate(args.micloop, args.seed, real_corpus.dtmf_receiver(), loud=args.loud)
    problems = failures(rows, LOUD_FLOOR_RIGHT if args.loud else TARGET_RIGHT)
    elapsed = time.monotonic() - started
    if args.json:
        print(json.dumps(dict(rows=rows, micloop_mistakes=mistakes, failures=problems, seconds=round(elapsed, 1)),
                         indent=1))
    else:
        print("\n".join(render(rows, mistakes)))
        print(f"\n{elapsed:.0f} s")
    if args.guard:
        regressed = regressions(rows, LOUD_FLOOR_RIGHT if args.loud else FLOOR_RIGHT)
        for problem in regressed:
            print("real keys evaluation: regression:", problem, file=sys.stderr)
        if regressed:
            print("real keys evaluation FAILED (regression)", file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
    if args.check:
        for problem in problems:
            print("real keys evaluation: below target:", problem, file=sys.stderr)
        if problems and not args.report_only:
            print("real keys evaluation FAILED", file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
        print("real keys evaluation " + ("passed" if not problems else f"below {len(problems)} targets (report only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
