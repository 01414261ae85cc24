"""A private PulseAudio server with the null sinks "mic" and "spk", as
Scripts/virtual-devices.sh starts one for the shell: whatever is played to
"mic" is captured from pulse:mic.monitor; what micloop plays to pulse:spk,
pulse:spk.monitor hears. For the Python checks and benchmarks:

    with VirtualDevices() as devices:
        subprocess.run([...], env=devices.env)
"""
import os
import shutil
import subprocess
import tempfile
import time


class VirtualDevices:
    def __enter__(self):
        self.runtime = tempfile.mkdtemp(prefix="micloop-pulse.")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.runtime, PULSE_RUNTIME_PATH=self.runtime + "/pulse")
        self.server = subprocess.Popen(
            ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--log-target=stderr",
             "--load=module-native-protocol-unix",
             "--load=module-null-sink sink_name=mic rate=48000 channels=1",
             "--load=module-null-sink sink_name=spk rate=48000 channels=1"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["pactl", "info"], env=self.env, capture_output=True).returncode == 0:
                return self
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError("the private PulseAudio server did not start")

    def play(self, path, sink="mic"):
        """Starts playing the file `path` into `sink`; returns the player."""
        return subprocess.Popen(["paplay", f"--device={sink}", path], env=self.env)

    def __exit__(self, *exc):
        self.server.kill()
        self.server.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)
