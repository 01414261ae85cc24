#!/usr/bin/env python3
"""Impulse responses of three simulated rooms, from a speaker to a microphone.

Writes Tests/Fixtures/rooms/{living,office,hall}.wav (48 kHz, mono, 32-bit
float) and prints each room's maximum stable gain. The output is
deterministic: the same files, bit for bit, on every run with the same
NumPy.

How a response is made:

* image sources of a shoebox room (Allen and Berkley): every reflection
  order that arrives within the kept length; each image's pressure falls
  as 1/distance and loses sqrt(1 - alpha) at every wall it reflects from,
  alpha the same for every wall and frequency, from the room's RT60 by
  Sabine's formula (alpha = 0.161 V / (S RT60));
* each image placed at its exact (fractional) delay with a Hann-windowed
  sinc of 32 taps;
* air absorption: the response is cut into 256-sample frames (Hann, 50 %
  overlap) and each frame's spectrum attenuated by the air's absorption
  over the distance sound travelled by its time (ISO 9613-1 at 20 C, 50 %
  relative humidity: 0.005 dB/m at 1 kHz, 0.077 dB/m at 8 kHz);
* the speaker and microphone together: a 2nd-order high-pass at 100 Hz,
  a 2nd-order low-pass at 10 kHz and a +6 dB presence peak (Q 2) at
  2.5 kHz, so the loop's weakest margin falls where real howls live
  (200 Hz - 5 kHz) instead of at the top of the band;
* scale: the direct sound at 1 m has the amplitude `SENSITIVITY`;
* kept length: the room's RT60 (the tail 60 dB down), the last 20 %
  faded out with a half cosine. Longer tails change the maximum stable
  gain by less than 0.1 dB and would make the files larger.

The maximum stable gain printed is the loop's margin where its phase
crosses zero, the loop being the response delayed by the live job's
buffering (768 frames: a 256-frame period plus two periods of playback
pre-fill); micloop's own computation (`LoopStability` in SignalDSP, which
interpolates between grid points) agrees within 0.05 dB. Each room's
placement is the median of nine drawn at random (seeded) by the gain that
eight ideal notches would add, so the rooms are neither the easiest nor
the hardest of their kind. Usage: .build/venv/bin/python Scripts/eval/room_impulse_responses.py [--output DIR]
"""

import argparse
import os
import wave

import numpy as np
from scipy import signal

RATE = 48_000
SPEED_OF_SOUND = 343.0
SENSITIVITY = 0.125
SINC_TAPS = 32
LOOP_DELAY = 768

# name: (dimensions m, RT60 s, speaker-to-microphone distance m)
ROOMS = {
    "living": ((5.0, 4.0, 2.7), 0.4, 1.0),
    "office": ((6.0, 5.0, 3.0), 0.6, 2.0),
    "hall": ((12.0, 9.0, 5.0), 1.0, 3.0),
}
# Placements drawn per room; the one kept is the median by the ceiling below.
PLACEMENTS = 9
SEED = 2024
# Heights (m) of the speaker and the microphone; both stay 0.5 m from any wall.
HEIGHTS = (0.8, 1.8)
WALL_CLEARANCE = 0.5

# Air absorption in dB per metre (ISO 9613-1, 20 C, 50 % RH) at these frequencies.
AIR_FREQUENCIES = np.array([63, 125, 250, 500, 1000, 2000, 4000, 8000, 16000, 24000], float)
AIR_DB_PER_METRE = np.array(
    [0.0001, 0.0004, 0.0011, 0.0028, 0.0050, 0.0090, 0.0229, 0.0765, 0.26, 0.52])


def image_sources(dimensions, rt60, speaker, microphone, length):
    """Delays (samples) and amplitudes of every image source within `length` samples."""
    dims = np.array(dimensions)
    volume = np.prod(dims)
    surface = 2 * (dims[0] * dims[1] + dims[0] * dims[2] + dims[1] * dims[2])
    alpha = min(0.99, 0.161 * volume / (surface * rt60))
    beta = np.sqrt(1 - alpha)
    reach = length / RATE * SPEED_OF_SOUND
    delays, amplitudes = [], []
    # Per axis: the image coordinate and its number of wall reflections.
    axes = []
    for axis in range(3):
        span = int(np.ceil(reach / (2 * dims[axis]))) + 1
        coordinates, reflections = [], []
        for n in range(-span, span + 1):
            for mirrored in (0, 1):
                position = 2 * n * dims[axis] + (1 - 2 * mirrored) * speaker[axis]
                coordinates.append(position - microphone[axis])
                reflections.append(abs(2 * n - mirrored) if mirrored else abs(2 * n))
        axes.append((np.array(coordinates), np.array(reflections)))
    (x, rx), (y, ry), (z, rz) = axes
    for i in range(len(x)):
        dx2 = x[i] ** 2
        if dx2 > reach ** 2:
            continue
        distance = np.sqrt(dx2 + y[:, None] ** 2 + z[None, :] ** 2)
        order = rx[i] + ry[:, None] + rz[None, :]
        keep = distance < reach
        delays.append(distance[keep] / SPEED_OF_SOUND * RATE)
        amplitudes.append(SENSITIVITY * beta ** order[keep] / distance[keep])
    return np.concatenate(delays), np.concatenate(amplitudes)


def place(delays, amplitudes, length):
    """Sums every image as a windowed sinc at its fractional delay."""
    response = np.zeros(length + SINC_TAPS)
    half = SINC_TAPS // 2
    whole = np.floor(delays).astype(int)
    fraction = delays - whole
    for tap in range(SINC_TAPS):
        offset = tap - half + 1  # sample relative to floor(delay): -15 ... 16
        t = offset - fraction
        window = 0.5 + 0.5 * np.cos(np.pi * t / (half + 1))
        weight = np.sinc(t) * window
        index = whole + offset
        valid = (index >= 0) & (index < length)
        np.add.at(response, index[valid], amplitudes[valid] * weight[valid])
    return response[:length]


def absorb_air(response):
    """Attenuates each 256-sample frame by the air over the distance travelled by its time."""
    frame = 256
    hop = frame // 2
    window = np.hanning(frame + 1)[:frame]  # periodic: overlaps add to one at 50 %
    padded = np.concatenate([np.zeros(hop), response, np.zeros(frame)])
    out = np.zeros_like(padded)
    frequencies = np.fft.rfftfreq(frame, 1 / RATE)
    per_metre = np.interp(np.log(np.maximum(frequencies, 20)), np.log(AIR_FREQUENCIES),
                          AIR_DB_PER_METRE)
    for begin in range(0, len(padded) - frame, hop):
        centre_seconds = (begin + frame / 2 - hop) / RATE
        distance = max(0.0, centre_seconds) * SPEED_OF_SOUND
        spectrum = np.fft.rfft(padded[begin:begin + frame] * window)
        spectrum *= 10 ** (-per_metre * distance / 20)
        out[begin:begin + frame] += np.fft.irfft(spectrum, frame)
    return out[hop:hop + len(response)]


def transducers(response):
    """The speaker's and microphone's response: band 100 Hz - 10 kHz, +6 dB at 2.5 kHz."""
    high = signal.butter(2, 100, "highpass", fs=RATE, output="sos")
    low = signal.butter(2, 10_000, "lowpass", fs=RATE, output="sos")
    # Presence peak (RBJ peaking EQ).
    a = 10 ** (6 / 40)
    w = 2 * np.pi * 2500 / RATE
    alpha = np.sin(w) / (2 * 2.0)
    b = np.array([1 + alpha * a, -2 * np.cos(w), 1 - alpha * a])
    den = np.array([1 + alpha / a, -2 * np.cos(w), 1 - alpha / a])
    out = signal.sosfilt(high, response)
    out = signal.sosfilt(low, out)
    return signal.lfilter(b / den[0], den / den[0], out)


def room_response(dimensions, rt60, speaker, microphone):
    length = int(round(rt60 * RATE))
    delays, amplitudes = image_sources(dimensions, rt60, speaker, microphone, length)
    response = place(delays, amplitudes, length)
    response = absorb_air(response)
    response = transducers(response)
    fade = int(length * 0.2)
    response[-fade:] *= 0.5 + 0.5 * np.cos(np.pi * np.arange(fade) / fade)
    return response.astype(np.float32)


def loop_spectrum(response, delay=LOOP_DELAY, size=1 << 21):
    loop = np.zeros(size)
    loop[delay:delay + len(response)] = response
    return np.fft.rfft(loop)


def maximum_stable_gain_of(spectrum):
    """Margin (dB) and frequency where the loop's phase crosses zero with the largest gain."""
    size = 2 * (len(spectrum) - 1)
    im = spectrum.imag
    crossing = np.nonzero((np.sign(im[:-1]) != np.sign(im[1:])) & (spectrum.real[:-1] > 0))[0]
    magnitude = np.abs(spectrum)
    gains = np.maximum(magnitude[crossing], magnitude[crossing + 1])
    best = np.argmax(gains)
    return -20 * np.log10(gains[best]), crossing[best] * RATE / size


def maximum_stable_gain(response):
    return maximum_stable_gain_of(loop_spectrum(response))


def ideal_notch_ceiling(response, notches=8, octaves=0.1, depth=15):
    """The gain `notches` ideal notches add: each placed exactly where the
    loop's margin is smallest, an RBJ peaking cut of `depth` dB, `octaves`
    wide (as in van Waterschoot and Moonen's oracle comparisons)."""
    spectrum = loop_spectrum(response, size=1 << 20)
    size = 2 * (len(spectrum) - 1)
    w = 2 * np.pi * np.arange(len(spectrum)) / size
    z = np.exp(-1j * w)
    base, _ = maximum_stable_gain_of(spectrum)
    for _ in range(notches):
        _, frequency = maximum_stable_gain_of(spectrum)
        w0 = 2 * np.pi * frequency / RATE
        a = 10 ** (-depth / 40)
        alpha = np.sin(w0) * np.sinh(np.log(2) / 2 * octaves * w0 / np.sin(w0))
        b = [1 + alpha * a, -2 * np.cos(w0), 1 - alpha * a]
        den = [1 + alpha / a, -2 * np.cos(w0), 1 - alpha / a]
        spectrum = spectrum * (b[0] + b[1] * z + b[2] * z * z) / (den[0] + den[1] * z + den[2] * z * z)
    return maximum_stable_gain_of(spectrum)[0] - base


def placements(dimensions, distance, rng):
    """Speaker and microphone positions `distance` apart, clear of the walls."""
    dims = np.array(dimensions)
    low = np.array([WALL_CLEARANCE, WALL_CLEARANCE, HEIGHTS[0]])
    high = np.array([dims[0] - WALL_CLEARANCE, dims[1] - WALL_CLEARANCE, HEIGHTS[1]])
    while True:
        speaker = rng.uniform(low, high)
        direction = rng.normal(size=3)
        microphone = speaker + distance * direction / np.linalg.norm(direction)
        if np.all(microphone >= low) and np.all(microphone <= high):
            return speaker, microphone


def write_float_wav(path, samples):
    """A 32-bit float WAV (format 3, with the fact chunk the format asks for)."""
    data = samples.astype("<f4").tobytes()
    header = b"".join([
        b"RIFF", (4 + 26 + 12 + 8 + len(data)).to_bytes(4, "little"), b"WAVE",
        b"fmt ", (18).to_bytes(4, "little"), (3).to_bytes(2, "little"), (1).to_bytes(2, "little"),
        RATE.to_bytes(4, "little"), (RATE * 4).to_bytes(4, "little"), (4).to_bytes(2, "little"),
        (32).to_bytes(2, "little"), (0).to_bytes(2, "little"),
        b"fact", (4).to_bytes(4, "little"), len(samples).to_bytes(4, "little"),
        b"data", len(data).to_bytes(4, "little"),
    ])
    with open(path, "wb") as f:
        f.write(header + data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Fixtures", "rooms"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    rng = np.random.default_rng(SEED)
    for name, (dimensions, rt60, distance) in ROOMS.items():
        drawn = []
        for _ in range(PLACEMENTS):
            speaker, microphone = placements(dimensions, distance, rng)
            response = room_response(dimensions, rt60, speaker, microphone)
            drawn.append((ideal_notch_ceiling(response), speaker, microphone, response))
        drawn.sort(key=lambda entry: entry[0])
        ceilings = ", ".join(f"{entry[0]:.1f}" for entry in drawn)
        ceiling, speaker, microphone, response = drawn[len(drawn) // 2]
        write_float_wav(os.path.join(args.output, f"{name}.wav"), response)
        gain, frequency = maximum_stable_gain(response)
        print(f"{name}: {dimensions[0]:g} x {dimensions[1]:g} x {dimensions[2]:g} m, RT60 {rt60} s, "
              f"speaker at ({', '.join(f'{v:.2f}' for v in speaker)}) m, microphone at "
              f"({', '.join(f'{v:.2f}' for v in microphone)}) m ({distance:g} m apart), "
              f"{len(response)} samples")
        print(f"  maximum stable gain {gain:+.2f} dB at {frequency:.1f} Hz; 8 ideal 1/10-octave "
              f"notches add {ceiling:.1f} dB (placements drawn: {ceilings})")


if __name__ == "__main__":
    main()
