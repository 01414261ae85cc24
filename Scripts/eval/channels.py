#!/usr/bin/env python3
"""Radio and telephone channels for testing tone decoders as users meet them.

`FMLink` sends audio over a simulated narrow-band FM link and returns what
a receiver's loudspeaker (or an SDR's demodulator, such as `rtl_fm`) gives:

  transmitter: 6 dB/octave pre-emphasis (300 Hz to 6 kHz), a deviation
  limiter (hard clip at the peak deviation) and a 3 kHz splatter filter, an
  optional CTCSS sub-tone added after the limiter;
  path: an FM carrier at complex baseband, keyed on and off, white Gaussian
  noise at a carrier-to-noise ratio measured in the receiver's IF bandwidth;
  receiver: IF filter, limiter-discriminator (which makes the clicks of FM
  below its threshold by itself), de-emphasis, and either the 300-3000 Hz
  voice filter of a radio's loudspeaker or, for an SDR pipeline, a 3 kHz
  low-pass only (the sub-tone survives); a squelch that opens on noise a
  little before the carrier and closes a little after it (the noise bursts
  around every transmission), and the receiver's volume.

`telephone` band-limits to 300-3400 Hz and passes the audio through a
codec with sox: G.711 mu-law or GSM 06.10 (full rate), at 8 kHz.

Everything is seeded: the same arguments give the same samples.
"""

import os
import subprocess
import tempfile
import wave

import numpy as np
from scipy import signal as sps

SIMULATION_RATE = 48000


def first_order(zero_hz, pole_hz, rate):
    """Bilinear (b, a) of (1 + s/wz) / (1 + s/wp), prewarped at both corners."""
    wz = 2 * rate * np.tan(np.pi * zero_hz / rate)
    wp = 2 * rate * np.tan(np.pi * pole_hz / rate)
    k = 2 * rate
    b = np.array([1 + k / wz, 1 - k / wz])
    a = np.array([1 + k / wp, 1 - k / wp])
    return b / a[0], a / a[0]


class FMLink:
    """One narrow-band FM radio link (12.5 kHz channel by default).

    `deviation` is the peak deviation in Hz the limiter allows; audio of
    amplitude 1.0 at 1 kHz deviates the carrier by `deviation` before the
    limiter. `bandwidth` is the IF bandwidth the CNR is measured in.
    """

    def __init__(self, cnr_db, seed, deviation=2500.0, bandwidth=11000.0, sdr=False):
        self.cnr_db = cnr_db
        self.deviation = deviation
        self.bandwidth = bandwidth
        self.sdr = sdr
        self.rng = np.random.default_rng(seed)
        rate = SIMULATION_RATE
        self.pre = first_order(300, 6000, rate)
        # De-emphasis is the inverse; normalised to unity gain at 1 kHz together.
        self.de = (self.pre[1], self.pre[0])
        w = np.exp(-2j * np.pi * 1000 / rate)
        gain = abs(np.polyval(self.pre[0][::-1], w) / np.polyval(self.pre[1][::-1], w))
        self.pre = (self.pre[0] / gain, self.pre[1])
        self.de = (self.de[0] * gain, self.de[1])
        self.splatter = sps.butter(4, 3000, fs=rate, output="sos")
        self.intermediate = sps.butter(6, bandwidth / 2, fs=rate, output="sos")
        if sdr:
            self.audio = sps.butter(4, 3000, fs=rate, output="sos")
        else:
            self.audio = np.vstack([sps.butter(4, 300, "highpass", fs=rate, output="sos"),
                                    sps.butter(4, 3000, fs=rate, output="sos")])

    def transmit(self, audio, ctcss=None, ctcss_ratio=0.15, lead=0.3, tail=0.2,
                 squelch_before=0.08, squelch_after=0.18, quiet=0.5, volume=0.3):
        """One transmission of `audio` (48 kHz, 1.0 = peak deviation at 1 kHz).

        The carrier comes up `lead` seconds before the audio and drops
        `tail` seconds after it; the squelch opens `squelch_before` seconds
        before the carrier and closes `squelch_after` after it; `quiet`
        seconds of closed squelch frame it. Returns (received audio, offset
        of the audio's first sample in it, in samples).
        """
        rate = SIMULATION_RATE
        n_quiet = int(quiet * rate)
        n_before = int(squelch_before * rate)
        n_lead = int(lead * rate)
        n_tail = int(tail * rate)
        n_after = int(squelch_after * rate)
        carrier_start = n_quiet + n_before
        audio_start = carrier_start + n_lead
        carrier_end = audio_start + len(audio) + n_tail
        total = carrier_end + n_after + n_quiet
        modulation = np.zeros(total)
        modulation[audio_start:audio_start + len(audio)] = audio
        modulation = sps.lfilter(*self.pre, modulation)
        modulation = np.clip(modulation, -1.0, 1.0)
        modulation = sps.sosfilt(self.splatter, modulation)
        keyed = np.zeros(total)
        keyed[carrier_start:carrier_end] = 1.0
        if ctcss is not None:
            t = np.arange(total) / rate
            modulation += ctcss_ratio * np.sin(2 * np.pi * ctcss * t + self.rng.uniform(0, 2 * np.pi))
        phase = 2 * np.pi * np.cumsum(modulation * self.deviation) / rate
        carrier = keyed * np.exp(1j * phase)
        # Noise power in the IF bandwidth is 1/CNR of the carrier's (1.0).
        sigma = np.sqrt(rate / self.bandwidth / 10 ** (self.cnr_db / 10) / 2)
        noise = sigma * (self.rng.standard_normal(total) + 1j * self.rng.standard_normal(total))
        received = sps.sosfilt(self.intermediate, carrier + noise)
        discriminated = np.angle(received[1:] * np.conj(received[:-1])) * rate / (2 * np.pi)
        demodulated = np.concatenate([[0.0], discriminated]) / self.deviation
        demodulated = sps.lfilter(*self.de, demodulated)
        demodulated = sps.sosfilt(self.audio, demodulated)
        gate = np.zeros(total)
        gate[n_quiet:carrier_end + n_after] = 1.0
        # A closed squelch still passes a little hiss from the audio stages.
        hiss = self.rng.standard_normal(total) * 1e-4
        out = np.clip(volume * demodulated * gate + hiss, -1.0, 1.0)
        return out, audio_start


def resample(samples, rate):
    """48 kHz samples at `rate` (22050 for rtl_fm's usual output, 8000 for phones)."""
    if rate == SIMULATION_RATE:
        return samples
    from math import gcd
    g = gcd(rate, SIMULATION_RATE)
    return sps.resample_poly(samples, rate // g, SIMULATION_RATE // g)


def write_wav16(path, samples, rate):
    data = np.clip(np.round(np.asarray(samples) * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(data.tobytes())


def read_wav16(path):
    with wave.open(path, "rb") as file:
        data = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2")
    return data.astype(np.float64) / 32768


def telephone(samples8k, codec):
    """8 kHz audio through a 300-3400 Hz telephone band and `codec`:
    "g711" (mu-law) or "gsm" (GSM 06.10 full rate), encoded and decoded by sox."""
    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "in.wav")
        coded = os.path.join(directory, "coded." + ("ul" if codec == "g711" else "gsm"))
        back = os.path.join(directory, "back.wav")
        write_wav16(source, samples8k, 8000)
        encode = ["-e", "mu-law", "-r", "8000", "-c", "1"] if codec == "g711" else ["-r", "8000", "-c", "1"]
        subprocess.run(["sox", "-V1", "-D", source] + encode + [coded, "sinc", "300-3400"], check=True)
        raw = ["-t", "ul", "-r", "8000", "-c", "1"] if codec == "g711" else ["-t", "gsm"]
        subprocess.run(["sox", "-V1", "-D"] + raw + [coded, "-b", "16", back], check=True)
        return read_wav16(back)
