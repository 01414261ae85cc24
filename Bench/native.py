"""micloop's native JACK and PipeWire clients beside the ALSA plugin path on
the same private servers in the same run: CPU, xruns and frames lost in a
loopback, the round trip jack_iodelay measures through each, and, beside
a CPU hog, the cycles jackd says micloop's client did not finish against
those it says jack_iodelay alone did not."""

import json
import os
import re
import signal
import subprocess
import time

from servers import JackServer, PipeWireServer


def losses(out):
    """(xruns, frames lost) in a live job's JSON output."""
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    xruns = [e for e in events if e.get("event") == "xrun"]
    # lost_frames is null when the device did not say how many.
    return len(xruns), sum(e.get("lost_frames") or 0 for e in xruns)


def iodelay(server, wire):
    """Median of jack_iodelay's readings (frames) once `wire()` connected it."""
    log = os.path.join(server.dir, "iodelay.txt")
    with open(log, "w") as f:
        meter = subprocess.Popen(["stdbuf", "-oL", "jack_iodelay"], env=server.env, stdout=f,
                                 stderr=subprocess.DEVNULL)
    wire()
    time.sleep(3)
    meter.terminate()
    meter.wait()
    readings = sorted(float(line.split()[0]) for line in open(log).read().replace("\r", "\n").split("\n")
                      if "total roundtrip latency" in line)[2:]
    return readings[len(readings) // 2] if readings else None


def started(command, env, ready):
    """A process whose output file shows `ready` (waits up to 10 s)."""
    out = open(os.path.join("/tmp", f"micloop-bench-{os.getpid()}-{time.monotonic_ns()}.txt"), "w+")
    process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    for _ in range(100):
        out.seek(0)
        if ready in out.read():
            break
        time.sleep(0.1)
    return process


def jack_round_trips(micloop, server):
    """(own loop, through the native client, through the ALSA plugin) in frames."""
    own = iodelay(server, lambda: server.connect("jack_delay:out", "jack_delay:in"))
    native = started([micloop, "loopback", "-D", "jack:none", "--duration", "60"], server.env, "Hz")
    through_native = iodelay(server, lambda: (server.connect("jack_delay:out", "micloop:capture_1"),
                                              server.connect("micloop:playback_1", "jack_delay:in")))
    native.send_signal(signal.SIGINT)
    native.wait()
    plugin = started([micloop, "loopback", "-D", "jackself", "--period", str(server.period), "--periods", "2",
                      "--duration", "60"], server.env, "Hz")
    through_plugin = iodelay(server, lambda: (server.connect("jack_delay:out", f"micloop.C.{plugin.pid}."),
                                              server.connect(f"micloop.P.{plugin.pid}.", "jack_delay:in")))
    plugin.send_signal(signal.SIGINT)
    plugin.wait()
    return own, through_native, through_plugin


def not_finished(log, client):
    """Cycles jackd's log says `client` did not finish."""
    return len(re.findall(rf"client = {re.escape(client)} was not finished", log))


def hog_run(micloop, period, seconds, run_with_usage):
    """Beside two busy loops: jack_iodelay alone, then micloop's native
    loopback alone, each on a fresh server; jackd's "not finished" counts
    for each and micloop's CPU."""
    hogs = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        with JackServer(period, log=True) as server:
            meter = subprocess.Popen(["jack_iodelay"], env=server.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            server.connect("jack_delay:out", "jack_delay:in")
            time.sleep(seconds)
            meter.terminate()
            meter.wait()
            alone = not_finished(server.log(), "jack_delay")
        with JackServer(period, log=True) as server:
            cpu, _, out, _, status = run_with_usage(
                [micloop, "loopback", "--json", "-D", "jack", "--duration", str(seconds)], server.env)
            ours = not_finished(server.log(), "micloop")
        return alone, ours, cpu, losses(out), status
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def native_section(micloop, work, seconds, run_with_usage):
    rows = []
    trips = []
    for period in (32, 64):
        with JackServer(period) as server:
            for label, command in (
                    ("native `-D jack`", [micloop, "loopback", "--json", "-D", "jack"]),
                    ("ALSA `jack` plugin", [micloop, "loopback", "--json", "-D", "jackloop", "--period",
                                            str(period), "--periods", "2"])):
                cpu, _, out, _, status = run_with_usage(command + ["--duration", str(seconds)], server.env)
                rows.append((f"JACK dummy, {period} frames", label, cpu, losses(out), status))
            trips.append((period,) + jack_round_trips(micloop, server))
    tone = os.path.join(work, "native-tone.wav")
    subprocess.run(["sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth",
                    str(2 * seconds + 30), "sine", "1000", "vol", "0.25"], check=True)
    with PipeWireServer(64) as server:
        feeder = subprocess.Popen(["aplay", "-q", "-D", "pipewire:NODE=mic", tone], env=server.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        for label, capture, playback, extra in (
                ("native `pw:`", "pw:mic", "pw:spk", []),
                ("ALSA `pipewire` plugin", "pipewire:NODE=mic", "pipewire:NODE=spk", ["--periods", "2"])):
            cpu, _, out, _, status = run_with_usage(
                [micloop, "loopback", "--json", "--capture", capture, "--playback", playback, "--period", "64",
                 "--duration", str(seconds)] + extra, server.env)
            rows.append(("PipeWire, quantum 64", label, cpu, losses(out), status))
        feeder.kill()
        feeder.wait()
    alone, ours, hog_cpu, (hog_xruns, hog_lost), hog_status = hog_run(micloop, 32, seconds, run_with_usage)
    lines = [
        "## Native JACK and PipeWire clients beside the ALSA plugins",
        "",
        f"The same private servers, {seconds} s of `micloop loopback` each, 48 kHz mono. JACK: `jackd -R -P 80 -d "
        "dummy -p P`; the native client connects to the physical ports, the plugin path is the `jackloop` PCM on the "
        "same ports at 2 × P. PipeWire: the null sinks of the servers section, micloop from `mic`'s monitor to "
        "`spk` at quantum 64 (native: `node.force-quantum`; plugin: `clock.force-quantum` and 2 × 64), `aplay` "
        "feeding `mic`. Xruns are those micloop reports; the native clients also report the frames lost.",
        "",
        "| server | path | micloop CPU % | xruns | frames lost | status |",
        "|---|---|---|---|---|---|",
    ]
    for server, label, cpu, (xruns, lost), status in rows:
        lines.append(f"| {server} | {label} | {cpu / seconds * 100:.2f} | {xruns} | {lost} | {status} |")
    frames = lambda n: "-" if n is None else f"{n:.0f} frames ({n / 48:.2f} ms)"
    lines += ["", "Round trip `jack_iodelay` measures, its output wired to its own input, or through micloop's "
              "loopback (jack_iodelay → micloop's input, micloop's output → jack_iodelay):", "",
              "| period | own loop | through the native client | through the ALSA `jack` plugin |",
              "|---|---|---|---|"]
    for period, own, native, plugin in trips:
        lines.append(f"| {period} | {frames(own)} | {frames(native)} | {frames(plugin)} |")
    lines += ["", f"Beside two busy loops (`while :; do :; done`, one per core), {seconds} s on `jackd -R -P 80 -d "
              "dummy -p 32`, a fresh server each: the cycles jackd logs as \"client = … was not finished\".", "",
              "| client | not finished | its CPU % | xruns it reported | frames lost |", "|---|---|---|---|---|",
              f"| `jack_iodelay` alone (own loop) | {alone} | - | - | - |",
              f"| micloop `loopback -D jack` alone | {ours} | {hog_cpu / seconds * 100:.2f} | {hog_xruns} | "
              f"{hog_lost} |", ""]
    if hog_status != 0:
        lines += [f"(micloop exited with status {hog_status} beside the hog.)", ""]
    return lines
