"""``tf.audio``: DecodeWav and EncodeWav, 16-bit PCM WAV files as float32 samples in [-1, 1).

The reader is TensorFlow's: a RIFF/WAVE file whose format chunk says 16-bit PCM (a few kinds
of padding chunk may come first), one data chunk; every size is checked against the bytes
there are before anything is allocated.  Neither op has a gradient.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import array_bytes
from ..framework.errors import InvalidArgumentError
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .math_ops import check_dtype

__all__ = ["decode_wav", "encode_wav"]


class DecodeWavResult(NamedTuple):
    """What `decode_wav` gives, as TensorFlow's ``DecodeWav`` op returns it."""

    audio: object
    sample_rate: object


_SKIPPED_CHUNKS = frozenset(
    {b"JUNK", b"bext", b"iXML", b"qlty", b"mext", b"levl", b"link", b"axml"}
)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise ValueError("Data too short when trying to read string")
        piece = self.data[self.at : self.at + size]
        self.at += size
        return piece

    def expect(self, text: bytes) -> None:
        found = self.take(len(text))
        if found != text:
            raise ValueError(f"Header mismatch: Expected {text.decode()} but found {found!r}")

    def value(self, form: str) -> int:
        return struct.unpack("<" + form, self.take(struct.calcsize(form)))[0]


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """The samples ``[frames, channels]`` (float32) and sample rate of a 16-bit PCM WAV."""
    reader = _Reader(data)
    reader.expect(b"RIFF")
    reader.value("I")
    reader.expect(b"WAVE")
    chunk = reader.take(4)
    while chunk != b"fmt ":
        if chunk not in _SKIPPED_CHUNKS:
            raise ValueError(f"Unexpected field {chunk!r}")
        reader.take(reader.value("I"))
        chunk = reader.take(4)
    format_size = reader.value("I")
    if format_size not in (16, 18):
        raise ValueError(f"Bad format chunk size for WAV: Expected 16 or 18, but got {format_size}")
    audio_format = reader.value("H")
    if audio_format != 1:
        raise ValueError(f"Bad audio format for WAV: Expected 1 (PCM), but got {audio_format}")
    channels = reader.value("H")
    if channels < 1:
        raise ValueError(f"Bad number of channels for WAV: Expected at least 1, but got {channels}")
    rate = reader.value("I")
    per_second = reader.value("I")
    per_frame = reader.value("H")
    bits = reader.value("H")
    if bits != 16:
        raise ValueError(f"Can only read 16-bit WAV files, but received {bits}")
    if per_frame != (bits * channels + 7) // 8:
        raise ValueError(
            f"Bad bytes per sample in WAV header: Expected {(bits * channels + 7) // 8} but got "
            f"{per_frame}"
        )
    if per_second != per_frame * rate:
        raise ValueError(
            f"Bad bytes per second in WAV header: Expected {per_frame * rate} but got "
            f"{per_second} (sample_rate={rate}, bytes_per_sample={per_frame})"
        )
    if format_size == 18:
        reader.at += 2
    samples = None
    while reader.at < len(data):
        chunk = reader.take(4)
        size = reader.value("I")
        if size > 2**31 - 1:
            raise ValueError(f"WAV data chunk {chunk!r} is too large: {size} bytes")
        if chunk != b"data":
            reader.at += size
            continue
        if samples is not None:
            raise ValueError("More than one data chunk found in WAV")
        frames = size // per_frame
        body = reader.take(2 * frames * channels)
        samples = np.frombuffer(body, "<i2").astype(np.float32) * np.float32(1 / 32768)
        samples = samples.reshape(frames, channels)
    if samples is None:
        raise ValueError("No data chunk found in WAV")
    return samples, rate


def write_wav(audio: np.ndarray, rate: int) -> bytes:
    """``audio`` (``[frames, channels]`` floats) as a 16-bit PCM WAV at ``rate``."""
    frames, channels = audio.shape
    if not 0 < rate < 2**32:
        raise ValueError(f"sample_rate must be in (0, 2^32), got: {rate}")
    if not 0 < channels < 2**16:
        raise ValueError(f"num_channels must be in (0, 2^16), got: {channels}")
    data_size = frames * channels * 2
    if 44 + data_size > 2**32 - 1:
        raise ValueError("Provided channels and frames cannot be encoded as a WAV.")
    scaled = np.round(audio.astype(np.float32) * np.float32(32768))
    samples = np.clip(scaled, -32768, 32767).astype("<i2")
    header = b"RIFF" + struct.pack("<I", 36 + data_size) + b"WAVE"
    header += b"fmt " + struct.pack(
        "<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16
    )
    header += b"data" + struct.pack("<I", data_size)
    return header + samples.tobytes()


# -- DecodeWav -------------------------------------------------------------------------------------
def _infer_decode_wav(op):
    (contents,) = op.inputs
    check_dtype(contents.dtype, frozenset({_dtypes.string}), "Input 'contents' of 'DecodeWav'")
    contents.shape.with_rank(0)
    for attr in ("desired_channels", "desired_samples"):
        if op.attrs[attr] < -1:
            raise ValueError(f"DecodeWav: {attr} must be -1 or at least 0, got {op.attrs[attr]}")
    samples = op.attrs["desired_samples"]
    channels = op.attrs["desired_channels"]
    shape = [None if samples == -1 else samples, None if channels == -1 else channels]
    return [(_dtypes.float32, TensorShape(shape)), (_dtypes.int32, TensorShape([]))]


def _decode_wav_kernel(attrs):
    want_channels, want_samples = attrs["desired_channels"], attrs["desired_samples"]

    def decode_wav(contents):
        try:
            samples, rate = read_wav(bytes(contents[()]))
            frames, channels = samples.shape
            out_frames = frames if want_samples == -1 else want_samples
            out_channels = channels if want_channels == -1 else want_channels
            array_bytes((out_frames, out_channels), np.dtype(np.float32))
        except ValueError as e:
            raise InvalidArgumentError(None, None, f"DecodeWav: {e}") from None
        if rate > 2**31 - 1:
            raise InvalidArgumentError(None, None, f"DecodeWav: sample_rate {rate} is too large")
        out = np.zeros((out_frames, out_channels), np.float32)
        if channels and out_channels:
            source = np.minimum(np.arange(out_channels), channels - 1)
            kept = min(frames, out_frames)
            out[:kept] = samples[:kept][:, source]
        return out, np.int32(rate)

    return decode_wav


define_op("DecodeWav", _infer_decode_wav, _decode_wav_kernel)


def decode_wav(contents, desired_channels: int = -1, desired_samples: int = -1, name=None):
    """A 16-bit PCM WAV file as ``(audio, sample_rate)``: ``audio`` float32
    ``[samples, channels]`` in [-1, 1).  ``desired_samples`` cuts or pads with zeros,
    ``desired_channels`` drops channels or repeats the last one."""
    contents = convert_to_tensor(contents, _dtypes.string, name="contents")
    attrs = {"desired_channels": int(desired_channels), "desired_samples": int(desired_samples)}
    outputs = apply_op("DecodeWav", (contents,), attrs, name or "DecodeWav").outputs
    return DecodeWavResult(*outputs)


# -- EncodeWav -------------------------------------------------------------------------------------
def _infer_encode_wav(op):
    audio, rate = op.inputs
    check_dtype(audio.dtype, frozenset({_dtypes.float32}), "Input 'audio' of 'EncodeWav'")
    check_dtype(rate.dtype, frozenset({_dtypes.int32}), "Input 'sample_rate' of 'EncodeWav'")
    audio.shape.with_rank(2)
    rate.shape.with_rank(0)
    return [(_dtypes.string, TensorShape([]))]


def _encode_wav_kernel(attrs):
    def encode_wav(audio, rate):
        if audio.ndim != 2:
            raise InvalidArgumentError(
                None, None, f"EncodeWav: audio must be 2-D, got shape {list(audio.shape)}"
            )
        try:
            return np.array(write_wav(audio, int(rate)), dtype=object)
        except ValueError as e:
            raise InvalidArgumentError(None, None, f"EncodeWav: {e}") from None

    return encode_wav


define_op("EncodeWav", _infer_encode_wav, _encode_wav_kernel)


def encode_wav(audio, sample_rate, name: Optional[str] = None):
    """``audio`` (float32 ``[samples, channels]``, clipped to [-1, 1)) as the bytes of a
    16-bit PCM WAV file at ``sample_rate``."""
    audio = convert_to_tensor(audio, _dtypes.float32, name="audio")
    rate = convert_to_tensor(sample_rate, _dtypes.int32, name="sample_rate")
    return apply_op("EncodeWav", (audio, rate), {}, name or "EncodeWav").outputs[0]


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("DecodeWav")
NotDifferentiable("EncodeWav")
