#!/usr/bin/env python3
"""Loudness of audio files by libebur128 (through pyebur128): the oracle
micloop's loudness is checked against.

For each file: one JSON line with integrated loudness (LUFS), loudness
range (LU) and the largest true peak of any channel (dBTP), as
`micloop meter --loudness --json` names them. sox decodes the file.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pyebur128 as ebur128


def measure(path):
    channels = int(subprocess.run(["soxi", "-c", path], capture_output=True, text=True, check=True).stdout)
    rate = int(float(subprocess.run(["soxi", "-r", path], capture_output=True, text=True, check=True).stdout))
    raw = subprocess.run(["sox", path, "-t", "f32", "-"], capture_output=True, check=True).stdout
    samples = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
    mode = ebur128.MeasurementMode.MODE_I | ebur128.MeasurementMode.MODE_LRA | ebur128.MeasurementMode.MODE_TRUE_PEAK
    state = ebur128.R128State(channels, rate, mode)
    state.add_frames(samples, len(samples) // channels)
    peak = max(ebur128.get_true_peak(state, c) for c in range(channels))
    return {
        "file": path,
        "integrated_lufs": ebur128.get_loudness_global(state),
        "loudness_range_lu": ebur128.get_loudness_range(state),
        "true_peak_dbtp": 20 * math.log10(peak) if peak > 0 else None,
    }


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps(measure(path)))
