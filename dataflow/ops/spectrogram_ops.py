"""``tf.signal``'s spectrograms and audio features, composed as TensorFlow composes them: the
short-time Fourier transform and its inverse (``stft``, ``inverse_stft``,
``inverse_stft_window_fn``), the modified DCT (``mdct``, ``inverse_mdct``), the mel filter bank
(``linear_to_mel_weight_matrix``) and MFCCs.  Gradients come from the ops they are made of.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from .math_ops import graph_of
from .reverse_ops import reverse
from .signal_ops import _known_int, dct, frame, hann_window, overlap_and_add, vorbis_window
from .spectral_ops import irfft, rfft


def _scalar(value, name: str) -> Tensor:
    t = convert_to_tensor(value, name=name)
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{name} must be a scalar, got shape {t.shape}")
    return t


def _enclosing_power_of_two(value: Tensor) -> Tensor:
    """The smallest power of two at least ``value`` (TensorFlow's default ``fft_length``)."""
    known = _known_int(value)
    if known is not None:
        return convert_to_tensor(int(2 ** np.ceil(np.log(known) / np.log(2.0))), value.dtype)
    exponent = _m.ceil(_m.realdiv(_m.log(_m.cast(value, _dtypes.float32)), np.float32(np.log(2.0))))
    return _m.cast(_m.pow(convert_to_tensor(2.0), exponent), value.dtype)


def _length_vector(length: Tensor):
    """``[length]`` as the int32 ``fft_length`` of an RFFT: a constant when it is known."""
    known = _known_int(length)
    if known is not None:
        return [known]
    return _a.reshape(_m.cast(length, _dtypes.int32), [1])


def _pad_last(t: Tensor, amount) -> Tensor:
    """``t`` with ``amount`` (an int or an int32 scalar tensor) zeros after its last axis."""
    if isinstance(amount, int):
        rank = t.shape.ndims
        if rank is not None:
            return _g.pad(t, [[0, 0]] * (rank - 1) + [[0, amount]])
    dims = _a.concat([_a.shape(t)[:-1], _a.reshape(amount, [1])], 0)
    return _a.concat([t, _a.zeros(dims, t.dtype)], -1)


def stft(
    signals,
    frame_length,
    frame_step,
    fft_length=None,
    window_fn=hann_window,
    pad_end: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """The short-time Fourier transform of real ``signals`` (``[..., samples]``): frames of
    ``frame_length`` every ``frame_step`` samples, each multiplied by ``window_fn(frame_length,
    dtype)`` (none when None) and transformed by an RFFT of ``fft_length`` (by default the
    smallest power of two holding a frame): ``[..., frames, fft_length // 2 + 1]``."""
    graph = graph_of((signals, frame_length, frame_step))
    with graph.as_default(), graph.name_scope(name or "stft"):
        signals = convert_to_tensor(signals, name="signals")
        if signals.shape.ndims == 0:
            raise ValueError(f"Shape {signals.shape} must have rank at least 1")
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = convert_to_tensor(fft_length, name="fft_length")
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = _m.multiply(framed, window_fn(frame_length, dtype=framed.dtype))
        return rfft(framed, _length_vector(fft_length))


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name: Optional[str] = None):
    """A window function for `inverse_stft` that undoes ``forward_window_fn``: the forward
    window divided by the sum of the squared windows overlapping each sample (0 where that
    sum is 0), so that ``inverse_stft(stft(x))`` gives back ``x`` where frames cover it."""

    def inverse_stft_window_fn_inner(frame_length, dtype):
        graph = graph_of((frame_length, frame_step))
        with graph.as_default(), graph.name_scope(name or "inverse_stft_window_fn"):
            step = _scalar(frame_step, "frame_step")
            length = _scalar(frame_length, "frame_length")
            forward_window = forward_window_fn(length, dtype=dtype)
            denom = _m.square(forward_window)
            step_known, length_known = _known_int(step), _known_int(length)
            if step_known is not None and length_known is not None:
                step, length = step_known, length_known
                overlaps = -(-length // step)  # ceiling division
                padding = overlaps * step - length
            else:
                step, length = _m.cast(step, _dtypes.int32), _m.cast(length, _dtypes.int32)
                overlaps = _m.negative(_m.floordiv(_m.negative(length), step))
                padding = _m.subtract(_m.multiply(overlaps, step), length)
            denom = _pad_last(denom, padding)
            denom = _a.reshape(denom, _a.stack([overlaps, step]))
            denom = _m.reduce_sum(denom, 0, keepdims=True)
            denom = _g.tile(denom, _a.stack([overlaps, 1]))
            denom = _a.reshape(denom, [-1])
            denom = denom[:length]
            return _m.where(
                _m.equal(denom, _a.zeros_like(denom)),
                _a.zeros_like(forward_window),
                _m.realdiv(forward_window, denom),
            )

    return inverse_stft_window_fn_inner


def inverse_stft(
    stfts,
    frame_length,
    frame_step,
    fft_length=None,
    window_fn=hann_window,
    name: Optional[str] = None,
) -> Tensor:
    """The signal whose `stft` is ``stfts`` (``[..., frames, fft_length // 2 + 1]``): each
    frame's inverse RFFT, cut or zero-padded to ``frame_length``, multiplied by
    ``window_fn(frame_length, dtype)`` and overlap-added every ``frame_step`` samples.  Pass
    ``inverse_stft_window_fn(frame_step)`` as ``window_fn`` to undo a Hann-windowed stft."""
    graph = graph_of((stfts, frame_length, frame_step))
    with graph.as_default(), graph.name_scope(name or "inverse_stft"):
        stfts = convert_to_tensor(stfts, name="stfts")
        if stfts.shape.ndims is not None and stfts.shape.ndims < 2:
            raise ValueError(f"Shape {stfts.shape} must have rank at least 2")
        frame_length = _scalar(frame_length, "frame_length")
        frame_step = _scalar(frame_step, "frame_step")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(frame_length)
        else:
            fft_length = _scalar(fft_length, "fft_length")
        real_frames = irfft(stfts, _length_vector(fft_length))
        length_static = _known_int(frame_length)
        rank = real_frames.shape.ndims
        last = real_frames.shape.as_list()[-1] if rank is not None else None
        if length_static is None or rank is None or last is None:
            real_frames = real_frames[..., :frame_length]
            missing = _m.maximum(
                0, _m.subtract(_m.cast(frame_length, _dtypes.int32), _a.shape(real_frames)[-1])
            )
            real_frames = _pad_last(real_frames, missing)
        elif last > length_static:
            real_frames = real_frames[..., :length_static]
        elif last < length_static:
            real_frames = _pad_last(real_frames, length_static - last)
        if window_fn is not None:
            window = window_fn(frame_length, dtype=stfts.dtype.real_dtype)
            real_frames = _m.multiply(real_frames, window)
        return overlap_and_add(real_frames, frame_step)


def mdct(
    signals,
    frame_length,
    window_fn=vorbis_window,
    pad_end: bool = False,
    norm: Optional[str] = None,
    name: Optional[str] = None,
) -> Tensor:
    """The modified discrete cosine transform of real ``signals``: frames of ``frame_length``
    (a multiple of 4) every ``frame_length // 2`` samples, windowed by ``window_fn`` (by
    ``1/sqrt(2)`` when None), folded and transformed by a DCT-IV (orthonormal with
    ``norm="ortho"``): ``[..., frames, frame_length // 2]``."""
    graph = graph_of((signals, frame_length))
    with graph.as_default(), graph.name_scope(name or "mdct"):
        signals = convert_to_tensor(signals, name="signals")
        if signals.shape.ndims == 0:
            raise ValueError(f"Shape {signals.shape} must have rank at least 1")
        frame_length = _scalar(frame_length, "frame_length")
        length_static = _known_int(frame_length)
        if length_static is not None:
            if length_static % 4 != 0:
                raise ValueError("The frame length must be a multiple of 4.")
            frame_step = length_static // 2
        else:  # known at run time only: a length that is no multiple of 4 fails in split
            frame_step = _m.floordiv(frame_length, 2)
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = _m.multiply(framed, window_fn(frame_length, dtype=framed.dtype))
        else:
            framed = _m.multiply(framed, 1.0 / np.sqrt(2))
        quarters = _a.split(framed, 4, axis=-1)
        first = _m.subtract(_m.negative(reverse(quarters[2], [-1])), quarters[3])
        second = _m.subtract(quarters[0], reverse(quarters[1], [-1]))
        return dct(_a.concat([first, second], -1), type=4, norm=norm)


def inverse_mdct(
    mdcts, window_fn=vorbis_window, norm: Optional[str] = None, name: Optional[str] = None
) -> Tensor:
    """The signal whose `mdct` is ``mdcts`` (``[..., frames, half_length]``): a DCT-IV of each
    frame, unfolded to ``2 * half_length`` samples, windowed by ``window_fn`` and
    overlap-added every ``half_length`` samples.  With the window and ``norm`` of the
    forward transform, it gives the signal back (time-domain aliasing cancels)."""
    graph = graph_of((mdcts,))
    with graph.as_default(), graph.name_scope(name or "inverse_mdct"):
        mdcts = convert_to_tensor(mdcts, name="mdcts")
        if mdcts.shape.ndims is not None and mdcts.shape.ndims < 2:
            raise ValueError(f"Shape {mdcts.shape} must have rank at least 2")
        if mdcts.shape.ndims is None or mdcts.shape.as_list()[-1] is None:
            raise ValueError("inverse_mdct needs the size of the last dimension of mdcts")
        half_len = mdcts.shape.as_list()[-1]
        if norm is None:
            result = _m.multiply(dct(mdcts, type=4), 0.5 / half_len)
        elif norm == "ortho":
            result = dct(mdcts, type=4, norm="ortho")
        else:
            raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
        first, second = _a.split(result, 2, axis=-1)
        real_frames = _a.concat(
            [
                second,
                _m.negative(reverse(second, [-1])),
                _m.negative(reverse(first, [-1])),
                _m.negative(first),
            ],
            -1,
        )
        if window_fn is not None:
            real_frames = _m.multiply(real_frames, window_fn(2 * half_len, dtype=mdcts.dtype))
        else:
            real_frames = _m.multiply(real_frames, 1.0 / np.sqrt(2))
        return overlap_and_add(real_frames, half_len)


_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz: Tensor) -> Tensor:
    return _m.multiply(
        _m.log(_m.add(_m.realdiv(hertz, _MEL_BREAK_FREQUENCY_HERTZ), 1.0)), _MEL_HIGH_FREQUENCY_Q
    )


def linear_to_mel_weight_matrix(
    num_mel_bins=20,
    num_spectrogram_bins=129,
    sample_rate=8000,
    lower_edge_hertz=125.0,
    upper_edge_hertz=3800.0,
    dtype=_dtypes.float32,
    name: Optional[str] = None,
) -> Tensor:
    """The ``[num_spectrogram_bins, num_mel_bins]`` matrix that maps the magnitudes of a linear
    spectrum (as `stft` gives, ``0 .. sample_rate / 2`` Hz) to ``num_mel_bins`` triangular mel
    bands between ``lower_edge_hertz`` and ``upper_edge_hertz`` (HTK's mel scale); the row of
    the 0 Hz bin is zero."""
    dtype = _dtypes.as_dtype(dtype)
    graph = graph_of((sample_rate,))
    with graph.as_default(), graph.name_scope(name or "linear_to_mel_weight_matrix") as scope:
        if isinstance(sample_rate, Tensor):
            known = numpy_value_or_none(sample_rate)
            if known is not None:
                sample_rate = known.item()
        if num_mel_bins <= 0:
            raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
        if lower_edge_hertz < 0.0:
            raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
        if lower_edge_hertz >= upper_edge_hertz:
            raise ValueError(
                f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                f"{upper_edge_hertz:.1f}"
            )
        if not isinstance(sample_rate, Tensor):
            if sample_rate <= 0.0:
                raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
            if upper_edge_hertz > sample_rate / 2:
                raise ValueError(
                    "upper_edge_hertz must not be larger than the Nyquist frequency "
                    f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: {sample_rate}"
                )
        if not dtype.is_floating:
            raise ValueError(f"dtype must be a floating point type. Got: {dtype}")
        from .extra_array_ops import linspace

        rate = _m.cast(sample_rate, dtype, name="sample_rate")
        lower = convert_to_tensor(lower_edge_hertz, dtype, name="lower_edge_hertz")
        upper = convert_to_tensor(upper_edge_hertz, dtype, name="upper_edge_hertz")
        zero = convert_to_tensor(0.0, dtype)
        nyquist = _m.realdiv(rate, 2.0)
        linear_frequencies = linspace(zero, nyquist, num_spectrogram_bins)[1:]
        bins_mel = _a.expand_dims(_hertz_to_mel(linear_frequencies), 1)
        edges = frame(
            linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2),
            frame_length=3,
            frame_step=1,
        )
        lower_mel, center_mel, upper_mel = (
            _a.reshape(t, [1, num_mel_bins]) for t in _a.split(edges, 3, axis=1)
        )
        lower_slopes = _m.realdiv(
            _m.subtract(bins_mel, lower_mel), _m.subtract(center_mel, lower_mel)
        )
        upper_slopes = _m.realdiv(
            _m.subtract(upper_mel, bins_mel), _m.subtract(upper_mel, center_mel)
        )
        weights = _m.maximum(zero, _m.minimum(lower_slopes, upper_slopes))
        return _g.pad(weights, [[1, 0], [0, 0]], name=scope)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name: Optional[str] = None) -> Tensor:
    """Mel-frequency cepstral coefficients: the orthonormal DCT-II of each log-mel spectrum
    (``[..., num_mel_bins]``), as HTK computes them."""
    graph = graph_of((log_mel_spectrograms,))
    with graph.as_default(), graph.name_scope(name or "mfccs_from_log_mel_spectrograms"):
        spectra = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        dims = spectra.shape.as_list() if spectra.shape.ndims else None
        if dims and dims[-1] is not None:
            num_mel_bins = dims[-1]
            if num_mel_bins == 0:
                raise ValueError(f"num_mel_bins must be positive. Got: {spectra}")
        else:
            num_mel_bins = _a.shape(spectra)[-1]
        dct2 = dct(spectra, type=2)
        return _m.multiply(dct2, _m.rsqrt(_m.multiply(_m.cast(num_mel_bins, dct2.dtype), 2.0)))
