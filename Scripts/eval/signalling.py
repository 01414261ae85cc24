#!/usr/bin/env python3
"""Signalling tones as encoders send them, with the answer known.

Tables from the standards (the same ones micloop's plans cite): DTMF (ITU-T
Q.23), CCIR-1 (CCIR Rec. 257, 100 ms), ZVEI1 (70 ms), EEA (40 ms) with E
as the repeat tone; CTCSS (EIA/TIA-603); the TR-BOS siren double tones.
Encoders are not exact: each call's tones are off by up to `drift` (0.5 %
by default) and its tone lengths by up to 5 %, with a random phase per tone.
"""

import numpy as np

DTMF_LOW = [697, 770, 852, 941]
DTMF_HIGH = [1209, 1336, 1477, 1633]
DTMF_KEYS = "123A456B789C*0#D"

FIVE_TONE = {
    "ccir": ([1981, 1124, 1197, 1275, 1358, 1446, 1540, 1640, 1747, 1860, 2400, 930, 2247, 991, 2110, 1055], 0.100),
    "zvei1": ([2400, 1060, 1160, 1270, 1400, 1530, 1670, 1830, 2000, 2200, 2800, 810, 970, 885, 2600, 680], 0.070),
    "eea": ([1981, 1124, 1197, 1275, 1358, 1446, 1540, 1640, 1747, 1860, 1050, 930, 2400, 991, 2110, 2247], 0.040),
}
REPEAT = 14  # "E"

CTCSS = [67.0, 69.3, 71.9, 74.4, 77.0, 79.7, 82.5, 85.4, 88.5, 91.5, 94.8, 97.4, 100.0, 103.5, 107.2,
         110.9, 114.8, 118.8, 123.0, 127.3, 131.8, 136.5, 141.3, 146.2, 151.4, 156.7, 159.8, 162.2,
         165.5, 167.9, 171.3, 173.8, 177.3, 179.9, 183.5, 186.2, 189.9, 192.8, 196.6, 199.5, 203.5,
         206.5, 210.7, 218.1, 225.7, 229.1, 233.6, 241.8, 250.3, 254.1]

# TR-BOS: after a ZVEI call, 675 Hz with a second tone for about 5 s.
SIREN = {
    "fire alarm": 1240,
    "siren test": 1860,
    "warning": 2280,
    "civil defence alarm": 825,
    "all clear": 1010,
}


def sine(frequency, seconds, rate, amplitude, rng):
    n = int(round(seconds * rate))
    return amplitude * np.sin(2 * np.pi * frequency * np.arange(n) / rate + rng.uniform(0, 2 * np.pi))


def five_tone(plan, digits, rate, amplitude, rng, drift=0.005):
    """A 5-tone call (digits 0-9), a repeated digit sent as the repeat tone."""
    table, tone = FIVE_TONE[plan]
    scale = 1 + rng.uniform(-drift, drift)
    length = tone * (1 + rng.uniform(-0.05, 0.05))
    pieces = []
    previous = None
    for digit in digits:
        index = int(digit)
        # A digit equal to the tone just sent is sent as the repeat tone.
        sent = REPEAT if index == previous else index
        previous = sent
        pieces.append(sine(table[sent] * scale, length, rate, amplitude, rng))
    return np.concatenate(pieces)


def dtmf(keys, rate, amplitude, twist_db, rng, on=0.07, off=0.07, drift=0.005):
    """DTMF keys, the high tone `twist_db` above the low one; each key `on`
    seconds (±10 %), `off` seconds between keys."""
    pieces = []
    for key in keys:
        index = DTMF_KEYS.index(key)
        seconds = on * (1 + rng.uniform(-0.1, 0.1))
        low = sine(DTMF_LOW[index // 4] * (1 + rng.uniform(-drift, drift)), seconds, rate, amplitude, rng)
        high = sine(DTMF_HIGH[index % 4] * (1 + rng.uniform(-drift, drift)), seconds, rate,
                    amplitude * 10 ** (twist_db / 20), rng)
        pieces += [low + high, np.zeros(int(off * rate))]
    return np.concatenate(pieces)


def two_tone(a, b, rate, amplitude, rng, a_seconds=1.0, b_seconds=3.0, gap=0.0):
    """A two-tone sequential page: tone A, an optional gap, then tone B."""
    return np.concatenate([sine(a, a_seconds, rate, amplitude, rng), np.zeros(int(gap * rate)),
                           sine(b, b_seconds, rate, amplitude, rng)])


def siren(name, rate, amplitude, rng, seconds=5.0):
    """A TR-BOS double tone: 675 Hz and the signal's second tone at once."""
    return sine(675, seconds, rate, amplitude, rng) + sine(SIREN[name], seconds, rate, amplitude, rng)


def random_call(rng, length=5):
    return "".join(str(d) for d in rng.integers(0, 10, length))


def random_keys(rng, low=4, high=9):
    return "".join(DTMF_KEYS[i] for i in rng.integers(0, 16, rng.integers(low, high)))
