#!/usr/bin/env python3
"""Does the monitoring station ever disturb the audio? `micloop meter
--period 64 --http 127.0.0.1:0` on the private PulseAudio server (a tone
fed into its microphone), three runs of the same length:

  quiet    no client at all: the xruns and the CPU time of the job alone;
  ten      ten clients of /events reading every line: the web stage's CPU
           (its threads': the station's executor and Swift's task pool), as
           a share of one core;
  storm    50 clients of /events, 10 clients that connect to /events and
           never read, one slowloris (a request head sent a byte a second,
           never finished) and 200 scrapes of /metrics a second: the xruns
           it adds to the quiet run's (none may be added), and what every
           client got.

With --soak SECONDS one more run: clients come and go (up to 20 readers of
/events, each for 1 to 20 s, a stuck one now and then, 10 scrapes a
second) while resident memory is read every 10 s; its growth after the
first minute is reported.

    python3 Scripts/station_stress.py [--micloop .build/release/micloop]
        [--seconds 60] [--period 64] [--soak SECONDS] [--json] [--check]

`make bench` runs it (its "Monitoring station" section); --check exits 1
when the storm added an xrun, a reading client lost lines or the web
stage took more than 1 % of a core with ten clients.
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from virtual_devices import VirtualDevices  # noqa: E402

READERS = 50
STUCK = 10
SCRAPES_PER_SECOND = 200
SCRAPERS = 4
TEN = 10
# The web stage's budget with ten clients, as a share of one core.
WEB_CPU_BUDGET = 0.01
# Seconds after the job starts before CPU is counted (its start-up).
SETTLE = 3.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU seconds of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def dispatch_cpu_seconds(pid):
    """CPU seconds of the process's libdispatch threads (named `…-qos…`):
    the station's executor and Swift's task pool, which nothing else of a
    meter job uses; the web stage's own cost."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                if "qos" not in f.read():
                    continue
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            continue
    return total / CLOCK_TICKS


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


class Job:
    """`micloop meter` with the station, its output read as it comes."""

    def __init__(self, micloop, env, period, seconds):
        self.process = subprocess.Popen(
            [micloop, "meter", "-D", "pulse:mic.monitor", "--period", str(period), "--json",
             "--http", "127.0.0.1:0", "--duration", str(seconds)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.url = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(15) or self.url is None:
            self.process.kill()
            raise RuntimeError("micloop meter --http did not report its address: "
                               + self.process.stderr.read())
        self.host, self.port = self.url.split("//")[1].rstrip("/").split(":")
        self.port = int(self.port)

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)
            if self.url is None and '"event":"http"' in line:
                self.url = json.loads(line)["url"]
                self.ready.set()
        self.ready.set()

    def finish(self):
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, err

    @property
    def xruns(self):
        return sum(1 for line in self.lines if '"event":"xrun"' in line)

    @property
    def levels(self):
        return sum(1 for line in self.lines if '"event":"level"' in line)


def level_time(line):
    """The stream time of a level line, or None for any other line."""
    marker = line.find('"event":"level","time":')
    if marker < 0:
        return None
    rest = line[marker + len('"event":"level","time":'):]
    return float(rest.split(",", 1)[0])


class Reader(threading.Thread):
    """A client of /events that reads every line until told to stop or
    the job ends; keeps the stream times of the level lines it got."""

    def __init__(self, job, stop):
        super().__init__(daemon=True)
        self.job, self.stop, self.times, self.error = job, stop, [], None

    @property
    def levels(self):
        return len(self.times)

    def run(self):
        try:
            with socket.create_connection((self.job.host, self.job.port), timeout=30) as s:
                s.sendall(b"GET /events HTTP/1.1\r\nHost: station\r\n\r\n")
                buffered = b""
                while not self.stop.is_set():
                    data = s.recv(65536)
                    if not data:
                        break
                    buffered += data
                    *complete, buffered = buffered.split(b"\n")
                    for line in complete:
                        time_of = level_time(line.decode("utf-8", "replace"))
                        if time_of is not None:
                            self.times.append(time_of)
        except OSError as error:
            self.error = str(error)

    def missed(self, job_times):
        """Level lines the job printed between this client's first and last line that it never got."""
        if not self.times:
            return len(job_times)
        got = set(self.times)
        return sum(1 for t in job_times if self.times[0] <= t <= self.times[-1] and t not in got)


def stuck_client(job):
    """Connects to /events with the smallest receive buffer and never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.connect((job.host, job.port))
    s.sendall(b"GET /events HTTP/1.1\r\nHost: station\r\n\r\n")
    return s


def slowloris(job, stop):
    """Sends a request head a byte a second and never ends it; reconnects when dropped."""
    head = b"GET /metrics HTTP/1.1\r\nHost: station\r\nX-Slow: " + b"a" * 4096
    while not stop.is_set():
        try:
            with socket.create_connection((job.host, job.port), timeout=5) as s:
                for byte in head:
                    if stop.wait(1):
                        return
                    s.sendall(bytes([byte]))
        except OSError:
            stop.wait(1)


def scraper(job, stop, rate, counts):
    """GETs /metrics `rate` times a second; counts replies by status."""
    interval = 1.0 / rate
    next_at = time.monotonic()
    while not stop.is_set():
        try:
            with urllib.request.urlopen(f"http://{job.host}:{job.port}/metrics", timeout=5) as reply:
                reply.read()
                counts[reply.status] = counts.get(reply.status, 0) + 1
        except urllib.error.HTTPError as error:
            counts[error.code] = counts.get(error.code, 0) + 1
        except OSError:
            counts["error"] = counts.get("error", 0) + 1
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_at = time.monotonic()


def run(micloop, env, period, seconds, readers=0, stuck=0, slow=False, scrapes=0):
    """One run of the job with these clients; what it cost and what they got."""
    job = Job(micloop, env, period, seconds)
    stop = threading.Event()
    threads = [Reader(job, stop) for _ in range(readers)]
    sockets = [stuck_client(job) for _ in range(stuck)]
    counts = {}
    if slow:
        threads.append(threading.Thread(target=slowloris, args=(job, stop), daemon=True))
    for _ in range(SCRAPERS if scrapes else 0):
        threads.append(threading.Thread(target=scraper, args=(job, stop, scrapes / SCRAPERS, counts), daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(SETTLE)
    started, cpu_before = time.monotonic(), cpu_seconds(job.process.pid)
    web_before = dispatch_cpu_seconds(job.process.pid)
    time.sleep(max(1.0, seconds - SETTLE - 2))
    elapsed, cpu = time.monotonic() - started, cpu_seconds(job.process.pid) - cpu_before
    web = dispatch_cpu_seconds(job.process.pid) - web_before
    stop.set()
    status, err = job.finish()
    for s in sockets:
        s.close()
    readers_ = [t for t in threads if isinstance(t, Reader)]
    for reader in readers_:
        reader.join(5)
    job_times = [t for t in (level_time(line) for line in job.lines) if t is not None]
    got = [r.levels for r in readers_]
    return dict(status=status, error=err.strip(), xruns=job.xruns, levels=job.levels,
                cpu_share=cpu / elapsed, web_share=web / elapsed, readers_least=min(got) if got else None,
                readers_most=max(got) if got else None,
                readers_missed=sum(r.missed(job_times) for r in readers_),
                reader_errors=sum(1 for r in readers_ if r.error), scrapes=counts)


def soak(micloop, env, period, seconds):
    """Clients coming and going; resident memory every 10 s."""
    job = Job(micloop, env, period, seconds + 5)
    stop = threading.Event()
    counts = {}
    scraping = threading.Thread(target=scraper, args=(job, stop, 10, counts), daemon=True)
    scraping.start()
    rng = random.Random(1)
    samples = []
    clients = []
    ended = time.monotonic() + seconds
    next_sample = time.monotonic() + 10
    while time.monotonic() < ended:
        still = []
        for until, kind, client, quit in clients:
            if time.monotonic() < until:
                still.append((until, kind, client, quit))
                continue
            quit.set()
            if kind == "stuck":
                client.close()
        clients = still
        if len(clients) < 20:
            until = time.monotonic() + rng.uniform(1, 20)
            if rng.random() < 0.1:
                clients.append((until, "stuck", stuck_client(job), threading.Event()))
            else:
                quit = threading.Event()
                reader = Reader(job, quit)
                reader.start()
                clients.append((until, "reader", reader, quit))
        if time.monotonic() >= next_sample:
            samples.append(resident_kib(job.process.pid))
            next_sample += 10
        time.sleep(0.5)
    for _, kind, client, quit in clients:
        quit.set()
        if kind == "stuck":
            client.close()
    stop.set()
    status, err = job.finish()
    after_minute = samples[6:] or samples
    return dict(status=status, error=err.strip(), xruns=job.xruns, samples_kib=samples,
                at_one_minute_kib=after_minute[0], at_end_kib=samples[-1], largest_kib=max(after_minute),
                growth_kib=max(after_minute) - after_minute[0], scrapes=counts)


def measure(micloop, period=64, seconds=60, soak_seconds=0):
    tone = tempfile.NamedTemporaryFile(suffix=".wav", delete=False).name
    subprocess.run(["sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth",
                    str(3 * seconds + soak_seconds + 120), "sine", "1000", "vol", "0.1"], check=True)
    try:
        with VirtualDevices() as devices:
            player = devices.play(tone)
            time.sleep(1)
            try:
                result = dict(period=period, seconds=seconds)
                result["quiet"] = run(micloop, devices.env, period, seconds)
                result["ten"] = run(micloop, devices.env, period, seconds, readers=TEN)
                result["storm"] = run(micloop, devices.env, period, seconds, readers=READERS, stuck=STUCK,
                                      slow=True, scrapes=SCRAPES_PER_SECOND)
                if soak_seconds:
                    result["soak"] = soak(micloop, devices.env, period, soak_seconds)
            finally:
                player.kill()
                player.wait()
    finally:
        os.unlink(tone)
    result["web_cpu_share"] = result["ten"]["web_share"]
    result["storm_cpu_share"] = result["storm"]["web_share"]
    result["added_xruns"] = result["storm"]["xruns"] - result["quiet"]["xruns"]
    return result


def failures(result):
    problems = []
    for name in ("quiet", "ten", "storm"):
        if result[name]["status"] != 0:
            problems.append(f"the {name} run exited {result[name]['status']}: {result[name]['error']}")
    if result["added_xruns"] > 0:
        problems.append(f"the storm of clients added {result['added_xruns']} xruns")
    storm = result["storm"]
    for name in ("ten", "storm"):
        if result[name]["readers_missed"] > 0:
            problems.append(f"reading clients of the {name} run missed {result[name]['readers_missed']} level lines")
    if result["web_cpu_share"] > WEB_CPU_BUDGET:
        problems.append(f"the web stage took {100 * result['web_cpu_share']:.2f} % of a core with ten clients")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micloop", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), ".build", "release", "micloop"))
    parser.add_argument("--period", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--soak", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    result = measure(os.path.abspath(args.micloop), args.period, args.seconds, args.soak)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for name in ("quiet", "ten", "storm"):
            run_result = result[name]
            print(f"{name:6} xruns {run_result['xruns']}, CPU {100 * run_result['cpu_share']:.2f} % of a core "
                  f"(the web stage {100 * run_result['web_share']:.2f} %), "
                  f"levels {run_result['levels']}, readers got {run_result['readers_least']}-"
                  f"{run_result['readers_most']} (missed {run_result.get('readers_missed', 0)}), "
                  f"scrapes {run_result['scrapes']}")
        print(f"web stage with ten clients: {100 * result['web_cpu_share']:.2f} % of a core; "
              f"the storm added {result['added_xruns']} xruns")
        if "soak" in result:
            s = result["soak"]
            print(f"soak: RSS {s['at_one_minute_kib']} KiB at one minute, {s['at_end_kib']} at the end, "
                  f"largest {s['largest_kib']}, growth {s['growth_kib']} KiB, xruns {s['xruns']}")
    problems = failures(result)
    for problem in problems:
        print("station stress: " + problem, file=sys.stderr)
    if args.check and problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
