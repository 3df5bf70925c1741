"""The ops of ``tf.signal`` beyond the FFTs: framing a signal and adding frames back
(``Frame``, ``OverlapAndAdd``), the window functions (``SignalWindow``) and the discrete cosine
transforms (``DCT``).

TensorFlow composes these in Python from gathers, pads and FFTs; here each is one op with a
numpy kernel, whose values are TensorFlow's formulas, and whose gradient is its adjoint:
``Frame`` and ``OverlapAndAdd`` are each other's, a DCT's is the transposed transform
(computed by the same op with ``adjoint``).  The lengths (``frame_length``, ``frame_step``,
``window_length``) are inputs, so they may be computed at run time, as in TensorFlow.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .math_ops import FLOAT_TYPES, check_dtype, graph_of, normalize_axis, static_axis

_INT_TYPES = frozenset({_dtypes.int32, _dtypes.int64})


def _known_int(t: Tensor) -> Optional[int]:
    from .array_ops import known_int_value

    value = numpy_value_or_none(t)
    if value is None:
        value = known_int_value(t)
    return None if value is None or np.ndim(value) != 0 else int(value)


def _fail(op_type: str, message: str):
    raise InvalidArgumentError(None, None, f"{op_type}: {message}")


def _check_scalar(t: Tensor, what: str, op_type: str) -> None:
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{what} of '{op_type}' must be a scalar, got shape {t.shape}")


def _num_frames(length: int, frame_length: int, frame_step: int, pad_end: bool) -> int:
    if pad_end:
        return -(-length // frame_step)
    return max(0, 1 + (length - frame_length) // frame_step)


# -- Frame -----------------------------------------------------------------------------------------
def _infer_frame(op):
    signal, frame_length, frame_step, pad_value = op.inputs
    for t, what in ((frame_length, "frame_length"), (frame_step, "frame_step")):
        check_dtype(t.dtype, _INT_TYPES, f"{what} of 'Frame'")
        _check_scalar(t, what, "Frame")
    _check_scalar(pad_value, "pad_value", "Frame")
    rank = signal.shape.ndims
    if rank is None:
        return [(signal.dtype, TensorShape(None))]
    if rank < 1:
        raise ValueError(f"Shape {signal.shape} must have rank at least 1")
    axis = normalize_axis(op.attrs["axis"], rank)
    dims = signal.shape.as_list()
    fl, fs = _known_int(frame_length), _known_int(frame_step)
    if fl is not None and fl < 0:
        raise ValueError(f"frame_length must not be negative, got {fl}")
    if fs is not None and fs <= 0:
        raise ValueError(f"frame_step must be positive, got {fs}")
    frames = None
    if dims[axis] is not None and fl is not None and fs is not None:
        frames = _num_frames(dims[axis], fl, fs, op.attrs["pad_end"])
    return [(signal.dtype, TensorShape(dims[:axis] + [frames, fl] + dims[axis + 1 :]))]


def _frame_indices(length, frame_length, frame_step, pad_end):
    frames = _num_frames(length, frame_length, frame_step, pad_end)
    starts = frame_step * np.arange(frames, dtype=np.int64)
    return starts[:, None] + np.arange(frame_length, dtype=np.int64)[None, :]


def _frame_lengths(frame_length, frame_step, op_type: str):
    fl, fs = int(frame_length), int(frame_step)
    if fl < 0:
        _fail(op_type, f"frame_length must not be negative, got {fl}")
    if fs <= 0:
        _fail(op_type, f"frame_step must be positive, got {fs}")
    return fl, fs


def _frame_kernel(attrs):
    axis_attr, pad_end = attrs["axis"], attrs["pad_end"]

    def run(signal, frame_length, frame_step, pad_value):
        fl, fs = _frame_lengths(frame_length, frame_step, "Frame")
        axis = axis_attr % signal.ndim
        length = signal.shape[axis]
        index = _frame_indices(length, fl, fs, pad_end)
        needed = int(index.max()) + 1 if index.size else 0
        if needed > length:
            pads = [(0, 0)] * signal.ndim
            pads[axis] = (0, needed - length)
            signal = np.pad(signal, pads, constant_values=pad_value)
        return np.take(signal, index, axis=axis)

    return run


define_op("Frame", _infer_frame, _frame_kernel)


def _overlap_add(frames: np.ndarray, frame_step: int, axis: int, length: int) -> np.ndarray:
    """The frames at ``axis`` and ``axis + 1`` of ``frames`` added at offsets of
    ``frame_step`` into a signal of ``length`` samples along ``axis`` (what runs past it is
    dropped)."""
    num, frame_length = frames.shape[axis], frames.shape[axis + 1]
    moved = np.moveaxis(frames, (axis, axis + 1), (0, 1))
    total = max(length, frame_step * (num - 1) + frame_length if num else 0)
    out = np.zeros((total,) + moved.shape[2:], frames.dtype)
    if num and frame_length:
        if frame_step >= frame_length or num <= frame_length:
            for i in range(num):
                out[i * frame_step : i * frame_step + frame_length] += moved[i]
        else:
            for j in range(frame_length):
                out[j : j + frame_step * num : frame_step][:num] += moved[:, j]
    return np.moveaxis(out[:length], 0, axis)


def _infer_frame_grad(op):
    return [(op.inputs[1].dtype, op.inputs[1].shape)]


def _frame_grad_kernel(attrs):
    axis_attr = attrs["axis"]

    def run(grad, signal, frame_length, frame_step):
        _, fs = _frame_lengths(frame_length, frame_step, "Frame")
        axis = axis_attr % signal.ndim
        return _overlap_add(grad, fs, axis, signal.shape[axis])

    return run


define_op("FrameGrad", _infer_frame_grad, _frame_grad_kernel)
NotDifferentiable("FrameGrad")


@RegisterGradient("Frame")
def _frame_grad(op, grad):
    signal, frame_length, frame_step, _ = op.inputs
    attrs = {"axis": op.attrs["axis"]}
    back = apply_op_output(
        "FrameGrad", (grad, signal, frame_length, frame_step), attrs, "FrameGrad"
    )
    return back, None, None, None


def frame(
    signal,
    frame_length,
    frame_step,
    pad_end: bool = False,
    pad_value=0,
    axis=-1,
    name: Optional[str] = None,
) -> Tensor:
    """The frames of ``frame_length`` samples every ``frame_step`` samples along ``axis`` of
    ``signal``: that axis becomes two, ``[num_frames, frame_length]``.  With ``pad_end`` the
    end is padded with ``pad_value`` so that a frame starts at every step of the signal
    (``ceil(length / frame_step)`` frames); without it, only whole frames are taken."""
    graph = graph_of((signal, frame_length, frame_step, pad_value))
    with graph.as_default(), graph.name_scope(name or "frame") as scope:
        signal = convert_to_tensor(signal, name="signal")
        frame_length = convert_to_tensor(frame_length, name="frame_length")
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        pad_value = convert_to_tensor(pad_value, signal.dtype, name="pad_value")
        axis = static_axis(axis)
        if not isinstance(axis, int):
            raise ValueError(f"frame's axis must be a scalar, got {axis!r}")
        if signal.shape.ndims == 0:
            raise ValueError(f"Shape {signal.shape} must have rank at least 1")
        attrs = {"axis": axis, "pad_end": bool(pad_end)}
        return apply_op_output("Frame", (signal, frame_length, frame_step, pad_value), attrs, scope)


# -- OverlapAndAdd ---------------------------------------------------------------------------------
def _infer_overlap_and_add(op):
    signal, frame_step = op.inputs
    check_dtype(frame_step.dtype, _INT_TYPES, "frame_step of 'OverlapAndAdd'")
    _check_scalar(frame_step, "frame_step", "OverlapAndAdd")
    rank = signal.shape.ndims
    if rank is None:
        return [(signal.dtype, TensorShape(None))]
    if rank < 2:
        raise ValueError(f"Shape {signal.shape} must have rank at least 2")
    dims = signal.shape.as_list()
    frames, frame_length = dims[-2], dims[-1]
    fs = _known_int(frame_step)
    if fs is not None and fs <= 0:
        raise ValueError(f"frame_step must be positive, got {fs}")
    length = None
    if None not in (frames, frame_length, fs):
        length = _output_length(frames, frame_length, fs)
    return [(signal.dtype, TensorShape(dims[:-2] + [length]))]


def _output_length(frames: int, frame_length: int, frame_step: int) -> int:
    # TensorFlow's formula, also for no frames (frame_length - frame_step zeros).
    return max(0, frame_step * (frames - 1) + frame_length)


def _overlap_and_add_kernel(attrs):
    def run(signal, frame_step):
        fs = int(frame_step)
        if fs <= 0:
            _fail("OverlapAndAdd", f"frame_step must be positive, got {fs}")
        frames, frame_length = signal.shape[-2], signal.shape[-1]
        length = _output_length(frames, frame_length, fs)
        return _overlap_add(signal, fs, signal.ndim - 2, length)

    return run


define_op("OverlapAndAdd", _infer_overlap_and_add, _overlap_and_add_kernel)


@RegisterGradient("OverlapAndAdd")
def _overlap_and_add_grad(op, grad):
    from .array_ops import shape

    signal, frame_step = op.inputs
    frame_length = shape(signal)[-1]
    zero = convert_to_tensor(0, grad.dtype)
    attrs = {"axis": -1, "pad_end": False}
    framed = apply_op_output("Frame", (grad, frame_length, frame_step, zero), attrs, "Frame")
    return framed, None


def overlap_and_add(signal, frame_step, name: Optional[str] = None) -> Tensor:
    """The frames of ``signal`` (``[..., frames, frame_length]``) added together at offsets of
    ``frame_step``: a ``[..., (frames - 1) * frame_step + frame_length]`` signal."""
    graph = graph_of((signal, frame_step))
    with graph.as_default(), graph.name_scope(name or "overlap_and_add") as scope:
        signal = convert_to_tensor(signal, name="signal")
        frame_step = convert_to_tensor(frame_step, name="frame_step")
        if frame_step.dtype not in _INT_TYPES:
            raise ValueError(f"frame_step must be an integer. Got {frame_step.dtype.name}")
        if signal.shape.ndims is not None and signal.shape.ndims < 2:
            raise ValueError(f"Shape {signal.shape} must have rank at least 2")
        return apply_op_output("OverlapAndAdd", (signal, frame_step), None, scope)


# -- windows ---------------------------------------------------------------------------------------
def _window_values(kind: str, length: int, periodic: bool, beta: float, np_dtype) -> np.ndarray:
    """TensorFlow's window formulas, in the precision TensorFlow computes them."""
    if length <= 0:
        return np.zeros([0], np_dtype)
    if kind in ("hann", "hamming"):
        if length == 1:
            return np.ones([1], np_dtype)
        a, b = (0.5, 0.5) if kind == "hann" else (0.54, 0.46)
        n = np_dtype.type(length + (1 - length % 2 if periodic else 0) - 1)
        count = np.arange(length).astype(np_dtype)
        arg = np_dtype.type(2 * np.pi) * count / n
        return (np_dtype.type(a) - np_dtype.type(b) * np.cos(arg)).astype(np_dtype)
    if kind == "vorbis":
        arg = np.arange(length).astype(np_dtype)
        inner = np.sin(np_dtype.type(np.pi) / np_dtype.type(length) * (arg + np_dtype.type(0.5)))
        return np.sin(np_dtype.type(np.pi / 2.0) * inner**2).astype(np_dtype)
    if kind == "kaiser":
        return _kaiser(length, beta, np_dtype)
    # Kaiser-Bessel derived: the normalized running sum of a Kaiser window of half the length
    # plus one, square-rooted and mirrored.
    half = length // 2
    kaiser = _kaiser(half + 1, beta, np_dtype)
    csum = np.cumsum(kaiser, dtype=np_dtype)
    halfw = np.sqrt(csum[:-1] / csum[-1])
    return np.concatenate([halfw, halfw[::-1]]).astype(np_dtype)


def _kaiser(length: int, beta: float, np_dtype) -> np.ndarray:
    if length == 1:
        return np.ones([1], np_dtype)
    halflen = (np.float32(length) - np.float32(1.0)) / np.float32(2.0)
    arg = np.arange(-halflen, halflen + np.float32(0.1), dtype=np.float32).astype(np_dtype)
    halflen = np_dtype.type(halflen)
    beta = np_dtype.type(beta)
    with np.errstate(all="ignore"):
        num = beta * np.sqrt(np.maximum(np_dtype.type(1) - np.square(arg / halflen), 0))
    # exp(num - beta) * i0e(num) / i0e(beta) is i0(num) / i0(beta).
    return (np.i0(num.astype(np.float64)) / np.i0(float(beta))).astype(np_dtype)


def _infer_window(op):
    length, periodic, beta = op.inputs
    check_dtype(length.dtype, _INT_TYPES, "window_length")
    check_dtype(periodic.dtype, frozenset({_dtypes.bool}), "periodic")
    check_dtype(beta.dtype, frozenset({op.attrs["dtype"]}), "beta")
    for t, what in ((length, "window_length"), (periodic, "periodic"), (beta, "beta")):
        _check_scalar(t, what, op.type)
    n = _known_int(length)
    return [(op.attrs["dtype"], TensorShape([n if n is None else max(n, 0)]))]


def _window_kernel(attrs):
    kind = attrs["window"]
    np_dtype = _dtypes.numpy_dtype(attrs["dtype"])

    def run(length, periodic, beta):
        return _window_values(kind, int(length), bool(periodic), beta, np_dtype)

    return run


define_op("SignalWindow", _infer_window, _window_kernel)
NotDifferentiable("SignalWindow")


def _window(kind, default_name, window_length, periodic, beta, dtype, name):
    """The ``kind`` window; ``window_length``, ``periodic`` and ``beta`` may be tensors
    computed at run time, as in TensorFlow."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    graph = graph_of((window_length, periodic, beta))
    with graph.as_default(), graph.name_scope(name or default_name) as scope:
        length = convert_to_tensor(window_length, _dtypes.int32, name="window_length")
        periodic = convert_to_tensor(periodic, _dtypes.bool, name="periodic")
        beta = convert_to_tensor(beta, name="beta")
        if beta.dtype is not dtype:
            from .math_ops import cast

            beta = cast(beta, dtype)
        attrs = {"window": kind, "dtype": dtype}
        return apply_op_output("SignalWindow", (length, periodic, beta), attrs, scope)


def hann_window(
    window_length, periodic=True, dtype=_dtypes.float32, name: Optional[str] = None
) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / N)`` of ``window_length`` samples; periodic
    (``N = window_length``, for spectral analysis) or symmetric (``N = window_length - 1``)."""
    return _window("hann", "hann_window", window_length, periodic, 0.0, dtype, name)


def hamming_window(
    window_length, periodic=True, dtype=_dtypes.float32, name: Optional[str] = None
) -> Tensor:
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / N)``, periodic or symmetric as
    `hann_window`."""
    return _window("hamming", "hamming_window", window_length, periodic, 0.0, dtype, name)


def kaiser_window(
    window_length, beta=12.0, dtype=_dtypes.float32, name: Optional[str] = None
) -> Tensor:
    """The Kaiser window of shape parameter ``beta``."""
    return _window("kaiser", "kaiser_window", window_length, False, beta, dtype, name)


def kaiser_bessel_derived_window(
    window_length, beta=12.0, dtype=_dtypes.float32, name: Optional[str] = None
) -> Tensor:
    """The Kaiser-Bessel derived window (for the MDCT) of shape parameter ``beta``."""
    return _window("kbd", "kaiser_bessel_derived_window", window_length, False, beta, dtype, name)


def vorbis_window(window_length, dtype=_dtypes.float32, name: Optional[str] = None) -> Tensor:
    """The Vorbis power-complementary window ``sin(pi/2 sin^2(pi (n + 1/2) / N))``."""
    return _window("vorbis", "vorbis_window", window_length, False, 0.0, dtype, name)


# -- DCT -------------------------------------------------------------------------------------------
def _dct_last(x: np.ndarray, kind: int, ortho: bool) -> np.ndarray:
    """The DCT of type ``kind`` over the last axis of ``x`` (float64), TensorFlow's formulas
    (unnormalized as scipy's, or orthonormal)."""
    n = x.shape[-1]
    if kind == 1:
        extended = np.concatenate([x, x[..., -2:0:-1]], axis=-1)
        return np.fft.rfft(extended).real
    if kind == 2:
        k = np.arange(n)
        scale = 2.0 * np.exp(-1j * np.pi * k / (2 * n))
        out = (np.fft.rfft(x, 2 * n)[..., :n] * scale).real
        if ortho:
            weights = np.full(n, np.sqrt(1.0 / (2 * n)))
            weights[0] = np.sqrt(1.0 / (4 * n))
            out = out * weights
        return out
    if kind == 3:
        if ortho:
            weights = np.full(n, np.sqrt(n) * np.sqrt(0.5))
            weights[0] = np.sqrt(n)
            x = x * weights
        else:
            x = x * n
        k = np.arange(n)
        scale = 2.0 * np.exp(1j * np.pi * k / (2 * n))
        return np.fft.irfft(scale * x, 2 * n)[..., :n]
    padded = np.concatenate([x, np.zeros_like(x)], axis=-1)
    out = _dct_last(padded, 2, False)[..., 1::2]
    return out * (np.sqrt(0.5) / np.sqrt(n)) if ortho else out


def _dct_adjoint_last(g: np.ndarray, kind: int, ortho: bool) -> np.ndarray:
    """The transposed transform of `_dct_last` applied to ``g``."""
    n = g.shape[-1]
    if kind == 1:
        weights = np.full(n, 2.0)
        weights[0] = weights[-1] = 1.0
        return weights * _dct_last(g / weights, 1, False)
    if kind == 4:
        return _dct_last(g, 4, ortho)
    if ortho:  # the orthonormal DCT-II and DCT-III are each other's inverse and transpose
        return _dct_last(g, 5 - kind, True)
    if kind == 2:
        return _dct_last(g, 3, False) + g[..., :1]
    out = _dct_last(g, 2, False)
    out[..., 0] *= 0.5
    return out


def _infer_dct(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES - {_dtypes.float16}, "Input 'input' of 'DCT'")
    rank = x.shape.ndims
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    if rank < 1:
        raise ValueError(f"Shape {x.shape} must have rank at least 1")
    axis = normalize_axis(op.attrs["axis"], rank)
    dims = x.shape.as_list()
    n, length = op.attrs["n"], op.attrs["length"]
    if op.attrs["adjoint"]:
        dims[axis] = length
    elif n is not None:
        dims[axis] = n
    if op.attrs["type"] == 1 and dims[axis] is not None and dims[axis] < 2:
        raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    return [(x.dtype, TensorShape(dims))]


def _dct_kernel(attrs):
    kind, n, ortho = attrs["type"], attrs["n"], attrs["norm"] == "ortho"
    axis_attr, adjoint, length = attrs["axis"], attrs["adjoint"], attrs["length"]

    def run(x):
        axis = axis_attr % x.ndim
        moved = np.moveaxis(x, axis, -1).astype(np.float64)
        if adjoint:
            out = _dct_adjoint_last(moved, kind, ortho) if moved.shape[-1] else moved
            # the adjoint of cropping or padding the input to n
            size = length if length is not None else out.shape[-1]
            out = out[..., :size]
            out = np.pad(out, [(0, 0)] * (out.ndim - 1) + [(0, size - out.shape[-1])])
        else:
            if n is not None:
                moved = moved[..., :n]
                moved = np.pad(moved, [(0, 0)] * (moved.ndim - 1) + [(0, n - moved.shape[-1])])
            if kind == 1 and moved.shape[-1] < 2:
                _fail("DCT", "Type-I DCT requires the dimension to be greater than one.")
            out = _dct_last(moved, kind, ortho) if moved.shape[-1] else moved
        return np.moveaxis(out, -1, axis).astype(x.dtype)

    return run


define_op("DCT", _infer_dct, _dct_kernel)


@RegisterGradient("DCT")
def _dct_grad(op, grad):
    attrs = dict(op.attrs)
    if op.attrs["adjoint"]:
        attrs.update(adjoint=False)
    else:
        attrs.update(adjoint=True, length=op.inputs[0].shape.as_list()[op.attrs["axis"]])
        if attrs["length"] is None and op.attrs["n"] is not None:
            raise ValueError(
                "The gradient of a DCT with n needs the size of its input's axis to be known"
            )
    return apply_op_output("DCT", (grad,), attrs, "DCT")


def _validate_dct(x: Tensor, kind, n, axis, norm) -> None:
    if kind not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if kind == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if x.shape.ndims and x.shape.as_list()[axis] is not None and x.shape.as_list()[axis] < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")


def _dct(input, kind, n, axis, norm, name, default_name):  # noqa: A002
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or default_name) as scope:
        x = convert_to_tensor(input, name="input")
        if x.dtype not in (_dtypes.float32, _dtypes.float64):
            raise ValueError(f"DCT requires tf.float32 or tf.float64 inputs, got: {x}")
        axis = static_axis(axis)
        if not isinstance(axis, int):
            raise ValueError(f"dct's axis must be an int, got {axis!r}")
        if x.shape.ndims is not None:
            axis = normalize_axis(axis, x.shape.ndims)
        _validate_dct(x, kind, n, axis, norm)
        attrs = {
            "type": int(kind),
            "n": None if n is None else int(n),
            "axis": axis,
            "norm": norm,
            "adjoint": False,
            "length": None,
        }
        return apply_op_output("DCT", (x,), attrs, scope)


def dct(input, type=2, n=None, axis=-1, norm=None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The discrete cosine transform of ``type`` 1-4 along ``axis`` (TensorFlow takes only the
    last), the input cropped or zero-padded to ``n``; unnormalized as scipy's, or orthonormal
    with ``norm="ortho"`` (not for type 1)."""
    return _dct(input, type, n, axis, norm, name, "dct")


def idct(input, type=2, n=None, axis=-1, norm=None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of `dct` of the same ``type``: the DCT of the inverse type (3 for 2, 2 for
    3, 1 and 4 for themselves); without ``norm`` it is scaled by ``2 * N`` (``2 * (N - 1)``
    for type 1), as scipy's and TensorFlow's."""
    if type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    return _dct(input, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, axis, norm, name, "idct")
