#!/usr/bin/env python3
"""Writes the seed corpus of the FileJobFuzzer target (Fuzz/): small audio
files, written by libsndfile itself (through ctypes: no other dependency),
in every sample format it writes for WAV and at every rate of interest.

The same files every run (no randomness), so `Scripts/fuzz.sh check` is
repeatable; they are generated, not committed. Usage:

    fuzz_seeds.py DIRECTORY

Seeds:
  * WAV in each encoding libsndfile writes (u8, s16, s24, s32, float,
    double, mu-law, A-law, IMA ADPCM, MS ADPCM, GSM 6.10) at each rate in
    RATES, from 1 Hz to 2^31 - 1 Hz. A rate libsndfile refuses to write is
    written at 8000 Hz and the header's rate (and byte rate) patched to it,
    so every rate reaches the reader as a well-formed header;
  * RF64 and WAVEX 16-bit and FLAC 8/16/24-bit at the rates they hold;
  * 1 to 8, 12, 16, 64 and 255 channels (WAV s16 and float, FLAC up to 8);
  * headerless PCM in FileJobFuzzer's raw spelling ("MICLOOP-RAW:", rate,
    channels, format) for each raw format at 1000 to 768000 Hz.

Each holds a DTMF key (697 + 1209 Hz) in its first half where the rate
allows (else a tone at a seventh of the rate) and quiet noise after it:
talk starts and ends, tones are heard, loudness has blocks to gate.
"""

import ctypes
import math
import os
import struct
import sys

SF_FORMAT_WAV = 0x010000
SF_FORMAT_WAVEX = 0x130000
SF_FORMAT_FLAC = 0x170000
SF_FORMAT_RF64 = 0x220000
SFM_WRITE = 0x20

WAV_ENCODINGS = {
    "s8": 0x0001,  # FLAC only: WAV's 8-bit is unsigned
    "u8": 0x0005,
    "s16": 0x0002,
    "s24": 0x0003,
    "s32": 0x0004,
    "float": 0x0006,
    "double": 0x0007,
    "ulaw": 0x0010,
    "alaw": 0x0011,
    "ima-adpcm": 0x0012,
    "ms-adpcm": 0x0013,
    "gsm610": 0x0020,
}
WAV_SUBTYPES = [
    "u8", "s16", "s24", "s32", "float", "double", "ulaw", "alaw", "ima-adpcm", "ms-adpcm", "gsm610",
]
RATES = [
    1, 100, 1000, 3000, 8000, 44100, 48000, 192000, 768000, 2048000, 10000000, 2**31 - 1,
]
RAW_RATES = [1000, 3000, 8000, 48000, 768000]
# FileJobFuzzer's raw formats, in the order of AudioFileEncoding.allCases.
RAW_FORMATS = [("s16", "<h", 32767), ("s24", None, 8388607), ("s32", "<i", 2**31 - 1),
               ("float", "<f", 1.0)]
# The most frames a seed holds (a second, up to this): small inputs run fast.
MOST_FRAMES = 4096
FEWEST_FRAMES = 64


class SFInfo(ctypes.Structure):
    _fields_ = [
        ("frames", ctypes.c_int64),
        ("samplerate", ctypes.c_int),
        ("channels", ctypes.c_int),
        ("format", ctypes.c_int),
        ("sections", ctypes.c_int),
        ("seekable", ctypes.c_int),
    ]


sndfile = ctypes.CDLL("libsndfile.so.1")
sndfile.sf_open.restype = ctypes.c_void_p
sndfile.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SFInfo)]
sndfile.sf_writef_double.restype = ctypes.c_int64
sndfile.sf_writef_double.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.c_int64]
sndfile.sf_close.argtypes = [ctypes.c_void_p]
sndfile.sf_strerror.restype = ctypes.c_char_p
sndfile.sf_strerror.argtypes = [ctypes.c_void_p]


def frame_count(rate, channels):
    """About a second, at least FEWEST_FRAMES and at most MOST_FRAMES
    samples in all (but never under MOST_FRAMES // 256 frames)."""
    return max(MOST_FRAMES // 256, min(max(rate, FEWEST_FRAMES), MOST_FRAMES // channels))


def signal(rate, frames, channels):
    """Interleaved samples in [-1, 1]: a DTMF key (or a tone a seventh of
    the rate) at -10 dBFS for the first half, noise at -40 dBFS after."""
    tones = [697.0, 1209.0] if rate > 2 * 1209 * 1.2 else [rate / 7]
    noise_state = 12345
    samples = []
    for index in range(frames):
        for channel in range(channels):
            if index < frames // 2:
                value = sum(
                    0.16 * math.sin(2 * math.pi * f * index / rate + channel) for f in tones)
            else:
                noise_state = (noise_state * 1103515245 + 12345) % 2**31
                value = 0.01 * (noise_state / 2**30 - 1)
            samples.append(value)
    return samples


def write(path, major, encoding, rate, channels):
    """Writes a file with libsndfile; False when it refuses the layout."""
    frames = frame_count(rate, channels)
    info = SFInfo(0, rate, channels, major | WAV_ENCODINGS[encoding], 0, 0)
    handle = sndfile.sf_open(path.encode(), SFM_WRITE, ctypes.byref(info))
    if not handle:
        if os.path.exists(path):
            os.unlink(path)
        return False
    data = signal(rate, frames, channels)
    buffer = (ctypes.c_double * len(data))(*data)
    written = sndfile.sf_writef_double(handle, buffer, frames)
    sndfile.sf_close(handle)
    if written != frames:
        os.unlink(path)
        return False
    return True


def patch_wav_rate(path, rate):
    """Sets the sample rate (and byte rate, from the block size) in the
    `fmt ` chunk of a RIFF or RF64 WAV."""
    with open(path, "r+b") as file:
        data = bytearray(file.read())
        position = 12
        while position + 8 <= len(data):
            chunk, size = data[position:position + 4], struct.unpack_from("<I", data, position + 4)[0]
            if chunk == b"fmt ":
                block_align = struct.unpack_from("<H", data, position + 8 + 12)[0]
                struct.pack_into("<I", data, position + 8 + 4, rate)
                struct.pack_into("<I", data, position + 8 + 8, min(2**32 - 1, rate * block_align))
                file.seek(0)
                file.write(data)
                return
            position += 8 + size + (size & 1)
    raise RuntimeError(f"{path}: no fmt chunk")


def wav_seed(directory, major, prefix, encoding, rate, channels):
    """A WAV at `rate`, patched from 8000 Hz when libsndfile will not
    write that rate; the path written, or None if the layout is refused."""
    name = f"{prefix}-{encoding}-{channels}ch-{rate}hz.wav"
    path = os.path.join(directory, name)
    if write(path, major, encoding, rate, channels):
        return name
    if not write(path, major, encoding, 8000, channels):
        return None
    patch_wav_rate(path, rate)
    return name + " (rate patched)"


def raw_seed(directory, format_index, rate, channels):
    name, packing, full_scale = RAW_FORMATS[format_index]
    frames = frame_count(rate, channels)
    body = bytearray()
    for value in signal(rate, frames, channels):
        if packing is None:
            body += int(value * full_scale).to_bytes(3, "little", signed=True)
        elif packing == "<f":
            body += struct.pack(packing, value)
        else:
            body += struct.pack(packing, int(value * full_scale))
    header = b"MICLOOP-RAW:" + struct.pack("<I", rate - 1000) + bytes([channels - 1, format_index])
    file_name = f"raw-{name}-{channels}ch-{rate}hz"
    with open(os.path.join(directory, file_name), "wb") as file:
        file.write(header + body)
    return file_name


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fuzz_seeds.py DIRECTORY")
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    written, refused = [], []

    def note(name, what):
        (written if name else refused).append(name or what)

    for encoding in WAV_SUBTYPES:
        for rate in RATES:
            note(wav_seed(directory, SF_FORMAT_WAV, "wav", encoding, rate, 1),
                 f"wav {encoding} {rate} Hz")
    for rate in RATES:
        note(wav_seed(directory, SF_FORMAT_RF64, "rf64", "s16", rate, 2), f"rf64 s16 {rate} Hz")
    for channels in [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 255]:
        for encoding in ["s16", "float"]:
            note(wav_seed(directory, SF_FORMAT_WAV, "wav", encoding, 48000, channels),
                 f"wav {encoding} {channels} channels")
        note(wav_seed(directory, SF_FORMAT_WAV, "wav", "s16", 3000, channels),
             f"wav s16 {channels} channels at 3000 Hz")
    for channels in [2, 6]:
        note(wav_seed(directory, SF_FORMAT_WAVEX, "wavex", "s24", 48000, channels),
             f"wavex s24 {channels} channels")
    for encoding in ["ima-adpcm", "ms-adpcm"]:
        note(wav_seed(directory, SF_FORMAT_WAV, "wav", encoding, 8000, 2), f"wav {encoding} stereo")
    # FLAC holds rates up to 2^20 - 1 Hz; libsndfile writes up to 655350 Hz.
    for encoding in ["s8", "s16", "s24"]:
        for rate in [rate for rate in RATES if rate <= 655350] + [655350]:
            name = f"flac-{encoding}-1ch-{rate}hz.flac"
            note(name if write(os.path.join(directory, name), SF_FORMAT_FLAC, encoding, rate, 1)
                 else None, f"flac {encoding} {rate} Hz")
    for channels in range(2, 9):
        name = f"flac-s16-{channels}ch-44100hz.flac"
        note(name if write(os.path.join(directory, name), SF_FORMAT_FLAC, "s16", 44100, channels)
             else None, f"flac s16 {channels} channels")
    for index in range(len(RAW_FORMATS)):
        for rate in RAW_RATES:
            for channels in [1, 2]:
                note(raw_seed(directory, index, rate, channels), "")
    patched = sum(1 for name in written if name.endswith("(rate patched)"))
    print(f"fuzz seeds: {len(written)} files in {directory} ({patched} with the rate patched in)")
    if refused:
        print("fuzz seeds: libsndfile does not write: " + ", ".join(refused))


if __name__ == "__main__":
    main()
