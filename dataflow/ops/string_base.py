"""What the string op modules share: the string dtypes, checks of string inputs and object arrays
of bytes."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_conversion import convert_to_tensor
from .math_ops import (
    check_dtype,
)

STRING_TYPES = frozenset({_dtypes.string})


_UNITS = ("BYTE", "UTF8_CHAR")


def _strings(shape, items) -> np.ndarray:
    """An object array of ``shape`` holding ``items`` (bytes) in row-major order."""
    result = np.empty(len(items), dtype=object)
    result[:] = items
    return result.reshape(shape)


def _check_string_input(op, index: int = 0, what: str = "input") -> Tensor:
    tensor = op.inputs[index]
    check_dtype(tensor.dtype, STRING_TYPES, f"Input '{what}' of '{op.type}'")
    return tensor


def _check_unit(unit: str) -> str:
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {', '.join(_UNITS)}, got {unit!r}")
    return unit


def _string_input(value, name: str) -> Tensor:
    return (
        value if isinstance(value, Tensor) else convert_to_tensor(value, _dtypes.string, name=name)
    )
