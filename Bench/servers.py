"""Loopback at the lowest buffering each sound server allows: private JACK
(dummy backend) and PipeWire servers, reached through their ALSA plugins,
and the CPU floor of those plugins (arecord | aplay on the same devices
and period) beside micloop's loopback."""

import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPEWIRE_ALSA = os.path.join(ROOT, ".build", "pipewire-alsa")


class JackServer:
    """jackd -d dummy at `period` frames, with an ALSA configuration whose
    `jackloop` device uses the dummy's capture and playback ports."""

    def __init__(self, period, log=False):
        self.period = period
        self.keeps_log = log

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="micloop-bench-jack.")
        conf = os.path.join(self.dir, "asound.conf")
        with open(conf, "w") as f:
            f.write("pcm.jackloop {\n type jack\n playback_ports { 0 system:playback_1 }\n"
                    " capture_ports { 0 system:capture_1 }\n}\n"
                    "pcm.jackself {\n type jack\n playback_ports { 0 system:playback_1 }\n"
                    " capture_ports { 0 \"\" }\n}\n")
        # One name per run (others run servers on the machine too), left clean
        # by SIGTERM: JACK's shared-memory registry holds at most 8 server names.
        name = f"micloop-bench-{os.getpid()}"
        self.env = dict(os.environ, JACK_NO_AUDIO_RESERVATION="1", JACK_DEFAULT_SERVER=name,
                        ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:" + conf)
        output = open(os.path.join(self.dir, "jackd.log"), "w") if self.keeps_log else subprocess.DEVNULL
        self.server = subprocess.Popen(["jackd", "-R", "-P", "80", "-n", name, "-d", "dummy", "-r", "48000", "-p",
                                        str(self.period)], env=self.env, stdout=output,
                                       stderr=subprocess.STDOUT)
        for _ in range(50):
            if subprocess.run(["jack_lsp"], env=self.env, capture_output=True).returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError("the private JACK server did not start")

    def __exit__(self, *exc):
        # SIGTERM lets jackd leave the registry clean.
        self.server.terminate()
        try:
            self.server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        subprocess.run(["rm", "-rf", self.dir])

    def devices(self):
        return "jackloop", "jackloop", self.env

    def log(self):
        """What jackd printed (with `log=True`)."""
        with open(os.path.join(self.dir, "jackd.log")) as f:
            return f.read()

    def connect(self, output, input_prefix):
        """Connects the first port starting with `output` to the first
        starting with `input_prefix`, waiting up to 10 s for both."""
        for _ in range(100):
            ports = subprocess.run(["jack_lsp"], env=self.env, capture_output=True, text=True).stdout.split("\n")
            source = next((p for p in ports if p.startswith(output)), None)
            destination = next((p for p in ports if p.startswith(input_prefix)), None)
            if source and destination and subprocess.run(["jack_connect", source, destination], env=self.env,
                                                         capture_output=True).returncode == 0:
                return True
            time.sleep(0.1)
        return False

    def round_trips(self, micloop):
        """(micloop latency frames, jack_iodelay frames): micloop's output
        port wired to its own input, and jack_iodelay's likewise."""
        ours = None
        # A probe whose ports were wired after its chirps went out finds
        # nothing: try again (it happened once in a run after a long loop).
        for _ in range(3):
            probe = subprocess.Popen([micloop, "latency", "-D", "jackself", "--period", str(self.period),
                                      "--periods", "2", "--json"], env=self.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
            self.connect(f"micloop.P.{probe.pid}.", f"micloop.C.{probe.pid}.")
            out, _ = probe.communicate(timeout=30)
            ours = next((json.loads(line)["round_trip_frames"] for line in out.splitlines()
                         if line.startswith("{")), None)
            if ours is not None:
                break
        log = os.path.join(self.dir, "iodelay.txt")
        with open(log, "w") as f:
            iodelay = subprocess.Popen(["stdbuf", "-oL", "jack_iodelay"], env=self.env, stdout=f,
                                       stderr=subprocess.DEVNULL)
        theirs = None
        if self.connect("jack_delay:out", "jack_delay:in"):
            for _ in range(100):
                time.sleep(0.1)
                lines = [line for line in open(log).read().replace("\r", "\n").split("\n")
                         if "total roundtrip latency" in line]
                if lines:
                    theirs = float(lines[0].split()[0])
                    break
        iodelay.terminate()
        iodelay.wait()
        return ours, theirs


class PipeWireServer:
    """pipewire + wireplumber on a private session bus with null sinks "mic"
    and "spk", the graph's quantum forced to `period` frames."""

    def __init__(self, period):
        self.period = period

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="micloop-bench-pw.")
        runtime = os.path.join(self.dir, "runtime")
        os.mkdir(runtime, 0o700)
        plugins = os.path.join(PIPEWIRE_ALSA, "usr/lib/x86_64-linux-gnu/alsa-lib")
        with open(os.path.join(PIPEWIRE_ALSA, "usr/share/alsa/alsa.conf.d/50-pipewire.conf")) as f:
            pcm = f.read()
        conf = os.path.join(self.dir, "asound.conf")
        with open(conf, "w") as f:
            f.write(f'pcm_type.pipewire {{ lib "{plugins}/libasound_module_pcm_pipewire.so" }}\n'
                    f'ctl_type.pipewire {{ lib "{plugins}/libasound_module_ctl_pipewire.so" }}\n' + pcm)
        bus = os.path.join(runtime, "bus")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=runtime, DBUS_SESSION_BUS_ADDRESS="unix:path=" + bus,
                        ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:" + conf,
                        PIPEWIRE_PROPS="{ stream.capture.sink=true }")
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes = [subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile",
                                            "--address=unix:path=" + bus], env=self.env, **quiet)]
        self._wait(lambda: os.path.exists(bus))
        self.processes.append(subprocess.Popen(["chrt", "-r", "80", "pipewire"], env=self.env, **quiet))
        self._wait(lambda: subprocess.run(["pw-cli", "info", "0"], env=self.env, capture_output=True)
                   .returncode == 0)
        self.processes.append(subprocess.Popen(["wireplumber"], env=self.env, **quiet))
        for sink in ("mic", "spk"):
            subprocess.run(["pw-cli", "create-node", "adapter",
                            f"{{ factory.name=support.null-audio-sink node.name={sink} media.class=Audio/Sink "
                            "audio.position=[MONO] audio.rate=48000 object.linger=true }"],
                           env=self.env, capture_output=True)
        self._wait(lambda: b"spk" in subprocess.run(["wpctl", "status"], env=self.env,
                                                     capture_output=True).stdout)
        subprocess.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", str(self.period)],
                       env=self.env, capture_output=True)
        return self

    def _wait(self, ready):
        for _ in range(50):
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError("the private PipeWire server did not start")

    def __exit__(self, *exc):
        for process in reversed(self.processes):
            process.kill()
            process.wait()
        subprocess.run(["rm", "-rf", self.dir])

    def devices(self):
        return "pipewire:NODE=mic", "pipewire:NODE=spk", self.env

    def round_trips(self, micloop):
        """(micloop latency frames through the spk sink and its monitor, None)."""
        out = subprocess.run([micloop, "latency", "--playback", "pipewire:NODE=spk", "--capture",
                              "pipewire:NODE=spk", "--period", str(self.period), "--periods", "2", "--json"],
                             env=self.env, capture_output=True, text=True, timeout=30).stdout
        return next((json.loads(line)["round_trip_frames"] for line in out.splitlines()
                     if line.startswith("{")), None), None


def servers_section(micloop, work, seconds, run_with_usage):
    tone = os.path.join(work, "servers-tone.wav")
    subprocess.run(["sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", tone, "synth",
                    str(seconds * 8 + 60), "sine", "1000", "vol", "0.25"], check=True)
    ladders = [("JACK (dummy backend)", JackServer, [32, 64, 128]),
               ("PipeWire", PipeWireServer, [64, 128, 256, 512])]
    rows = []
    for label, server_type, periods in ladders:
        found = None
        for period in periods:
            with server_type(period) as server:
                capture, playback, env = server.devices()
                feeder = None
                if server_type is PipeWireServer:
                    feeder = subprocess.Popen(["aplay", "-q", "-D", "pipewire:NODE=mic", tone], env=env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(1)
                time.sleep(1)
                command = [micloop, "loopback", "--json", "--capture", capture, "--playback", playback,
                           "--period", str(period), "--periods", "2", "--duration", str(seconds)]
                cpu, _, out, _, status = run_with_usage(command, env)
                xruns = out.count('"event":"xrun"')
                if status == 0 and xruns == 0:
                    floor = plugin_floor(capture, playback, period, seconds, env, run_with_usage)
                    found = (period, cpu, floor) + server.round_trips(micloop)
                if feeder:
                    feeder.kill()
                    feeder.wait()
            if found:
                break
        rows.append((label, found))
    lines = [
        "## Loopback at each sound server's limit",
        "",
        f"Private servers started for the run, 48 kHz mono, {seconds} s per try, smallest period first, "
        "2 periods per buffer; a setting counts when the whole run has no xrun. JACK: `jackd -R -P 80 -d dummy -p P` (its real-time threads above micloop's audio thread at 70, as a sound card's interrupt would be) "
        "and the ALSA `jack` plugin on the dummy's ports. PipeWire: `pipewire` + `wireplumber` with two null "
        "sinks (the server at real-time priority 80), the graph's quantum forced to P (`clock.force-quantum`), micloop capturing `mic`'s monitor "
        "and playing to `spk` through the `pipewire` ALSA plugin. The plugin floor is `arecord | aplay` on the "
        "same devices and period for the same time: the CPU any ALSA program pays that server's plugin.",
        "",
        "| server | lowest period | micloop buffering ms | micloop CPU % | `arecord \\| aplay` CPU % | micloop / floor "
        "| `micloop latency` round trip | `jack_iodelay` |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, found in rows:
        if not found:
            lines.append(f"| {label} | none clean | - | - | - | - | - | - |")
            continue
        period, cpu, floor, ours, theirs = found
        ratio = f"{cpu / floor:.2f}" if floor else "-"
        frames = lambda n: "-" if n is None else f"{n:.0f} frames ({n / 48:.2f} ms)"
        lines.append(f"| {label} | 2 × {period} | {2 * 2 * period / 48:.1f} | {cpu / seconds * 100:.2f} | "
                     f"{floor / seconds * 100:.2f} | {ratio} | {frames(ours)} | {frames(theirs)} |")
    lines += ["", "Round trips at the same period: `micloop latency` plays chirps into its own playback and finds "
              "them in its capture. On JACK its output port is wired to its input port (`jack_connect`), as "
              "`jack_iodelay`'s are for the JACK column: JACK's own loop is one cycle; the ALSA `jack` plugin "
              "adds one more between the capture it hands over and the playback it takes. On PipeWire the loop "
              "is the `spk` sink and its monitor.",
              "", "These servers run without a sound card here, so the < 1 % CPU goal for loopback applies to "
              "`hw:` devices, which this machine has not; through a server's plugin the floor above is what "
              "any ALSA client pays.", ""]
    return lines


def plugin_floor(capture, playback, period, seconds, env, run_with_usage):
    """CPU seconds of `arecord | aplay` on the same devices and period."""
    script = (f"arecord -q -D {capture} -r 48000 -c 1 -f FLOAT_LE --period-size={period} "
              f"--buffer-size={2 * period} -d {seconds} -t raw | aplay -q -D {playback} -r 48000 -c 1 "
              f"-f FLOAT_LE --period-size={period} --buffer-size={2 * period} -t raw")
    cpu, _, _, _, status = run_with_usage(["bash", "-c", script], env)
    return cpu if status == 0 else None
