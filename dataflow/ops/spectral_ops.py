"""Fourier transforms and the signal-processing ops of ``tf.signal`` that have kernels here.

The FFT ops are TensorFlow's: ``FFT``/``IFFT`` (and their 2-D and 3-D forms) over the innermost
1, 2 or 3 dimensions of a complex tensor; ``RFFT``/``IRFFT`` (and 2-D, 3-D) between real
signals and the non-negative half of their spectrum, with an ``fft_length`` input that crops
or zero-pads the signal; and ``FFTND``/``IFFTND``/``RFFTND``/``IRFFTND`` over any axes.  The
kernels are numpy's FFTs, in the precision of the tensor (complex64 stays complex64).  The
unnormalized forward transform and the ``1/n`` inverse are TensorFlow's (and numpy's)
convention.

The gradients are TensorFlow's: the gradient of a transform is its adjoint applied to the
incoming gradient (``ifft(g) * n`` for ``FFT``), and for ``IRFFT`` TensorFlow's formula
``rfft(g) * mask / n`` (the mask doubling the bins that stand for two).

Beside them: ``Frame`` and ``OverlapAndAdd`` (``tf.signal.frame`` and
``overlap_and_add``, one op each here where TensorFlow composes gathers and reshapes, each the
other's gradient), ``SignalWindow`` (the window functions) and ``DCT`` (the discrete cosine
transforms of types I-IV, and their adjoints for the gradient).
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
from .math_ops import (
    COMPLEX_TYPES,
    FLOAT_TYPES,
    check_dtype,
    graph_of,
    normalize_axis,
    static_axis,
)

_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}
_REAL_TYPES = frozenset(_COMPLEX_OF)


def _known_vector(t: Tensor) -> Optional[list]:
    """The value of an int vector known when the graph is built (as a list), else None."""
    from .array_ops import known_int_value

    value = numpy_value_or_none(t)
    if value is None:
        value = known_int_value(t)
    return None if value is None else [int(v) for v in np.reshape(value, [-1])]


def _fail(op_type: str, message: str):
    raise InvalidArgumentError(None, None, f"{op_type}: {message}")


# -- complex-to-complex transforms -----------------------------------------------------------------
_FFT_RANK = {"FFT": 1, "IFFT": 1, "FFT2D": 2, "IFFT2D": 2, "FFT3D": 3, "IFFT3D": 3}


def _infer_fft(op):
    (x,) = op.inputs
    check_dtype(x.dtype, COMPLEX_TYPES, f"Input 'input' of '{op.type}'")
    rank = _FFT_RANK[op.type]
    if x.shape.ndims is not None and x.shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {x.shape.ndims}")
    return [(x.dtype, x.shape)]


def _fft_kernel(op_type: str):
    rank = _FFT_RANK[op_type]
    transform = np.fft.ifftn if op_type.startswith("I") else np.fft.fftn
    axes = tuple(range(-rank, 0))

    def build(attrs):
        def run(x):
            if x.ndim < rank:
                _fail(op_type, f"input must have rank at least {rank}, got shape {x.shape}")
            if x.size == 0:
                return np.zeros(x.shape, x.dtype)
            return transform(x, axes=axes).astype(x.dtype, copy=False)

        return run

    return build


for _type in _FFT_RANK:
    define_op(_type, _infer_fft, _fft_kernel(_type))


def _fft_op(op_type: str, input, name: Optional[str]) -> Tensor:  # noqa: A002
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        x = convert_to_tensor(input, name="input")
        if x.dtype not in COMPLEX_TYPES:
            raise TypeError(
                f"Value passed to parameter 'input' has DataType {x.dtype.name} not in list of "
                "allowed values: complex64, complex128"
            )
        return apply_op_output(op_type, (x,), None, scope)


def fft(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The discrete Fourier transform over the innermost dimension of a complex tensor."""
    return _fft_op("FFT", input, name)


def ifft(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse discrete Fourier transform over the innermost dimension (scaled by 1/n)."""
    return _fft_op("IFFT", input, name)


def fft2d(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The 2-D discrete Fourier transform over the innermost 2 dimensions."""
    return _fft_op("FFT2D", input, name)


def ifft2d(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse 2-D discrete Fourier transform over the innermost 2 dimensions."""
    return _fft_op("IFFT2D", input, name)


def fft3d(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The 3-D discrete Fourier transform over the innermost 3 dimensions."""
    return _fft_op("FFT3D", input, name)


def ifft3d(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse 3-D discrete Fourier transform over the innermost 3 dimensions."""
    return _fft_op("IFFT3D", input, name)


def _fft_size(grad: Tensor, rank: int) -> Tensor:
    """The number of points of a transform over the last ``rank`` dims of ``grad``, in the
    dtype of ``grad``."""
    from .array_ops import shape
    from .math_ops import cast, reduce_prod

    dims = grad.shape.as_list()[-rank:] if grad.shape.ndims is not None else [None]
    if None not in dims:
        return convert_to_tensor(np.prod(dims, dtype=np.float64), dtype=grad.dtype)
    return cast(reduce_prod(shape(grad)[-rank:]), grad.dtype)


def _fft_grad_for(inverse_type: str, rank: int, scale_up: bool):
    def grad_fn(op, grad):
        from .math_ops import multiply, realdiv

        transformed = apply_op_output(inverse_type, (grad,), None, inverse_type)
        size = _fft_size(grad, rank)
        return multiply(transformed, size) if scale_up else realdiv(transformed, size)

    return grad_fn


for _type, _rank in _FFT_RANK.items():
    _inverse = _type[1:] if _type.startswith("I") else "I" + _type
    RegisterGradient(_type)(_fft_grad_for(_inverse, _rank, not _type.startswith("I")))


# -- real transforms -------------------------------------------------------------------------------
_RFFT_RANK = {"RFFT": 1, "IRFFT": 1, "RFFT2D": 2, "IRFFT2D": 2, "RFFT3D": 3, "IRFFT3D": 3}


def _transform_axes(op, rank: Optional[int]):
    """The axes of an RFFT/IRFFT (the innermost ``rank``) or of an ND op (its ``axes`` input),
    as non-negative ints when the rank of the input is known; None when unknown."""
    if op.type in _RFFT_RANK:
        n = _RFFT_RANK[op.type]
        return None if rank is None else list(range(rank - n, rank))
    axes = _known_vector(op.inputs[2])
    if axes is None or rank is None:
        return None
    return [normalize_axis(a, rank, f"axes of '{op.type}'") for a in axes]


def _infer_real_fft(op):
    x, fft_length = op.inputs[0], op.inputs[1]
    inverse = op.type.startswith("I")
    check_dtype(x.dtype, COMPLEX_TYPES if inverse else _REAL_TYPES, f"Input 'input' of '{op.type}'")
    check_dtype(fft_length.dtype, frozenset({_dtypes.int32}), f"fft_length of '{op.type}'")
    out_dtype = op.attrs["Treal" if inverse else "Tcomplex"]
    rank = x.shape.ndims
    n = _RFFT_RANK.get(op.type)
    if n is not None and rank is not None and rank < n:
        raise ValueError(f"Shape must be at least rank {n} but is rank {rank}")
    lengths = _known_vector(fft_length)
    axes = _transform_axes(op, rank)
    if rank is None or axes is None:
        return [(out_dtype, TensorShape(None))]
    dims = x.shape.as_list()
    if lengths is None:
        for a in axes:
            dims[a] = None
        return [(out_dtype, TensorShape(dims))]
    if len(lengths) != len(axes):
        raise ValueError(
            f"fft_length of '{op.type}' must have {len(axes)} elements, got {len(lengths)}"
        )
    for a, length in zip(axes, lengths):
        dims[a] = length
    if not inverse:
        dims[axes[-1]] = lengths[-1] // 2 + 1 if lengths[-1] else 0
    return [(out_dtype, TensorShape(dims))]


def _real_fft_kernel(op_type: str):
    inverse = op_type.startswith("I")

    def build(attrs):
        out_np = _dtypes.numpy_dtype(attrs["Treal" if inverse else "Tcomplex"])

        def run(x, fft_length, axes=None):
            lengths = [int(v) for v in np.reshape(fft_length, [-1])]
            if axes is None:
                rank = _RFFT_RANK[op_type]
                if x.ndim < rank:
                    _fail(op_type, f"input must have rank at least {rank}, got shape {x.shape}")
                axes = list(range(x.ndim - rank, x.ndim))
            else:
                axes = [int(a) % max(x.ndim, 1) for a in np.reshape(axes, [-1])]
            if len(lengths) != len(axes):
                _fail(op_type, f"fft_length must have {len(axes)} elements, got {lengths}")
            if any(n < 0 for n in lengths):
                _fail(op_type, f"fft_length must not be negative, got {lengths}")
            shape = list(x.shape)
            for a, n in zip(axes, lengths):
                shape[a] = n
            if not inverse:
                shape[axes[-1]] = lengths[-1] // 2 + 1 if lengths[-1] else 0
            if x.size == 0 or 0 in lengths:
                return np.zeros(shape, out_np)
            if inverse:
                return np.fft.irfftn(x, s=lengths, axes=axes).astype(out_np, copy=False)
            return np.fft.rfftn(x, s=lengths, axes=axes).astype(out_np, copy=False)

        return run

    return build


for _type in _RFFT_RANK:
    define_op(_type, _infer_real_fft, _real_fft_kernel(_type))
for _type in ("RFFTND", "IRFFTND"):
    define_op(_type, _infer_real_fft, _real_fft_kernel(_type))


def _rfft_function(op_type: str, rank: int, default_name: str):
    inverse = op_type.startswith("I")

    def transform(input_tensor, fft_length=None, name: Optional[str] = None) -> Tensor:
        graph = graph_of((input_tensor, fft_length))
        with graph.as_default(), graph.name_scope(name or default_name) as scope:
            x = convert_to_tensor(
                input_tensor,
                preferred_dtype=_dtypes.complex64 if inverse else _dtypes.float32,
                name="input_tensor",
            )
            allowed = COMPLEX_TYPES if inverse else _REAL_TYPES
            if x.dtype not in allowed:
                kind = "IRFFT" if inverse else "RFFT"
                types = "tf.complex64 or tf.complex128" if inverse else "tf.float32 or tf.float64"
                raise ValueError(f"{kind} requires {types} inputs, got: {x}")
            if x.shape.ndims is not None and x.shape.ndims < rank:
                raise ValueError(
                    f"Shape {x.shape} must have rank at least {rank} for {default_name}"
                )
            if fft_length is None:
                fft_length = _inferred_fft_length(x, rank, inverse)
            else:
                fft_length = convert_to_tensor(fft_length, _dtypes.int32, name="fft_length")
            attrs = {"Treal": x.dtype.real_dtype} if inverse else {"Tcomplex": _COMPLEX_OF[x.dtype]}
            return apply_op_output(op_type, (x, fft_length), attrs, scope)

    transform.__name__ = default_name
    transform.__doc__ = (
        f"The {'inverse ' if inverse else ''}{rank}-D real discrete Fourier transform over the "
        f"innermost {rank} dimension{'s' if rank > 1 else ''}.  ``fft_length`` (int32, "
        f"{rank} element{'s' if rank > 1 else ''}) crops or zero-pads the "
        f"{'spectrum' if inverse else 'signal'}; by default it is the signal's size"
        f"{' (2 * (n - 1) for the innermost)' if inverse else ''}."
    )
    return transform


def _inferred_fft_length(x: Tensor, rank: int, inverse: bool) -> Tensor:
    from .array_ops import shape

    dims = x.shape.as_list()[-rank:] if x.shape.ndims is not None else [None]
    if None not in dims:
        if inverse and dims:
            dims[-1] = max(0, 2 * (dims[-1] - 1))
        return convert_to_tensor(np.array(dims, np.int32), name="fft_length")
    lengths = shape(x)[-rank:]
    if not inverse:
        return lengths
    from .array_ops import concat
    from .math_ops import maximum, multiply, subtract

    last = maximum(multiply(subtract(lengths[-1:], 1), 2), 0)
    return concat([lengths[:-1], last], 0, name="fft_length")


rfft = _rfft_function("RFFT", 1, "rfft")
irfft = _rfft_function("IRFFT", 1, "irfft")
rfft2d = _rfft_function("RFFT2D", 2, "rfft2d")
irfft2d = _rfft_function("IRFFT2D", 2, "irfft2d")
rfft3d = _rfft_function("RFFT3D", 3, "rfft3d")
irfft3d = _rfft_function("IRFFT3D", 3, "irfft3d")


def _rfft_adjoint(g: np.ndarray, x_shape, lengths, axes, out_np) -> np.ndarray:
    """``Re(A^H g)`` for the RFFT ``A`` over ``axes`` with ``lengths``, cropped or padded back
    to the input's shape: the gradient of RFFT in TensorFlow's convention."""
    full_shape = list(g.shape)
    full_shape[axes[-1]] = lengths[-1]
    full = np.zeros(full_shape, np.complex128)
    index = [slice(None)] * g.ndim
    index[axes[-1]] = slice(0, g.shape[axes[-1]])
    full[tuple(index)] = g
    back = np.fft.ifftn(full, axes=axes).real * float(np.prod(lengths))
    return _fit(back, x_shape, axes).astype(out_np, copy=False)


def _fit(value: np.ndarray, shape, axes) -> np.ndarray:
    """``value`` cropped or zero-padded along ``axes`` to ``shape``."""
    crop = [slice(None)] * value.ndim
    pad = [(0, 0)] * value.ndim
    for a in axes:
        crop[a] = slice(0, shape[a])
        pad[a] = (0, max(0, shape[a] - value.shape[a]))
    return np.pad(value[tuple(crop)], pad)


def _irfft_adjoint(g: np.ndarray, x_shape, lengths, axes, out_np) -> np.ndarray:
    """TensorFlow's gradient of IRFFT: ``rfft(g) * mask / n``, the mask 1 for the bins of
    frequency 0 and n/2 and 2 for the others (each stands for itself and its mirror)."""
    spectrum = np.fft.rfftn(g, s=lengths, axes=axes)
    bins = spectrum.shape[axes[-1]]
    mask = np.full(bins, 2.0)
    mask[0] = 1.0
    if lengths[-1] % 2 == 0:
        mask[-1] = 1.0
    mask_shape = [1] * g.ndim
    mask_shape[axes[-1]] = bins
    spectrum = spectrum * mask.reshape(mask_shape) / float(np.prod(lengths))
    return _fit(spectrum, x_shape, axes).astype(out_np, copy=False)


def _infer_real_fft_grad(op):
    x = op.inputs[1]
    return [(x.dtype, x.shape)]


def _real_fft_grad_kernel(attrs):
    forward, axes_attr = attrs["forward"], attrs.get("rank")
    adjoint = _irfft_adjoint if forward.startswith("I") else _rfft_adjoint

    def run(g, x, fft_length, axes=None):
        lengths = [int(v) for v in np.reshape(fft_length, [-1])]
        if axes is None:
            axes = list(range(x.ndim - axes_attr, x.ndim))
        else:
            axes = [int(a) % max(x.ndim, 1) for a in np.reshape(axes, [-1])]
        if g.size == 0 or x.size == 0 or 0 in lengths:
            return np.zeros(x.shape, x.dtype)
        return adjoint(g, x.shape, lengths, axes, x.dtype)

    return run


define_op("RealFFTGrad", _infer_real_fft_grad, _real_fft_grad_kernel)


def _real_fft_grad(op, grad):
    rank = _RFFT_RANK.get(op.type)
    attrs = {"forward": op.type, "rank": rank}
    inputs = (grad, op.inputs[0]) + tuple(op.inputs[1:])
    return [apply_op_output("RealFFTGrad", inputs, attrs, "RealFFTGrad")] + [None] * (
        len(op.inputs) - 1
    )


for _type in list(_RFFT_RANK) + ["RFFTND", "IRFFTND"]:
    RegisterGradient(_type)(_real_fft_grad)
NotDifferentiable("RealFFTGrad")


# -- N-D transforms over chosen axes ---------------------------------------------------------------
def _infer_fftnd(op):
    x, fft_length, axes = op.inputs
    check_dtype(x.dtype, COMPLEX_TYPES, f"Input 'input' of '{op.type}'")
    rank = x.shape.ndims
    lengths, axes_value = _known_vector(fft_length), _known_vector(axes)
    if rank is None or lengths is None or axes_value is None:
        return [(x.dtype, TensorShape(None) if rank is None else TensorShape([None] * rank))]
    dims = x.shape.as_list()
    for a, n in zip(axes_value, lengths):
        dims[normalize_axis(a, rank, f"axes of '{op.type}'")] = n
    return [(x.dtype, TensorShape(dims))]


def _fftnd_kernel(op_type: str):
    transform = np.fft.ifftn if op_type.startswith("I") else np.fft.fftn

    def build(attrs):
        def run(x, fft_length, axes):
            lengths = [int(v) for v in np.reshape(fft_length, [-1])]
            axes = [int(a) for a in np.reshape(axes, [-1])]
            if len(lengths) != len(axes):
                _fail(op_type, f"fft_length {lengths} and axes {axes} differ in size")
            shape = list(x.shape)
            for a, n in zip(axes, lengths):
                shape[a] = n
            if x.size == 0 or 0 in lengths:
                return np.zeros(shape, x.dtype)
            return transform(x, s=lengths, axes=axes).astype(x.dtype, copy=False)

        return run

    return build


for _type in ("FFTND", "IFFTND"):
    define_op(_type, _infer_fftnd, _fftnd_kernel(_type))


def _fftnd_grad_for(inverse_type: str, scale_up: bool):
    def grad_fn(op, grad):
        from .array_ops import shape
        from .math_ops import cast, multiply, realdiv, reduce_prod

        x, fft_length, axes = op.inputs
        # The adjoint transform of the full-size gradient, cropped or padded back to x.
        transformed = apply_op_output(inverse_type, (grad, fft_length, axes), None, inverse_type)
        size = cast(reduce_prod(fft_length), grad.dtype)
        scaled = multiply(transformed, size) if scale_up else realdiv(transformed, size)
        back = apply_op_output("FitToShape", (scaled, shape(x), axes), None, "FitToShape")
        return back, None, None

    return grad_fn


def _infer_fit(op):
    x, shape, _ = op.inputs
    rank = x.shape.ndims
    dims = _known_vector(shape)
    return [(x.dtype, TensorShape(dims) if dims is not None else TensorShape([None] * rank))]


def _fit_kernel(attrs):
    def run(x, shape, axes):
        axes = [int(a) % max(x.ndim, 1) for a in np.reshape(axes, [-1])]
        return _fit(x, [int(d) for d in shape], axes)

    return run


define_op("FitToShape", _infer_fit, _fit_kernel)
NotDifferentiable("FitToShape")
RegisterGradient("FFTND")(_fftnd_grad_for("IFFTND", True))
RegisterGradient("IFFTND")(_fftnd_grad_for("FFTND", False))


def _nd_inputs(x: Tensor, fft_length, axes, inverse_real: bool):
    """``fft_length`` and ``axes`` as int32 tensors: by default all axes, and the input's size
    along them (``2 * (n - 1)`` for the last one of an IRFFTND).  (TensorFlow's wrappers take
    the whole shape as the default ``fft_length`` even when ``axes`` is given, which its
    GPU-only kernels then refuse; here the default follows ``axes``.)"""
    from .array_ops import shape
    from .gather_ops import gather

    rank = x.shape.ndims
    if rank is None and axes is None:
        raise ValueError("The rank of the input must be known when axes is None")
    if axes is None:
        axes = list(range(rank))
    axes_t = convert_to_tensor(axes, _dtypes.int32, name="axes")
    if fft_length is None:
        axes_value = _known_vector(axes_t)
        dims = x.shape.as_list() if rank is not None else None
        if dims is not None and axes_value is not None:
            sizes = [dims[normalize_axis(a, rank, "axes")] for a in axes_value]
        else:
            sizes = [None]
        if None in sizes:
            if inverse_real:
                raise ValueError("irfftnd needs fft_length when the input's shape is not known")
            fft_length = gather(shape(x), axes_t)
        else:
            if inverse_real and sizes:
                sizes[-1] = max(0, 2 * (sizes[-1] - 1))
            fft_length = np.array(sizes, np.int32)
    return convert_to_tensor(fft_length, _dtypes.int32, name="fft_length"), axes_t


def _raw_nd(op_type: str, inverse_real: bool = False):
    def transform(input, fft_length, axes, name: Optional[str] = None, **attrs) -> Tensor:  # noqa: A002
        graph = graph_of((input, fft_length, axes))
        with graph.as_default(), graph.name_scope(name or op_type) as scope:
            x = convert_to_tensor(input, name="input")
            lengths = convert_to_tensor(fft_length, _dtypes.int32, name="fft_length")
            axes_t = convert_to_tensor(axes, _dtypes.int32, name="axes")
            return apply_op_output(op_type, (x, lengths, axes_t), attrs or None, scope)

    return transform


_fftnd_raw = _raw_nd("FFTND")
_ifftnd_raw = _raw_nd("IFFTND")
_rfftnd_raw = _raw_nd("RFFTND")
_irfftnd_raw = _raw_nd("IRFFTND")


def fftnd(input, fft_length, axes, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The N-D discrete Fourier transform of a complex tensor over ``axes``, the input cropped
    or zero-padded to ``fft_length`` along them (TensorFlow's ``FFTND`` op)."""
    return _fftnd_raw(input, fft_length, axes, name)


def ifftnd(input, fft_length, axes, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse N-D discrete Fourier transform over ``axes`` (TensorFlow's ``IFFTND``)."""
    return _ifftnd_raw(input, fft_length, axes, name)


def rfftnd(
    input,  # noqa: A002
    fft_length,
    axes,
    Tcomplex=_dtypes.complex64,  # noqa: N803 - TensorFlow's attribute name
    name: Optional[str] = None,
) -> Tensor:
    """The N-D real discrete Fourier transform over ``axes`` (TensorFlow's ``RFFTND``): the
    last axis keeps ``fft_length[-1] // 2 + 1`` bins.  ``Tcomplex`` is complex64 or
    complex128."""
    return _real_nd("RFFTND", input, fft_length, axes, {"Tcomplex": Tcomplex}, name)


def irfftnd(
    input,  # noqa: A002
    fft_length,
    axes,
    Treal=_dtypes.float32,  # noqa: N803 - TensorFlow's attribute name
    name: Optional[str] = None,
) -> Tensor:
    """The inverse N-D real discrete Fourier transform over ``axes`` (TensorFlow's
    ``IRFFTND``).  ``Treal`` is float32 or float64."""
    return _real_nd("IRFFTND", input, fft_length, axes, {"Treal": Treal}, name)


def _real_nd(op_type, input, fft_length, axes, attrs, name):  # noqa: A002
    key, value = next(iter(attrs.items()))
    value = _dtypes.as_dtype(value)
    allowed = COMPLEX_TYPES if key == "Tcomplex" else FLOAT_TYPES - {_dtypes.float16}
    if value not in allowed:
        raise TypeError(f"{key} of '{op_type}' must be one of {sorted(d.name for d in allowed)}")
    graph = graph_of((input, fft_length, axes))
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        x = convert_to_tensor(input, name="input")
        lengths = convert_to_tensor(fft_length, _dtypes.int32, name="fft_length")
        axes_t = convert_to_tensor(axes, _dtypes.int32, name="axes")
        expected = value.real_dtype if key == "Tcomplex" else _COMPLEX_OF[value]
        if x.dtype is not expected:
            raise TypeError(
                f"Input 'input' of '{op_type}' has dtype {x.dtype.name}, expected "
                f"{expected.name} for {key}={value.name}"
            )
        return apply_op_output(op_type, (x, lengths, axes_t), {key: value}, scope)


def _normed(x: Tensor, fft_length: Tensor, norm: Optional[str], forward: bool) -> Tensor:
    """The input scaled for ``norm`` as TensorFlow's wrappers do: "backward" (None) leaves it,
    "forward" and "ortho" divide a forward transform's input by n or sqrt(n) (and multiply an
    inverse's, whose kernel divides by n)."""
    from .math_ops import cast, multiply, realdiv, reduce_prod, sqrt

    if norm in (None, "backward"):
        return x
    if norm not in ("forward", "ortho"):
        raise ValueError(f'norm must be None, "backward", "forward" or "ortho", got {norm!r}')
    real = x.dtype.real_dtype
    n = cast(reduce_prod(fft_length), real)
    if norm == "ortho":
        n = sqrt(n)
    if x.dtype.is_complex:
        from .complex_ops import complex as make_complex

        n = make_complex(n, n * 0)
    return realdiv(x, n) if forward else multiply(x, n)


def _signal_nd(op_type: str, default_name: str):
    inverse = op_type.startswith("I")
    real = "R" in op_type

    def transform(
        input_tensor,
        fft_length=None,
        axes=None,
        norm: Optional[str] = None,
        name: Optional[str] = None,
    ) -> Tensor:
        graph = graph_of((input_tensor, fft_length, axes))
        with graph.as_default(), graph.name_scope(name or default_name) as scope:
            wants_complex = inverse or not real
            x = convert_to_tensor(
                input_tensor,
                preferred_dtype=_dtypes.complex64 if wants_complex else _dtypes.float32,
                name="input_tensor",
            )
            if real and not inverse and x.dtype not in _REAL_TYPES:
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            if (inverse or not real) and x.dtype not in COMPLEX_TYPES:
                what = "IRFFT" if real else default_name
                raise ValueError(f"{what} requires tf.complex64 or tf.complex128 inputs, got: {x}")
            lengths, axes_t = _nd_inputs(x, fft_length, axes, real and inverse)
            x = _normed(x, lengths, norm, not inverse)
            if real:
                attrs = (
                    {"Treal": x.dtype.real_dtype} if inverse else {"Tcomplex": _COMPLEX_OF[x.dtype]}
                )
            else:
                attrs = None
            return apply_op_output(op_type, (x, lengths, axes_t), attrs, scope)

    transform.__name__ = default_name
    kind = ("inverse " if inverse else "") + ("real " if real else "")
    transform.__doc__ = (
        f"The {kind}N-D discrete Fourier transform over ``axes`` (all, by default), the "
        "input cropped or zero-padded to ``fft_length`` along them (its own size, by "
        'default); ``norm`` is None or "backward", "forward" or "ortho", as numpy\'s.'
    )
    return transform


signal_fftnd = _signal_nd("FFTND", "fftnd")
signal_ifftnd = _signal_nd("IFFTND", "ifftnd")
signal_rfftnd = _signal_nd("RFFTND", "rfftnd")
signal_irfftnd = _signal_nd("IRFFTND", "irfftnd")


# -- fftshift --------------------------------------------------------------------------------------
def _shift(x, axes, name: Optional[str], default_name: str, sign: int) -> Tensor:
    from .array_ops import shape
    from .extra_array_ops import roll
    from .gather_ops import gather
    from .math_ops import floordiv, multiply

    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or default_name):
        x = convert_to_tensor(x, name="x")
        rank = x.shape.ndims
        axes = static_axis(axes, f"axes of {default_name}")
        if axes is None:
            if rank is None:
                raise ValueError(f"{default_name} needs axes when the rank of x is unknown")
            axes = tuple(range(rank))
        axes_list = [axes] if isinstance(axes, int) else list(axes)
        if rank is not None:
            axes_list = [normalize_axis(a, rank, f"axes of {default_name}") for a in axes_list]
        elif any(a < 0 for a in axes_list):
            raise ValueError(f"{default_name} needs the rank of x for negative axes")
        dims = [x.shape.as_list()[a] if rank is not None else None for a in axes_list]
        if None not in dims:
            shifts = [sign * (d // 2) for d in dims]
        else:
            half = floordiv(gather(shape(x), axes_list), 2)
            shifts = [multiply(half[i], sign) for i in range(len(axes_list))]
        if not axes_list:
            return x
        return roll(x, shifts, axes_list)


def fftshift(x, axes=None, name: Optional[str] = None) -> Tensor:
    """``x`` rolled so that the zero-frequency bin is in the middle of each of ``axes`` (all
    of them by default), as numpy's ``fftshift``."""
    return _shift(x, axes, name, "fftshift", 1)


def ifftshift(x, axes=None, name: Optional[str] = None) -> Tensor:
    """The inverse of `fftshift`."""
    return _shift(x, axes, name, "ifftshift", -1)
