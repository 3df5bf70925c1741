"""Initializers: objects that build the initial value of a variable of a given shape.

Each is TensorFlow 1.x's class of the same name (``tf.compat.v1.glorot_uniform_initializer`` is
``GlorotUniform``, ...): ``init(shape, dtype=None, partition_info=None)`` adds the ops of a
``shape`` tensor of ``dtype`` (the one given to the constructor by default) and returns it;
``get_config()`` gives the constructor's arguments.  ``df.Variable(init([784, 100]))`` and
``get_variable(..., initializer=init)`` use them.

The random ones build ``random_uniform``, ``random_normal`` or ``truncated_normal`` ops, which
take the graph seed and their ``seed`` as every random op (`dataflow.framework.random_seed`).

Variance scaling draws with variance ``scale / n``, where ``n`` is the fan in, the fan out or
their mean (`compute_fans`: for a dense kernel ``[in, out]`` the two dimensions; for a
convolution kernel ``[..., in, out]`` each times the receptive field, the product of the leading
dimensions).  Its ``truncated_normal`` divides the standard deviation by 0.8796..., the standard
deviation of a unit normal cut at two, so that the truncated draws have the variance asked for.
With ``partition_info`` (a partitioned variable) the fans come from the full variable's shape,
``partition_info.full_shape``.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import _user_location
from ..framework.tensor_shape import TensorShape
from . import random_ops
from .array_ops import ones as _ones
from .array_ops import reshape, transpose, zeros
from .constant_op import constant
from .linalg_ops import qr
from .math_ops import multiply, reduce_sum, sign

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "Identity",
    "UniformUnitScaling",
    "identity_initializer",
    "uniform_unit_scaling_initializer",
    "Initializer",
    "Ones",
    "Orthogonal",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "compute_fans",
    "constant_initializer",
    "glorot_normal_initializer",
    "glorot_uniform_initializer",
    "ones_initializer",
    "orthogonal_initializer",
    "random_normal_initializer",
    "random_uniform_initializer",
    "truncated_normal_initializer",
    "variance_scaling_initializer",
    "zeros_initializer",
]

# The standard deviation of a unit normal truncated to [-2, 2].
TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _error(kind: type, initializer: str, message: str) -> Exception:
    return kind(f"{initializer} at {_user_location()}: {message}")


def _float_dtype(dtype, initializer: str) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise _error(
            ValueError, initializer, f"dtype must be a floating point type, got {dtype.name}"
        )
    return dtype


def _static_dims(shape, initializer: str) -> list:
    """The dims of a shape given as a list, tuple or fully known `TensorShape`."""
    dims = TensorShape(shape).as_list() if not isinstance(shape, TensorShape) else shape.as_list()
    if dims is None or None in dims:
        raise _error(ValueError, initializer, f"needs a fully known shape, got {shape}")
    return [int(d) for d in dims]


def compute_fans(shape) -> tuple:
    """``(fan_in, fan_out)`` of a weight of ``shape``: both 1 for a scalar, both the length of a
    vector, the two dims of a matrix, and for ``[..., in, out]`` each times the product of the
    leading (receptive field) dims."""
    dims = [int(d) for d in shape]
    if not dims:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    receptive_field = math.prod(dims[:-2])
    return dims[-2] * receptive_field, dims[-1] * receptive_field


class Initializer:
    """The base of the initializers: callable with ``(shape, dtype=None, partition_info=None)``.

    ``from_config(config)`` rebuilds one from what its ``get_config()`` gave."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config.pop("dtype", None)  # given to each call instead, as TensorFlow advises
        return cls(**config)

    def __repr__(self) -> str:
        arguments = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


class Zeros(Initializer):
    """A tensor of zeros."""

    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return zeros(shape, self.dtype if dtype is None else dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """A tensor of ones."""

    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return _ones(shape, self.dtype if dtype is None else dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """A constant tensor: ``value`` (a scalar, list or array) filled or reshaped to ``shape``,
    as ``constant(value, dtype, shape)`` does (a list of the shape's size, or one value)."""

    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape: bool = False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise _error(
                TypeError,
                "constant_initializer",
                f"value must be a Python scalar, a list or tuple of values, or a numpy array, "
                f"got {type(value).__name__}",
            )
        self.value = value
        self.dtype = _dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        verify = self._verify_shape if verify_shape is None else verify_shape
        dtype = self.dtype if dtype is None else dtype
        return constant(self.value, dtype=dtype, shape=shape, verify_shape=verify)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Draws uniformly from ``[minval, maxval)`` (``maxval`` 1 for floats when None)."""

    def __init__(self, minval=0.0, maxval=None, seed: Optional[int] = None, dtype=_dtypes.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "minval": self.minval,
            "maxval": self.maxval,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class RandomNormal(Initializer):
    """Draws from a normal distribution."""

    def __init__(self, mean=0.0, stddev=1.0, seed: Optional[int] = None, dtype=_dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _float_dtype(dtype, "random_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class TruncatedNormal(Initializer):
    """Draws from a normal distribution, drawing again beyond two standard deviations."""

    def __init__(self, mean=0.0, stddev=1.0, seed: Optional[int] = None, dtype=_dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _float_dtype(dtype, "truncated_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")


class VarianceScaling(Initializer):
    """Draws with variance ``scale / n`` (see the module docstring); ``distribution`` is
    ``"truncated_normal"`` (``"normal"`` is its old name), ``"untruncated_normal"`` or
    ``"uniform"`` (within ``±sqrt(3 * scale / n)``)."""

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: Optional[int] = None,
        dtype=_dtypes.float32,
    ):
        name = "variance_scaling_initializer"
        if not scale > 0.0:
            raise _error(ValueError, name, f"scale must be a positive float, got {scale}")
        if mode not in _MODES:
            raise _error(ValueError, name, f"mode must be one of {_MODES}, got {mode!r}")
        distribution = distribution.lower()
        if distribution not in _DISTRIBUTIONS:
            raise _error(
                ValueError,
                name,
                f"distribution must be one of {_DISTRIBUTIONS}, got {distribution!r}",
            )
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _float_dtype(dtype, name)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        full_shape = shape if partition_info is None else partition_info.full_shape
        fan_in, fan_out = compute_fans(_static_dims(full_shape, type(self).__name__))
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        variance = self.scale / max(1.0, fan[self.mode])
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(variance) / TRUNCATED_NORMAL_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(variance), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * variance)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class GlorotUniform(VarianceScaling):
    """Glorot (Xavier) uniform: variance scaling with scale 1, ``fan_avg``, uniform, that is
    within ``±sqrt(6 / (fan_in + fan_out))``."""

    def __init__(self, seed: Optional[int] = None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Glorot (Xavier) normal: variance scaling with scale 1, ``fan_avg``, truncated normal."""

    def __init__(self, seed: Optional[int] = None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """An orthogonal matrix times ``gain``: the ``q`` of the QR decomposition of a normal draw,
    its columns' signs fixed by ``r``'s diagonal so that it is uniformly distributed.  A shape of
    more than two dims is the matrix ``[prod(shape[:-1]), shape[-1]]`` reshaped; when it has
    fewer rows than columns, its rows are the orthonormal ones."""

    def __init__(self, gain: float = 1.0, seed: Optional[int] = None, dtype=_dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _float_dtype(dtype, "orthogonal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtype
        dims = _static_dims(shape, "orthogonal_initializer")
        if len(dims) < 2:
            raise _error(
                ValueError,
                "orthogonal_initializer",
                f"the shape to initialize must have at least two dimensions, got {dims}",
            )
        rows, columns = math.prod(dims[:-1]), dims[-1]
        flat = (max(rows, columns), min(rows, columns))
        draws = random_ops.random_normal(flat, dtype=dtype, seed=self.seed)
        q, r = qr(draws)
        identity = np.eye(flat[1], dtype=_dtypes.numpy_dtype(dtype))
        diagonal = reduce_sum(multiply(r, identity, name="diag"), 0, name="diag_part")
        q = multiply(q, sign(diagonal), name="mul")
        if rows < columns:
            q = transpose(q)
        return multiply(self.gain, reshape(q, dims), name="mul")

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


# TensorFlow 1.x's lowercase names are the classes themselves.
class UniformUnitScaling(Initializer):
    """Draws uniformly from ``[-limit, limit)``, ``limit = factor * sqrt(3 / input_size)``
    where ``input_size`` is the product of all dimensions but the last (TensorFlow 1.x's
    initializer that keeps the scale of a linear layer's outputs)."""

    def __init__(self, factor: float = 1.0, seed: Optional[int] = None, dtype=_dtypes.float32):
        self.factor = float(factor)
        self.seed = seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else _dtypes.as_dtype(dtype)
        full_shape = shape if partition_info is None else partition_info.full_shape
        input_size = max(math.prod(float(d) for d in list(full_shape)[:-1]), 1.0)
        limit = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """``gain`` times the identity matrix (a 2-D shape only)."""

    def __init__(self, gain: float = 1.0, dtype=_dtypes.float32):
        self.gain = gain
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else _dtypes.as_dtype(dtype)
        full_shape = shape if partition_info is None else partition_info.full_shape
        dims = TensorShape(full_shape).as_list()
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        value = np.eye(*dims) * self.gain
        return constant(value.astype(_dtypes.numpy_dtype(dtype)), dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
uniform_unit_scaling_initializer = UniformUnitScaling
identity_initializer = Identity


def he_normal(seed: Optional[int] = None) -> VarianceScaling:
    """He normal: variance scaling with scale 2, ``fan_in``, truncated normal."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: Optional[int] = None) -> VarianceScaling:
    """He uniform: variance scaling with scale 2, ``fan_in``, uniform."""
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed: Optional[int] = None) -> VarianceScaling:
    """LeCun normal: variance scaling with scale 1, ``fan_in``, truncated normal."""
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: Optional[int] = None) -> VarianceScaling:
    """LeCun uniform: variance scaling with scale 1, ``fan_in``, uniform."""
    return VarianceScaling(1.0, "fan_in", "uniform", seed)
