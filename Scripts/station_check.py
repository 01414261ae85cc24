#!/usr/bin/env python3
"""Checks the monitoring station end to end, as its users meet it: a real
browser (headless Chromium driven by Selenium) on the page that
`micloop record -D pulse:mic.monitor --tags dtmf --http 127.0.0.1:0` serves
on a private PulseAudio server, and a real Prometheus scraping it.

  1. A 1 kHz tone at -20 dBFS RMS played into the virtual microphone: the
     page's bar reads -20 +- 1 dBFS within 0.5 s of micloop reporting that
     level on its own output.
  2. `micloop send --plan dtmf 123#`: 1, 2, 3 and # on the page within 1 s
     of micloop reporting each.
  3. Speech, then silence: the recording appears on the page when its file
     closes, and its <audio> element plays it for as long as the file
     lasts.
  4. Prometheus (scraping every second): the level within 1 dB of the
     tone's, the DTMF tones counter at the 4 keys sent.
  5. `promtool test rules` on the documented alert rules.

Writes a screenshot of the page with --screenshot. Exits 1 on any failed
check with --check.

    python3 Scripts/station_check.py [--micloop .build/release/micloop] [--screenshot F] [--check]
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from virtual_devices import VirtualDevices

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "Docs", "micloop-alerts.yml")
RULES_TEST = os.path.join(ROOT, "Tests", "Fixtures", "micloop-alerts.test.yml")
TONE_DBFS = -20.0
# How close the page, and Prometheus, must read the tone (dB).
LEVEL_TOLERANCE = 1.0
# How soon after micloop reports a level or a key the page must show it (s).
BAR_LATENCY = 0.5
KEY_LATENCY = 1.0
KEYS = "123#"
# The speech lasts about 3.5 s: its recording at least this long (s).
SPEECH_SECONDS = 2.5


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, condition, message):
        print(("ok      " if condition else "FAILED  ") + message, flush=True)
        if not condition:
            self.failures.append(message)


class EventStream:
    """The station's /events, read as another client would: each event with the time it arrived."""

    def __init__(self, url):
        self.lines = []
        self.lock = threading.Lock()
        self.reply = urllib.request.urlopen(url + "events", timeout=120)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for raw in self.reply:
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("data:"):
                    try:
                        event = json.loads(line[5:])
                    except ValueError:
                        continue
                    with self.lock:
                        self.lines.append((time.monotonic(), event))
        except OSError:
            pass

    def first(self, predicate, timeout, after=0.0):
        return Micloop.first(self, predicate, timeout, after)


class Micloop:
    """micloop record with a station; its JSON lines, each with the time it arrived."""

    def __init__(self, micloop, env, directory):
        self.lines = []
        self.lock = threading.Lock()
        self.process = subprocess.Popen(
            [micloop, "record", "-D", "pulse:mic.monitor", "--dir", directory, "--tags", "dtmf", "--json",
             "--hang", "1", "--http", "127.0.0.1:0", "--duration", "120"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                self.lines.append((time.monotonic(), event))

    def first(self, predicate, timeout, after=0.0):
        """The first (time, event) that arrived after `after` and matches, waiting up to `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for arrived, event in self.lines:
                    if arrived >= after and predicate(event):
                        return arrived, event
            time.sleep(0.02)
        return None, None

    def stop(self):
        self.process.send_signal(2)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prometheus_query(port, query):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=5) as reply:
        result = json.load(reply)["data"]["result"]
    return [float(item["value"][1]) for item in result]


def start_prometheus(work, station):
    port = free_port()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as out:
        out.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                  "scrape_configs:\n  - job_name: micloop\n"
                  f"    static_configs: [{{targets: ['{station}']}}]\n")
    process = subprocess.Popen(["prometheus", f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
                                f"--storage.tsdb.path={work}/tsdb"], stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(work, "prometheus.log"), "w"))
    for _ in range(150):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1):
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"station check: Prometheus did not start; see {work}/prometheus.log")


def browser(env):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required",
                 "--window-size=1280,1000", "--disable-dev-shm-usage"]:
        options.add_argument(flag)
    service = Service("/usr/bin/chromedriver", env=env)
    return webdriver.Chrome(service=service, options=options)


def make_signals(work):
    tone = os.path.join(work, "tone.wav")
    # A sine at -20 dBFS RMS has its peaks at -16.99 dBFS: amplitude 0.1414.
    subprocess.run(["sox", "-V1", "-n", "-r", "48000", "-c", "1", "-b", "16", tone, "synth", "6", "sine", "1000",
                    "vol", "0.141421"], check=True)
    speech = os.path.join(work, "speech.wav")
    raw = os.path.join(work, "speech-raw.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", raw, "This is the station check. One recording, please."],
                   check=True)
    subprocess.run(["sox", "-V1", raw, "-r", "48000", "-c", "1", "-b", "16", speech, "vol", "0.8", "pad", "0", "0.5"],
                   check=True)
    quiet = os.path.join(work, "quiet.wav")
    subprocess.run(["sox", "-V1", "-n", "-r", "48000", "-c", "1", "-b", "16", quiet, "trim", "0", "100"], check=True)
    return tone, speech, quiet


def page_reading(driver):
    """The first channel's RMS as the page shows it, or None."""
    text = driver.execute_script(
        "const v = document.querySelector('#channels .val'); return v ? v.textContent : null;")
    try:
        return float(text.split("/")[0])
    except (AttributeError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micloop", default=os.path.join(ROOT, ".build/release/micloop"))
    parser.add_argument("--screenshot")
    parser.add_argument("--check", action="store_true")
    arguments = parser.parse_args()
    checks = Checks()
    work = tempfile.mkdtemp(prefix="micloop-station-check.")
    tone, speech, quiet = make_signals(work)
    players, job, driver, prometheus = [], None, None, None
    with VirtualDevices() as pulse:
        try:
            # Quiet audio keeps the virtual microphone running from the start.
            players.append(pulse.play(quiet))
            job = Micloop(arguments.micloop, pulse.env, os.path.join(work, "rec"))
            _, http = job.first(lambda e: e.get("event") == "http", 15)
            if http is None:
                ended = job.process.poll() is not None
                raise SystemExit("station check: micloop printed no station address"
                                 + (": " + job.process.stderr.read().strip() if ended else ""))
            url = http["url"]
            station = urllib.parse.urlparse(url).netloc
            print(f"station at {url}", flush=True)
            prometheus, prometheus_port = start_prometheus(work, station)
            events = EventStream(url)
            # The browser plays recordings to the virtual speaker, not back into the microphone.
            driver = browser(dict(pulse.env, PULSE_SINK="spk"))
            driver.get(url)

            # 3 first: speech, then the recording it makes closes while the tone and keys play.
            recorded = {e["file"] for _, e in job.lines if e.get("event") == "recording"}
            spoken = subprocess.run(["paplay", "--device=mic", speech], env=pulse.env, capture_output=True, text=True)
            checks.expect(spoken.returncode == 0, f"the speech played ({spoken.stderr.strip()})")
            time.sleep(1.5)

            # 1. The bar follows a tone: micloop reports its level on /events, the page shows it.
            played = time.monotonic()
            players.append(pulse.play(tone))
            shown, reading = None, None
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                reading = page_reading(driver)
                if reading is not None and abs(reading - TONE_DBFS) <= LEVEL_TOLERANCE:
                    shown = time.monotonic()
                    break
                time.sleep(0.02)
            reported, _ = events.first(lambda e: e.get("event") == "level" and e.get("rms_dbfs") is not None
                                       and abs(e["rms_dbfs"] - TONE_DBFS) <= LEVEL_TOLERANCE, 1, after=played)
            checks.expect(reported is not None, f"micloop reported the tone at {TONE_DBFS:+.0f} dBFS RMS")
            checks.expect(shown is not None, f"the page's bar reads {reading} dBFS for the {TONE_DBFS:+.0f} dBFS tone")
            if reported is not None and shown is not None:
                checks.expect(shown - reported <= BAR_LATENCY,
                              f"the bar moved {shown - reported:.3f} s after micloop reported the level "
                              f"({shown - played:.2f} s after the tone was started)")
            levels = []
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                levels = prometheus_query(prometheus_port, "micloop_level_rms_dbfs")
                if levels and abs(levels[0] - TONE_DBFS) <= LEVEL_TOLERANCE:
                    break
                time.sleep(0.25)
            checks.expect(bool(levels) and abs(levels[0] - TONE_DBFS) <= LEVEL_TOLERANCE,
                          f"Prometheus reads the level at {levels[0] if levels else None} dBFS")

            # 2. Keys on the page.
            players[-1].wait()
            # The page is watched while the keys play: each is timed from its own report.
            send = subprocess.Popen([arguments.micloop, "send", "--plan", "dtmf", KEYS, "-D", "pulse:mic"],
                                    env=pulse.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for key in KEYS:
                arrived, _ = job.first(lambda e, k=key: e.get("event") == "tone" and e.get("symbol") == k, 5)
                shown = None
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    symbols = driver.execute_script(
                        "return Array.from(document.querySelectorAll('#tones .sym')).map(s => s.textContent);")
                    if key in symbols:
                        shown = time.monotonic()
                        break
                    time.sleep(0.02)
                checks.expect(arrived is not None and shown is not None and shown - arrived <= KEY_LATENCY,
                              f"key {key} on the page " + (f"{shown - arrived:.3f} s after micloop reported it"
                                                           if arrived and shown else "never"))
            send_errors = send.communicate(timeout=30)[1]
            checks.expect(send.returncode == 0, f"micloop send {KEYS} played ({send_errors.strip()})")
            counted = None
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                counts = prometheus_query(prometheus_port, 'micloop_tones_total{plan="dtmf"}')
                counted = counts[0] if counts else None
                if counted == len(KEYS):
                    break
                time.sleep(0.5)
            checks.expect(counted == len(KEYS), f"Prometheus counts {counted} DTMF tones of the {len(KEYS)} sent")

            # 3. The speech's recording on the page, played.
            _, closed = job.first(lambda e: e.get("event") == "recording" and e["file"] not in recorded
                                  and e.get("duration", 0) >= SPEECH_SECONDS, 20)
            if closed is None:
                for _, e in events.lines[-60::4]:
                    if e.get("event") == "level":
                        print("   ", e.get("time"), e.get("rms_dbfs"), e.get("speech_dbfs"), e.get("noise_floor_dbfs"),
                              e.get("open_dbfs"), e.get("talking"))
            checks.expect(closed is not None, "the speech made a recording" + ("" if closed else ": " + ", ".join(
                f"{e.get('event')} {e.get('file', '')} {e.get('time')} {e.get('duration')} s" for _, e in job.lines
                if e.get("event") in ("recording", "blip", "open", "idle", "gap"))))
            if closed is not None:
                name = closed["file"]
                found = None
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline and found is None:
                    found = driver.execute_script(
                        "const n = arguments[0]; return Array.from(document.querySelectorAll('#recordings li'))"
                        ".some(li => li.textContent.includes(n));", name)
                    if not found:
                        found = None
                        time.sleep(0.05)
                checks.expect(bool(found), f"{name} is in the page's recordings")
                duration = driver.execute_async_script(
                    "const done = arguments[arguments.length - 1];"
                    "const li = Array.from(document.querySelectorAll('#recordings li'))"
                    "  .find(li => li.textContent.includes(arguments[0]));"
                    "const a = li ? li.querySelector('audio') : null; if (!a) { done(null); return; }"
                    "a.preload = 'auto'; a.addEventListener('loadedmetadata', () => {"
                    "  a.play().then(() => setTimeout(() => done([a.duration, a.currentTime]), 700),"
                    "              (e) => done([a.duration, -1])); }, { once: true });"
                    "a.load(); setTimeout(() => done([a.duration, a.currentTime]), 8000);", name)
                expected = closed["frames"] / 48000
                checks.expect(duration is not None and abs(duration[0] - expected) <= 0.01,
                              f"the page's player holds {duration[0] if duration else None} s of the "
                              f"{expected:.3f} s recording")
                checks.expect(duration is not None and duration[1] > 0, "the page's player plays it")
            if arguments.screenshot:
                # Speech again, so that the screenshot shows the talk row open.
                players.append(pulse.play(speech))
                time.sleep(1.2)
                driver.execute_script("window.scrollTo(0, 0);")
                driver.save_screenshot(arguments.screenshot)
        finally:
            if driver is not None:
                driver.quit()
            if prometheus is not None:
                prometheus.terminate()
            if job is not None:
                job.stop()
            for player in players:
                if player.poll() is None:
                    player.kill()

    # 5. The documented alerts.
    rules = subprocess.run(["promtool", "test", "rules", RULES_TEST], capture_output=True, text=True, cwd=ROOT)
    checks.expect(rules.returncode == 0, "promtool test rules passes the documented alerts"
                  + ("" if rules.returncode == 0 else ": " + (rules.stdout + rules.stderr).strip()))
    shutil.rmtree(work, ignore_errors=True)
    if checks.failures:
        print(f"station check: {len(checks.failures)} checks failed")
        if arguments.check:
            sys.exit(1)
    else:
        print("station check passed")


if __name__ == "__main__":
    main()
