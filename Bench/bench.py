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
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "Scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "Scripts", "eval"))
import native  # noqa: E402
import servers  # noqa: E402
import station_stress  # noqa: E402
from virtual_devices import VirtualDevices  # noqa: E402


def sh(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs)


def median_seconds(commands, runs, warmup=2):
    """Median wall and CPU (user + system) seconds of each whole-process command.

    The commands take turns, run after run, so a slow spell on a shared
    machine hits all of them alike and the ratios stay fair.
    """
    def once(command):
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{command} failed")
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime

    for _ in range(warmup):
        for command in commands:
            once(command)
    walls = [[] for _ in commands]
    cpus = [[] for _ in commands]
    for _ in range(runs):
        for index, command in enumerate(commands):
            wall, cpu = once(command)
            walls[index].append(wall)
            cpus[index].append(cpu)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def on_one_core(command):
    """`command` pinned to the first core: what it costs where no second thread can help."""
    return ["taskset", "-c", "0"] + command


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
    stereo_file = os.path.join(work, "ten-minutes-stereo.wav")
    sh(["sox", "-n", "-r", "48000", "-b", "16", "-c", "2", stereo_file, "synth", "600", "pinknoise", "vol", "0.3",
        "synth", "sine", "amod", "0.5"])
    ours = [micloop, "meter", "--input", long_file, "--json"]
    sox = ["sox", long_file, "-n", "stats"]
    cat = ["cat", long_file]
    ours_stereo = [micloop, "meter", "--input", stereo_file, "--json"]
    sox_stereo = ["sox", stereo_file, "-n", "stats"]
    cat_stereo = ["cat", stereo_file]
    (t_ours, c_ours), (t_sox, c_sox), (t_cat, c_cat), (t_ours2, c_ours2), (t_sox2, c_sox2), (t_cat2, c_cat2) = \
        median_seconds([ours, sox, cat, ours_stereo, sox_stereo, cat_stereo], runs)
    (t_one, c_one), (t_sox_one, c_sox_one), (t_one2, c_one2), (t_sox_one2, c_sox_one2) = median_seconds(
        [on_one_core(ours), on_one_core(sox), on_one_core(ours_stereo), on_one_core(sox_stereo)], runs)
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
        "10 minutes of 48 kHz 16-bit WAV (modulated pink noise), mono and stereo, whole process, "
        f"median of {runs} alternating runs after 2 warm-ups; `cat F > /dev/null` (reading the file and nothing "
        "else) is the floor. Ratios are theirs / ours: above 1, micloop is faster.",
        "",
        "| command | median wall s | median CPU s | wall ratio | CPU ratio |",
        "|---|---|---|---|---|",
        f"| `micloop meter --input F --json` (mono) | {t_ours:.3f} | {c_ours:.3f} | 1.00 | 1.00 |",
        f"| `sox F -n stats` (mono) | {t_sox:.3f} | {c_sox:.3f} | {t_sox / t_ours:.2f} | {c_sox / c_ours:.2f} |",
        f"| `cat F` (mono) | {t_cat:.3f} | {c_cat:.3f} | {t_cat / t_ours:.2f} | {c_cat / c_ours:.2f} |",
        f"| `micloop meter --input F --json` (stereo) | {t_ours2:.3f} | {c_ours2:.3f} | 1.00 | 1.00 |",
        f"| `sox F -n stats` (stereo) | {t_sox2:.3f} | {c_sox2:.3f} | {t_sox2 / t_ours2:.2f} | "
        f"{c_sox2 / c_ours2:.2f} |",
        f"| `cat F` (stereo) | {t_cat2:.3f} | {c_cat2:.3f} | {t_cat2 / t_ours2:.2f} | {c_cat2 / c_ours2:.2f} |",
        "",
        "Pinned to one core (`taskset -c 0`), where micloop's reader thread cannot run beside its meter:",
        "",
        "| command | median wall s | median CPU s | wall ratio | CPU ratio |",
        "|---|---|---|---|---|",
        f"| `micloop meter --input F --json` (mono) | {t_one:.3f} | {c_one:.3f} | 1.00 | 1.00 |",
        f"| `sox F -n stats` (mono) | {t_sox_one:.3f} | {c_sox_one:.3f} | {t_sox_one / t_one:.2f} | "
        f"{c_sox_one / c_one:.2f} |",
        f"| `micloop meter --input F --json` (stereo) | {t_one2:.3f} | {c_one2:.3f} | 1.00 | 1.00 |",
        f"| `sox F -n stats` (stereo) | {t_sox_one2:.3f} | {c_sox_one2:.3f} | {t_sox_one2 / t_one2:.2f} | "
        f"{c_sox_one2 / c_one2:.2f} |",
        "",
        f"**micloop is {t_sox / t_ours:.2f}× faster than sox** on mono (wall clock; {c_sox / c_ours:.2f}× in CPU "
        f"time) and {t_sox2 / t_ours2:.2f}× on stereo ({c_sox2 / c_ours2:.2f}× in CPU time), on the same files in "
        f"the same run, and also detects talk, which sox does not; it takes {t_ours / t_cat:.1f}× (mono) and "
        f"{t_ours2 / t_cat2:.1f}× (stereo) the wall time of `cat`.",
        "",
        f"Agreement: peak {summary['peak_dbfs']:.2f} dB vs sox {sox_peak:.2f} dB; "
        f"RMS {summary['rms_dbfs']:.2f} dB vs sox {sox_rms:.2f} dB.",
        "",
        f"Memory stays flat with length (the file is streamed): peak RSS {rss_short / 1024:.1f} MiB "
        f"for 1 minute, {rss_long / 1024:.1f} MiB for 10 minutes.",
        "",
    ]
    return lines


def loudness_section(micloop, work, runs):
    path = os.path.join(work, "ten-minutes-stereo.wav")
    sh(["sox", "-n", "-r", "48000", "-b", "16", "-c", "2", path, "synth", "600", "pinknoise", "vol", "0.3",
        "synth", "sine", "amod", "0.5"])
    scanner = os.path.join(work, "ebur128_scan")
    sh(["sh", "-c", f"cc -O2 -o {scanner} {os.path.join(HERE, 'ebur128_scan.c')} "
        "$(pkg-config --cflags --libs libebur128 sndfile) -lm"])
    ours = [micloop, "meter", "--loudness", "--input", path, "--json"]
    ffmpeg = ["ffmpeg", "-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"]
    libebur128 = [scanner, path]
    (t_ours, c_ours), (t_ff, c_ff), (t_lib, c_lib) = median_seconds([ours, ffmpeg, libebur128], runs)
    summary = json.loads(sh(ours).stdout.strip().splitlines()[-1])
    reference = json.loads(sh(libebur128).stdout)
    return [
        "## Loudness: `micloop meter --loudness` vs ffmpeg's ebur128 and libebur128",
        "",
        "10 minutes of 48 kHz 16-bit stereo WAV (modulated pink noise): integrated loudness, loudness range "
        f"and true peak, whole process, median of {runs} alternating runs after 2 warm-ups. "
        "libebur128 runs as `Bench/ebur128_scan.c` (libsndfile reads, all three measurements on).",
        "",
        "| command | median wall s | median CPU s | wall ratio | CPU ratio |",
        "|---|---|---|---|---|",
        f"| `micloop meter --loudness --input F --json` | {t_ours:.3f} | {c_ours:.3f} | 1.00 | 1.00 |",
        f"| `ffmpeg -i F -af ebur128=peak=true -f null -` | {t_ff:.3f} | {c_ff:.3f} | {t_ff / t_ours:.2f} | {c_ff / c_ours:.2f} |",
        f"| libebur128 (`ebur128_scan F`) | {t_lib:.3f} | {c_lib:.3f} | {t_lib / t_ours:.2f} | {c_lib / c_ours:.2f} |",
        "",
        f"**micloop is {t_ff / t_ours:.2f}× faster than ffmpeg and {t_lib / t_ours:.2f}× faster than libebur128** "
        "(wall clock), and meters peak, RMS and talk in the same pass.",
        "",
        f"Agreement with libebur128: integrated {summary['integrated_lufs']:.2f} vs {reference['integrated_lufs']:.2f} LUFS, "
        f"range {summary['loudness_range_lu']:.2f} vs {reference['loudness_range_lu']:.2f} LU, "
        f"true peak {summary['true_peak_dbtp']:.2f} vs {reference['true_peak_dbtp']:.2f} dBTP.",
        "",
    ]


def run_with_usage(command, env, measured_from=0):
    """Runs a command; returns (CPU seconds, peak RSS KiB, stdout, stderr, exit status).

    CPU covers the whole process tree; the peak RSS is that of the program
    starting at `command[measured_from]` (after a wrapper such as `timeout`).
    """
    # Peak RSS through /usr/bin/time: a child forked straight from this
    # (large) Python process inherits its high-water mark across exec.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        wrapped = command[:measured_from] + ["/usr/bin/time", "-f", "%M", "-o", rss.name] + command[measured_from:]
        process = subprocess.Popen(wrapped, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = [line for line in rss.read().splitlines() if line.strip().isdigit()]
        peak = int(lines[-1]) if lines else usage.ru_maxrss
        return usage.ru_utime + usage.ru_stime, peak, out.read(), err.read(), process.returncode


def loopback_section(micloop, work, seconds):
    tone = os.path.join(work, "tone.wav")
    sh(["sox", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth", str(seconds * 6 + 60), "sine", "1000",
        "vol", "0.25"])
    rows = []
    lowest = []
    with VirtualDevices() as devices:
        player = subprocess.Popen(["aplay", "-q", "-D", "pulse:mic", tone], env=devices.env)
        time.sleep(2)

        def micloop_run(period, periods):
            command = [micloop, "loopback", "--meter", "--json", "--capture", "pulse:mic.monitor",
                       "--playback", "pulse:spk", "--rate", "48000", "--period", str(period),
                       "--periods", str(periods), "--duration", str(seconds)]
            cpu, rss, out, err, status = run_with_usage(command, devices.env)
            events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
            start = next((e for e in events if e["event"] == "start"), {})
            xruns = sum(1 for e in events if e["event"] == "xrun")
            ok = status == 0 and start != {}
            return cpu, rss, xruns if ok else None, start.get("buffering_ms")

        def alsaloop_run(latency_us):
            # alsaloop ignores -s on this server: SIGINT ends it after the same time.
            command = ["timeout", "-s", "INT", str(seconds), "alsaloop", "-C", "pulse:mic.monitor", "-P",
                       "pulse:spk", "-r", "48000", "-c", "1", "-f", "S16_LE", "-S", "0", "-t", str(latency_us),
                       "-s", str(seconds), "-U"]
            cpu, rss, out, err, status = run_with_usage(command, devices.env, measured_from=4)
            text = (out + err).lower()
            xruns = text.count("xrun") + text.count("underrun") + text.count("overrun")
            ok = status in (0, 124) and "failed" not in text
            return cpu, rss, xruns if ok else None, latency_us / 1000 * 2

        cpu, rss, xruns, buffering = micloop_run(128, 2)
        rows.append(("`micloop loopback --meter --period 128`", cpu, rss, xruns, buffering))
        cpu, rss, xruns, buffering = alsaloop_run(100_000)
        rows.append(("`alsaloop -S 0 -t 100000`", cpu, rss, xruns, buffering))
        for period, periods in [(64, 2), (128, 2), (256, 2)]:
            _, _, xruns, buffering = micloop_run(period, periods)
            if xruns == 0:
                out = subprocess.run([micloop, "latency", "--playback", "pulse:spk", "--capture",
                                      "pulse:spk.monitor", "--period", str(period), "--periods", str(periods),
                                      "--json"], env=devices.env, capture_output=True, text=True).stdout
                trip = next((json.loads(line)["round_trip_ms"] for line in out.splitlines()
                             if line.startswith("{")), None)
                lowest.append(("micloop", f"--period {period} --periods {periods}", buffering, trip))
                break
        for latency in [10_000, 20_000, 50_000, 100_000]:
            _, _, xruns, buffering = alsaloop_run(latency)
            if xruns == 0:
                lowest.append(("alsaloop", f"-S 0 -t {latency}", buffering, None))
                break
        player.kill()
    lines = [
        "## Live loopback: `micloop loopback` vs `alsaloop`",
        "",
        f"48 kHz mono, a 1 kHz tone played into the virtual microphone of a private PulseAudio server "
        f"(pulse:mic.monitor → pulse:spk), {seconds} s per run, same server, same run. CPU = user + system "
        "seconds of the whole process divided by audio seconds; RSS = peak resident set. Buffering is "
        "capture plus playback buffer as granted (micloop reports it in its `start` line; for alsaloop "
        "the requested latency counted on both sides). alsaloop ignores `-s` on this server, so `timeout -s INT` "
        "ends it after the same time; `timeout` itself adds no measurable CPU.",
        "",
        "| command | CPU % of one core | peak RSS MiB | xruns | buffering ms |",
        "|---|---|---|---|---|",
    ]
    for name, cpu, rss, xruns, buffering in rows:
        lines.append(f"| {name} | {cpu / seconds * 100:.2f} | {rss / 1024:.1f} | "
                     f"{'failed' if xruns is None else xruns} | {buffering if buffering is not None else '-'} |")
    if rows[0][1] and rows[1][1]:
        lines += ["", f"alsaloop / micloop in the same run: {rows[1][1] / rows[0][1]:.2f}× the CPU, "
                  f"{rows[1][2] / rows[0][2]:.2f}× the peak RSS."]
    lines += ["", "Reading the numbers: both programs reach the server through the ALSA pulse plugin, which "
              "runs libpulse's threads inside the process, and a profile of micloop (`perf record`) shows its "
              "CPU time almost all in the kernel — futex, eventfd, pipe and poll calls the plugin makes for "
              "every 128-frame period. A hardware device (`hw:`) is driven without that plugin; there is none "
              "on this machine to measure. alsaloop's CPU is a busy loop: it polls without sleeping in its "
              "`-S 0` mode. Memory: alsaloop is a small C program; micloop's resident set is mostly the Swift "
              "runtime (the binary links the Swift standard library statically, which keeps only the pages "
              "it uses: `micloop --version` alone is about 11 MiB) plus 0.8 MiB of rings. RSS is measured "
              "with `/usr/bin/time` around each program itself, not around the benchmark's own process."]
    lines += ["", f"Lowest buffering that ran {seconds} s with no xrun (trying the smallest first):", "",
              "| tool | settings | buffering ms | `micloop latency` round trip ms (spk → its monitor) |",
              "|---|---|---|---|"]
    for tool, settings, buffering, trip in lowest:
        lines.append(f"| {tool} | `{settings}` | {buffering} | {'-' if trip is None else trip} |")
    return lines + [""]


def soak_section(micloop, work, seconds):
    """A long live loopback with meter, DTMF decoding and a recording,
    its resident memory sampled every 10 s."""
    tone = os.path.join(work, "soak-feed.wav")
    sh(["sox", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth", str(seconds + 60), "sine", "440",
        "vol", "0.1"])
    recording = os.path.join(work, "soak.wav")
    samples = []
    with VirtualDevices() as devices:
        player = subprocess.Popen(["aplay", "-q", "-D", "pulse:mic", tone], env=devices.env)
        time.sleep(1)
        loop = subprocess.Popen([micloop, "loopback", "--meter", "--tones", "dtmf", "--json", "--capture",
                                 "pulse:mic.monitor", "--playback", "pulse:spk", "--record", recording,
                                 "--duration", str(seconds)], env=devices.env, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        status_path = f"/proc/{loop.pid}/status"
        out = []
        reader = threading.Thread(target=lambda: out.append(loop.stdout.read()))
        reader.start()
        while loop.poll() is None:
            time.sleep(10)
            try:
                with open(status_path) as f:
                    rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
                samples.append(rss)
            except (OSError, StopIteration):
                break
        reader.join()
        player.kill()
        player.wait()
    xruns = "".join(out).count('"event":"xrun"')
    first, last, peak = samples[1], samples[-1], max(samples[1:])
    return [
        "## Long live run: memory",
        "",
        f"`micloop loopback --meter --tones dtmf --record` for {seconds} s on the private PulseAudio server "
        "(a 440 Hz tone fed into its microphone), resident memory read from `/proc` every 10 s.",
        "",
        "| samples | RSS at 20 s MiB | RSS at the end MiB | largest MiB | growth after 20 s KiB | xruns |",
        "|---|---|---|---|---|---|",
        f"| {len(samples)} | {first / 1024:.1f} | {last / 1024:.1f} | {peak / 1024:.1f} | {peak - first} | {xruns} |",
        "",
        "RSS by minute (MiB): " + ", ".join(f"{rss / 1024:.1f}" for rss in samples[5::6]),
        "",
        f"Over the second half of the run RSS grew {samples[-1] - samples[len(samples) // 2]} KiB.",
        "",
        "`make test` also runs 24 hours of simulated audio through the same job (`micloop-soak`): it fails "
        "on any growth of memory beyond 1 MiB after the first hour, on drift of the sample time, or on a lost frame.",
        "",
    ]


def station_section(micloop, seconds):
    """The monitoring station's cost to the job, and whether clients can disturb it."""
    r = station_stress.measure(micloop, period=64, seconds=seconds)
    rows = []
    for name, clients in (("quiet", "none"), ("ten", "10 readers of /events"),
                          ("storm", f"{station_stress.READERS} readers, {station_stress.STUCK} stuck, a slowloris, "
                                    f"{station_stress.SCRAPES_PER_SECOND} scrapes/s")):
        run = r[name]
        scrapes = run["scrapes"]
        served = ", ".join(f"{count} × {status}" for status, count in sorted(scrapes.items(), key=str)) or "–"
        readers = "–" if run["readers_least"] is None else \
            f"{run['readers_least']}–{run['readers_most']} ({run['readers_missed']} missed)"
        rows.append(f"| {clients} | {run['xruns']} | {100 * run['cpu_share']:.2f} | {100 * run['web_share']:.2f} | "
                    f"{run['levels']} | {readers} | {served} |")
    return [
        "## Monitoring station",
        "",
        f"`micloop meter -D pulse:mic.monitor --period 64 --http 127.0.0.1:0` for {seconds} s on the private "
        "PulseAudio server (a tone fed into its microphone), three runs: no client, ten clients of `/events`, "
        "and a storm of clients (`Scripts/station_stress.py`). CPU is counted after the job's first "
        f"{station_stress.SETTLE:.0f} s, for the whole process and for the web stage's threads (the station's "
        "executor and Swift's task pool, which nothing else of a meter job uses); a reader's level lines are "
        "checked against the job's own output between the reader's first and last line.",
        "",
        "| clients | xruns | job CPU % of a core | web stage CPU % | level lines | each reader got | "
        "scrapes of /metrics |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"The web stage with ten clients: **{100 * r['web_cpu_share']:.2f} % of a core** (budget 1 %); under the "
        f"storm {100 * r['storm_cpu_share']:.2f} %, which added **{r['added_xruns']} xruns** to the run without "
        "clients. A 503 is the station's "
        "client limit (64 connections) answering a scrape while every slot is taken.",
        "",
        "An hour's soak with clients coming and going is `make station-soak` (too long for this run; "
        "Docs/STATION.md quotes its last run).",
        "",
    ]


def decoded_keys(command):
    """The DTMF keys a decoder printed ("DTMF: X" lines, or micloop's JSON)."""
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    keys = []
    for line in out.splitlines():
        if line.startswith("DTMF: "):
            keys.append(line[6:].strip())
        elif line.startswith("{") and '"event":"tone"' in line:
            keys.append(json.loads(line)["symbol"])
    return "".join(keys)


def tones_section(micloop, work, runs):
    sys.path.insert(0, HERE)
    import dtmf_corpus
    import numpy as np

    receiver = os.path.join(work, "dtmf_rx")
    sh(["sh", "-c", f"cc -O2 -o {receiver} {os.path.join(HERE, 'dtmf_rx.c')} "
        "$(pkg-config --cflags --libs spandsp sndfile)"])
    path = os.path.join(work, "dtmf-ten-minutes.wav")
    signal, truth = dtmf_corpus.build(600)
    dtmf_corpus.write_wav16(path, signal)
    decoders = [
        ("micloop", lambda f: [micloop, "tones", "--plan", "dtmf", "--input", f, "--json"]),
        ("multimon-ng", lambda f: ["multimon-ng", "-q", "-t", "wav", "-a", "DTMF", f]),
        ("spandsp dtmf_rx", lambda f: [receiver, f]),
    ]
    timings = median_seconds([make(path) for _, make in decoders], runs)
    lines = [
        "## DTMF: `micloop tones` vs multimon-ng and spandsp",
        "",
        f"`Bench/dtmf_corpus.py`: 10 minutes of 8 kHz 16-bit mono, {len(truth)} keys in calls of 6-12, "
        "each call drawn within what ITU-T Q.24 says must be accepted: each tone off by up to ±1.5 %, "
        "twist -8 to +4 dB, tones and pauses of 40-100 ms, white noise at 6-25 dB SNR (relative to the "
        "low tone). Keys are aligned to the truth by edit distance. Whole process, median of "
        f"{runs} alternating runs after 2 warm-ups. spandsp is its `dtmf_rx` at default settings "
        "(`Bench/dtmf_rx.c`); multimon-ng converts the WAV through sox itself.",
        "",
        "| decoder | right | wrong | missed | extra | median wall s | median CPU s | micloop faster (wall) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ours_wall = timings[0][0]
    for (name, make), (wall, cpu) in zip(decoders, timings):
        right, wrong, missed, extra = dtmf_corpus.score(truth, decoded_keys(make(path)))
        lines.append(f"| {name} | {right} | {wrong} | {missed} | {extra} | {wall:.3f} | {cpu:.3f} | "
                     f"{wall / ours_wall:.2f}× |")
    spandsp = timings[2][0] / ours_wall
    versus_spandsp = (f"**{spandsp:.2f}× faster than spandsp's `dtmf_rx`**" if spandsp >= 1
                      else f"spandsp's `dtmf_rx` is {1 / spandsp:.2f}× faster than micloop")
    lines += ["", f"**micloop is {timings[1][0] / ours_wall:.2f}× faster than multimon-ng** on the same file, "
              f"{versus_spandsp}. spandsp runs one Goertzel filter per DTMF frequency over 102-sample blocks "
              "and nothing else; micloop computes a spectrum every 5 ms (so that any plan's tones, their exact "
              "frequencies and the noise floor are measured from it): two frames per complex FFT, frames no "
              "plan could hold a tone in ruled out before any logarithm or noise estimate, and the file read, "
              "converted and decimated on a second thread while the first decodes.", ""]

    # The same audio at 48 kHz: what a sound card records.
    wide = os.path.join(work, "dtmf-ten-minutes-48k.wav")
    sh(["sox", "-V1", path, "-r", "48000", wide])
    ours = decoders[0][1]
    spandsp_rx = decoders[2][1]
    (ours_one, spandsp_one, wide_one) = median_seconds(
        [on_one_core(ours(path)), on_one_core(spandsp_rx(path)), on_one_core(ours(wide))], runs)
    lines += ["On one core and on two (`taskset -c 0` pins the whole process to the first core, so "
              "micloop's reader thread takes its turns with the decoder), spandsp beside micloop; ratios are "
              "spandsp's time over micloop's, above 1 micloop is faster:", "",
              "| run | micloop wall s | micloop CPU s | spandsp wall s | spandsp CPU s | wall ratio | CPU ratio |",
              "|---|---|---|---|---|---|---|",
              f"| 8 kHz, two cores | {timings[0][0]:.3f} | {timings[0][1]:.3f} | {timings[2][0]:.3f} | "
              f"{timings[2][1]:.3f} | {timings[2][0] / timings[0][0]:.2f} | {timings[2][1] / timings[0][1]:.2f} |",
              f"| 8 kHz, one core | {ours_one[0]:.3f} | {ours_one[1]:.3f} | {spandsp_one[0]:.3f} | "
              f"{spandsp_one[1]:.3f} | {spandsp_one[0] / ours_one[0]:.2f} | {spandsp_one[1] / ours_one[1]:.2f} |",
              f"| 48 kHz input, one core | {wide_one[0]:.3f} | {wide_one[1]:.3f} | {spandsp_one[0]:.3f} | "
              f"{spandsp_one[1]:.3f} | {spandsp_one[0] / wide_one[0]:.2f} | {spandsp_one[1] / wide_one[1]:.2f} |",
              "", "spandsp reads 8 kHz only: the 48 kHz row sets micloop's time on the 48 kHz file beside "
              "spandsp's on the 8 kHz one. Where micloop's time goes is in `Docs/PROFILES.md`.", ""]
    narrow_run, wide_run = median_seconds([ours(path), ours(wide)], runs)
    wide_score = dtmf_corpus.score(truth, decoded_keys(ours(wide)))
    lines += [f"The same ten minutes resampled to 48 kHz: micloop takes {wide_run[0]:.3f} s against "
              f"{narrow_run[0]:.3f} s at 8 kHz (**{wide_run[0] / narrow_run[0]:.2f}× the 8 kHz time**, whole "
              f"process; {wide_score[0]} keys right, {wide_score[3]} extra). Signalling tones are analysed at the "
              "lowest whole fraction of the input rate that keeps their band (9.6 kHz here), after a "
              "60 dB Kaiser FIR decimator.", ""]

    lines += ["At the limits of the standard (each key 10 times, clean unless noted; "
              "\"must\" = Q.24 says accept, \"must not\" = reject):", "",
              "| condition | should | micloop | multimon-ng | spandsp |", "|---|---|---|---|---|"]
    for label, options, accept in dtmf_corpus.LIMIT_CASES:
        case_signal, case_truth = dtmf_corpus.limit_case(**options)
        case_path = os.path.join(work, "limit.wav")
        dtmf_corpus.write_wav16(case_path, case_signal)
        cells = []
        for _, make in decoders:
            keys = decoded_keys(make(case_path))
            right = dtmf_corpus.score(case_truth, keys)[0]
            cells.append(f"{right}/{len(case_truth)}" if accept else f"{len(keys)} decoded")
        lines.append(f"| {label} | {'must decode' if accept else 'must not decode'} | " + " | ".join(cells) + " |")

    speech = os.path.join(work, "speech.wav")
    talkoff = sh([sys.executable, os.path.join(HERE, "..", "Scripts", "eval", "talkoff_eval.py"),
                  "--micloop", micloop, "--keep", speech]).stdout.strip().splitlines()
    narrow = os.path.join(work, "speech-8k.wav")
    sh(["sox", "-V1", speech, "-r", "8000", "-b", "16", narrow])
    minutes = float(np.round(os.path.getsize(narrow) / 2 / 8000 / 60, 1))
    lines += ["", f"Talk-off: {minutes} minutes of espeak-ng speech (8 voices, -3 dBFS peaks; "
              "`Scripts/eval/talkoff_eval.py`, also run by `make test`), resampled to 8 kHz for all three:", "",
              "| decoder | false DTMF keys |", "|---|---|"]
    for name, make in decoders:
        lines.append(f"| {name} | {len(decoded_keys(make(narrow)))} |")
    lines += ["", "micloop with every plan at once on the 48 kHz original:", ""]
    lines += ["    " + line for line in talkoff] + [""]
    return lines


def channel_section(micloop, work):
    import channel_eval

    directory = os.path.join(work, "channels")
    os.makedirs(directory, exist_ok=True)
    rows, subtones = channel_eval.evaluate(micloop, 16, 1, directory)
    ctcss = sh([sys.executable, os.path.join(HERE, "..", "Scripts", "eval", "ctcss_eval.py"),
                "--micloop", micloop]).stdout.strip().splitlines()
    return [
        "## Tones through radio and telephone channels",
        "",
        "`Scripts/eval/channel_eval.py` (also run by `make test`, which fails as its `failures` says: any 5-tone, "
        "page or siren miss or extra, any extra key on a telephone line): 5-tone calls, "
        "DTMF, two-tone pages and siren signals sent over a simulated narrow-band FM link at 15, 8 and 6 dB "
        "carrier-to-noise ratio (pre/de-emphasis, deviation limiting, discriminator clicks, squelch bursts, "
        "a CTCSS sub-tone under half the transmissions, speech after a third, 48 kHz and 22.05 kHz), and DTMF "
        "through a 300-3400 Hz telephone channel with G.711 mu-law or GSM 06.10 (sox), keys at -18 to "
        "-30 dBFS with -6 to +3 dB twist and the caller speaking between them. multimon-ng reads each file "
        "through sox; spandsp's `dtmf_rx` gets it resampled to 8 kHz.",
        "",
    ] + channel_eval.table(rows) + [
        "",
        "The CTCSS sub-tones of the same FM files as an SDR delivers them (22.05 kHz, no 300 Hz voice "
        "filter), with `--plan ctcss`: a sub-tone is reported once it has been found for 0.8 s, so only "
        "transmissions of 1.2 s or more count (neither peer decodes CTCSS).",
        "",
    ] + channel_eval.subtone_table(subtones) + [
        "",
        "## CTCSS under speech",
        "",
        "`Scripts/eval/ctcss_eval.py` (also run by `make test`, which fails unless every radio case counts): each "
        "of the 50 standard tones, up to 0.4 % off, 15-20 dB under espeak-ng speech (four voices) from 0.5 s "
        "to the end of a 5 s file; it counts when exactly one tone is reported, on the right frequency, its "
        "start within 250 ms. Radio: the speech through a transmitter's 300 Hz sub-audible filter; gentle: "
        "a 6th-order Butterworth instead; microphone: unfiltered, its pitch right on the sub-tones.",
        "",
    ] + ctcss + [""]


def talk_section(micloop):
    out = sh([sys.executable, os.path.join(HERE, "..", "Scripts", "eval", "talk_eval.py"), "--micloop", micloop])
    return [
        "## Talk detection on speech in noise",
        "",
        "`Scripts/eval/talk_eval.py` (also run by `make test`, which fails below the targets): espeak-ng speech "
        "(6 voices, 4 speeds, sentences of 1-17 words, pauses of 0.5-3 s), mixed with white, pink and brown "
        "noise and 50 Hz hum (with 150 and 250 Hz harmonics) at 30/20/10/5 dB SNR (active-speech RMS to noise "
        "RMS), speech peaks at -12 and -30 dBFS, default settings. F1 of \"talking\" on 10 ms frames, ignoring "
        "100 ms around each true boundary; segments per true utterance (flapping shows as > 1); onset delay = "
        "reported talk_start minus true onset.",
        "",
    ] + out.stdout.strip().splitlines() + [""]


def room_section(micloop):
    out = sh([sys.executable, os.path.join(HERE, "..", "Scripts", "eval", "room_eval.py"), "--micloop", micloop, "--peers"])
    return [
        "## Talk detection in real rooms: micloop vs WebRTC VAD and Silero VAD",
        "",
        "`Scripts/eval/room_eval.py` (micloop's targets are checked by `make test`): espeak-ng speech in English, German, "
        "French and Spanish, male and female, pauses of 0.8-3 s, the talker's level varying +-8 dB, speech peaks at "
        "-20 and -38 dBFS, every other track reverberant (RT60 0.4 s), mixed at 10, 5 and 0 dB SNR with babble "
        "(6 other voices), keyboard clicks, traffic (brown noise swelling +-10 dB), music (chords with harmonics and "
        "vibrato) and a fan (blade tone and broadband). False talk = fraction of non-speech frames (100 ms away from "
        "speech) marked talk. WebRTC VAD runs in mode 1 on 30 ms frames at 16 kHz; Silero VAD with its library "
        "defaults (threshold 0.5, release 0.35, 100 ms minimum silence, 250 ms minimum speech). Reading, scored "
        "apart: paragraphs of 3-5 sentences joined by breaths of 0.15-0.45 s, one true segment each, in every "
        "noise at 10 and 5 dB SNR (a detector whose background follows the talker ends talk in them).",
        "",
    ] + out.stdout.strip().splitlines() + [""]


def real_section(micloop):
    """Talk and tones on recorded speech and music, beside the peers."""
    scripts = os.path.join(HERE, "..", "Scripts", "eval")
    lines = [
        "## Recorded speech and music: talk beside WebRTC VAD and Silero VAD, DTMF beside multimon-ng and spandsp",
        "",
        "Built from Debian's recorded telephone prompts (three professional speakers, English, Spanish, French) and "
        "three music-on-hold tracks (`Scripts/eval/real_corpus.py`; Docs/TESTING.md says which files, and how each falls "
        "into a tuning half or a check half). Each table shows both halves, and a third group: two more speakers "
        "(French and Colombian Spanish, 8 kHz GSM prompts) on which no setting was ever chosen.",
        "",
    ]
    for script, title in (("real_talk_eval.py", "### Talk on recorded readings"),
                          ("real_talkoff_eval.py", "### No key from anyone talking, or from music"),
                          ("real_keys_eval.py", "### Keys under a caller talking and over music on hold")):
        full = ["--full"] if script == "real_talk_eval.py" else []
        out = sh([sys.executable, os.path.join(scripts, script), "--micloop", micloop] + full)
        lines += [title, ""] + out.stdout.strip().splitlines() + [""]
    return lines


def plot_section(micloop, work):
    """`micloop plot` on a streamed 10-minute and 3-hour input: time and peak memory."""
    rows = []
    for label, seconds in (("10 minutes", 600), ("3 hours", 10800)):
        picture = os.path.join(work, f"plot-{seconds}.png")
        script = (f"sox -V1 -n -r 16000 -c 1 -b 16 -t wav - synth {seconds} pinknoise vol 0.3 | "
                  f"{micloop} plot -i - -o {picture}")
        start = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%M", "bash", "-c", script], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True)
        wall = time.perf_counter() - start
        rss = int(out.stderr.strip().splitlines()[-1])
        rows.append(f"| {label} | {wall:.1f} | {rss / 1024:.1f} |")
    return [
        "## Plots: `micloop plot` memory with length",
        "",
        "Pink noise at 16 kHz streamed from sox through a pipe (no length known beforehand), drawn at "
        "1600×900; wall time includes sox.",
        "",
        "| input | wall s | peak RSS MiB |",
        "|---|---|---|",
    ] + rows + [
        "",
        "Memory stays bounded: 18 times the length costs about a megabyte more (the columns merge in pairs as the stream outgrows them).",
        "",
    ]


def feedback_section(micloop):
    """The howl guard's cost per period, measured in process by micloop-feedback-eval."""
    root = os.path.dirname(HERE)
    evaluator = os.path.join(os.path.dirname(micloop), "micloop-feedback-eval")
    signals = os.path.join(root, ".build", "feedback-eval")
    if not os.path.exists(os.path.join(signals, "music.wav")):
        sh([sys.executable, os.path.join(root, "Scripts", "eval", "feedback_signals.py"), signals])
    def tables(section):
        """Each table the evaluator prints, after the line that says what it is."""
        out = sh([evaluator, "--rooms", os.path.join(root, "Tests", "Fixtures", "rooms"), "--signals", signals,
                  "--only", section]).stdout
        lines, caption = [], None
        for line in out.splitlines():
            if line.startswith("|"):
                if caption is not None:
                    lines += ["", caption, ""]
                    caption = None
                lines.append(line)
            elif line.strip() and not line.startswith(" "):
                caption = line.strip()
        return lines
    return [
        "## Feedback guard: cost",
        "",
        "`HowlGuard.process` on 10 s of white noise at 48 kHz, best of three runs, in microseconds per period: "
        "with no notch set (the detector alone: a 4096-point FFT every 256 frames and its bookkeeping) and with "
        "all eight notches set. The share is of the period's own duration. Learning the loop runs on the control "
        "thread: its cost per second of audio follows.",
    ] + tables("bench") + [
        "",
        "## Feedback guard: time to act",
        "",
        "The live loopback job in the three simulated rooms (`make feedback-eval`), the gain stepped at 2 s from "
        "the loop's maximum stable gain (MSG) − 6 dB to MSG + 3 and + 6 dB. Growth starts where the howl's level "
        "at the microphone without the guard starts rising above its level before the step (its straight line "
        "in dB, fitted 10–30 dB over that level, met with it; frame centres; never before the step). Targets: "
        "the first notch or duck within 100 ms (+3 dB) and 50 ms (+6 dB) of that, the howl (noise talker) never "
        "more than 10 dB over its level without the loop.",
    ] + tables("act") + [""]


WEBRTC_VAD_TIMING = r"""
import sys, time, wave, webrtcvad
with wave.open(sys.argv[1], "rb") as f:
    audio = f.readframes(f.getnframes())
step = 2 * 480
frames = [audio[i:i + step] for i in range(0, len(audio) - step + 1, step)]
vad = webrtcvad.Vad(1)
best_vad = best_loop = float("inf")
for _ in range(3):
    start = time.process_time()
    for frame in frames:
        vad.is_speech(frame, 16000)
    best_vad = min(best_vad, time.process_time() - start)
    start = time.process_time()
    for frame in frames:
        pass
    best_loop = min(best_loop, time.process_time() - start)
print(best_vad - best_loop)
"""


def talk_cost_section(micloop, work, runs):
    """The talk stage's processor time per hour of audio beside WebRTC VAD's."""
    path = os.path.join(work, "one-hour-16k.wav")
    sh(["sox", "-n", "-r", "16000", "-b", "16", path, "synth", "3600", "pinknoise", "vol", "0.3",
        "synth", "sine", "amod", "0.5"])
    (ours_wall, ours_cpu), = median_seconds([on_one_core([micloop, "meter", "--input", path, "--json"])], runs)
    vad_cpu = float(sh(on_one_core([sys.executable, "-c", WEBRTC_VAD_TIMING, path])).stdout.strip())
    hours = 1
    return [
        "## Talk detection: cost beside WebRTC VAD",
        "",
        "An hour of 16 kHz mono (modulated pink noise), one core (`taskset -c 0`). micloop is the whole "
        f"`micloop meter --input F --json` process (reading, levels, the speech-band filter, the envelope and the "
        f"talk decisions, start-up included), median of {runs} runs. WebRTC VAD (its C code, through the "
        "`webrtcvad` module, mode 1, 30 ms frames) is timed inside Python over the same samples, best of three, "
        "less the same loop without the call: its own work only, the file already in memory.",
        "",
        "| detector | CPU s per hour of audio | share of one core |",
        "|---|---|---|",
        f"| micloop meter (levels and talk) | {ours_cpu / hours:.3f} | {100 * ours_cpu / 3600:.4f} % |",
        f"| WebRTC VAD (`is_speech` alone) | {vad_cpu / hours:.3f} | {100 * vad_cpu / 3600:.4f} % |",
        "",
        f"micloop's whole meter takes **{vad_cpu / ours_cpu:.2f}×** less processor time than WebRTC VAD's "
        "classifier alone." if vad_cpu >= ours_cpu else
        f"WebRTC VAD's classifier alone takes {ours_cpu / vad_cpu:.2f}× less processor time than micloop's whole meter.",
        "",
    ]


def recorder_section(micloop):
    """The transmission recorder's cost per period, measured in process by micloop-soak."""
    soak = os.path.join(os.path.dirname(micloop), "micloop-soak")
    out = sh([soak, "--recorder-cost"]).stdout
    return [
        "## Transmission recorder: cost",
        "",
        "`Recorder` (what `micloop record` and `--record-dir` run on the control thread, writing its files there "
        "too) fed 10 minutes of 48 kHz noise at -60 dBFS with a 1 kHz transmission at -20 dBFS for 5 s of every "
        "20 (a file each, level trigger), a 256-frame block a period and its decisions every fourth period, as a "
        "live job hands them over; the thread's own processor time, writing included, best of three. The "
        "budget is 0.5 % of the period.",
        "",
    ] + [line for line in out.splitlines() if line.startswith("|")] + [""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micloop", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--loop-seconds", type=int, default=60)
    parser.add_argument("--soak-seconds", type=int, default=600)
    parser.add_argument("--only", choices=["meter", "loudness", "tones", "channels", "loopback", "servers", "native",
                                            "soak", "station", "talk", "room", "real", "plot", "feedback", "recorder", "talkcost"],
                        help="run one section (for a quick look; the report then has only it)")
    args = parser.parse_args()
    micloop = os.path.abspath(args.micloop)
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (Bench/bench.py); every comparison runs both tools on the same input in the "
        "same run. Absolute times drift on shared machines; the ratios are what to quote. Where the time goes, "
        "stage by stage, is measured by hand with `perf` and kept in `Docs/PROFILES.md`.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}. "
        f"Run on {time.strftime('%Y-%m-%d')}.",
        "",
    ]
    with tempfile.TemporaryDirectory() as work:
        sections = {
            "meter": lambda: meter_section(micloop, work, args.runs),
            "loudness": lambda: loudness_section(micloop, work, args.runs),
            "tones": lambda: tones_section(micloop, work, args.runs),
            "channels": lambda: channel_section(micloop, work),
            "loopback": lambda: loopback_section(micloop, work, args.loop_seconds),
            "servers": lambda: servers.servers_section(micloop, work, args.loop_seconds, run_with_usage),
            "native": lambda: native.native_section(micloop, work, args.loop_seconds, run_with_usage),
            "soak": lambda: soak_section(micloop, work, args.soak_seconds),
            "station": lambda: station_section(micloop, args.loop_seconds),
            "talk": lambda: talk_section(micloop),
            "room": lambda: room_section(micloop),
            "real": lambda: real_section(micloop),
            "plot": lambda: plot_section(micloop, work),
            "feedback": lambda: feedback_section(micloop),
            "recorder": lambda: recorder_section(micloop),
            "talkcost": lambda: talk_cost_section(micloop, work, args.runs),
        }
        for name, section in sections.items():
            if args.only in (None, name):
                lines += section()
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
