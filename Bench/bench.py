#!/usr/bin/env python3
"""Side-by-side benchmarks of micloop against the usual tools, in one run.

Only ratios from the same run are meaningful: the machines are shared and
absolute times drift. Writes a Markdown report (Docs/BENCHMARKS.md).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


def median_seconds(commands, runs, warmup=2):
    """Median wall time of each whole-process command (stdout discarded).

    The commands take turns, run after run, so a slow spell on a shared
    machine hits all of them alike and the ratios stay fair.
    """
    def once(command):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start

    for _ in range(warmup):
        for command in commands:
            once(command)
    times = [[] for _ in commands]
    for _ in range(runs):
        for index, command in enumerate(commands):
            times[index].append(once(command))
    return [statistics.median(t) for t in times]


def peak_rss_kib(command):
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True)
    return int(out.stderr.strip().splitlines()[-1])


def meter_section(micloop, work, runs):
    long_file = os.path.join(work, "ten-minutes.wav")
    short_file = os.path.join(work, "one-minute.wav")
    sh(["sox", "-n", "-r", "48000", "-b", "16", long_file, "synth", "600", "pinknoise", "vol", "0.3",
        "synth", "sine", "amod", "0.5"])
    sh(["sox", long_file, short_file, "trim", "0", "60"])
    ours = [micloop, "meter", "--input", long_file, "--json"]
    sox = ["sox", long_file, "-n", "stats"]
    t_ours, t_sox = median_seconds([ours, sox], runs)
    rss_long = peak_rss_kib(ours)
    rss_short = peak_rss_kib([micloop, "meter", "--input", short_file, "--json"])
    # The two must agree on the numbers, too.
    summary = json.loads(sh(ours).stdout.strip().splitlines()[-1])
    stats = sh(sox).stderr
    sox_peak = float([l for l in stats.splitlines() if l.startswith("Pk lev dB")][0].split()[3])
    sox_rms = float([l for l in stats.splitlines() if l.startswith("RMS lev dB")][0].split()[3])
    lines = [
        "## Levels: `micloop meter` vs `sox stats`",
        "",
        "10 minutes of 48 kHz 16-bit mono WAV (modulated pink noise), whole process, "
        f"median of {runs} alternating runs after 2 warm-ups.",
        "",
        "| command | median s | ratio |",
        "|---|---|---|",
        f"| `micloop meter --input F --json` | {t_ours:.3f} | 1.00 |",
        f"| `sox F -n stats` | {t_sox:.3f} | {t_sox / t_ours:.2f} |",
        "",
        f"**micloop is {t_sox / t_ours:.2f}× faster than sox** on the same file in the same run "
        "(and also detects talk, which sox does not).",
        "",
        f"Agreement: peak {summary['peak_dbfs']:.2f} dB vs sox {sox_peak:.2f} dB; "
        f"RMS {summary['rms_dbfs']:.2f} dB vs sox {sox_rms:.2f} dB.",
        "",
        f"Memory stays flat with length (the file is streamed): peak RSS {rss_short / 1024:.1f} MiB "
        f"for 1 minute, {rss_long / 1024:.1f} MiB for 10 minutes.",
        "",
    ]
    return lines


def talk_section(micloop):
    out = sh([sys.executable, os.path.join(HERE, "..", "Scripts", "talk_eval.py"), "--micloop", micloop])
    return [
        "## Talk detection on speech in noise",
        "",
        "`Scripts/talk_eval.py` (also run by `make test`, which fails below the targets): espeak-ng speech "
        "(6 voices, 4 speeds, sentences of 1-17 words, pauses of 0.5-3 s), mixed with white, pink and brown "
        "noise and 50 Hz hum (with 150 and 250 Hz harmonics) at 30/20/10/5 dB SNR (active-speech RMS to noise "
        "RMS), speech peaks at -12 and -30 dBFS, default settings. F1 of \"talking\" on 10 ms frames, ignoring "
        "100 ms around each true boundary; segments per true utterance (flapping shows as > 1); onset delay = "
        "reported talk_start minus true onset.",
        "",
    ] + out.stdout.strip().splitlines() + [""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micloop", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    micloop = os.path.abspath(args.micloop)
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (Bench/bench.py); every comparison runs both tools on the same input in the "
        "same run. Absolute times drift on shared machines; the ratios are what to quote.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}. "
        f"Run on {time.strftime('%Y-%m-%d')}.",
        "",
    ]
    with tempfile.TemporaryDirectory() as work:
        lines += meter_section(micloop, work, args.runs)
        lines += talk_section(micloop)
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
