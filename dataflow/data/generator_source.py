"""``Dataset.from_generator``: a pipeline stage whose elements a Python generator yields.

Each pass over the dataset calls the generator function again (with ``args``, the values of the
stage's tensors, passed as numpy values: a scalar as a numpy scalar, a string as ``bytes``),
and each element it yields is checked and converted as TensorFlow 2.21 does it, which is one of
two ways:

- *by types and shapes* when the element has a structure (a tuple or a dict of components) or
  its one component has a shape of known rank: the element must have the structure of
  ``output_types``, each component converts with numpy to its dtype (``1.5`` for ``int64``
  is ``1``), and must fit its shape;
- *by spec* when it is one component of unknown rank: the component converts as a tensor of
  its dtype would be made (``1.5`` for ``int64`` fails; ``1`` for ``float32`` is ``1.0``).

An element that does not fit, and any error the generator raises, fails the read with
`InvalidArgumentError`, whose message starts with the Python error (``TypeError: `generator`
yielded an element of shape (2,) where an element of shape () was expected.``), as the
``py_func`` of TensorFlow's generator dataset reports it.  The generator runs in the thread that
reads the dataset, one element per read.  A graph holding it cannot be saved, as one with
``py_func`` cannot.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, OpError
from ..framework.tensor_spec import TensorSpec
from ..ops.constant_op import _as_constant_array
from .pipeline import _STAGE_FACTORIES


class _GeneratorSource:
    """The generator of a ``from_generator`` stage and how its elements are checked: the
    element ``structure`` (its nesting, with dtypes as leaves) and the flat ``types`` and
    ``shapes``; ``by_spec`` chooses the second way of the module docstring."""

    def __init__(self, generator, structure, types: list, shapes: list, by_spec: bool):
        self.generator = generator
        self.structure = structure
        self.types = list(types)
        self.shapes = list(shapes)
        self.by_spec = by_spec

    def __repr__(self) -> str:
        return "<the generator given to Dataset.from_generator>"

    def __call__(self, args: list, sessions=None):
        """The elements of one pass, as tuples of arrays (``sessions``: unused, as every
        function of a pipeline is given them)."""
        try:
            elements = iter(self.generator(*args))
        except Exception as e:
            raise _read_error(e) from e
        while True:
            try:
                values = next(elements)
            except StopIteration:
                return
            except Exception as e:
                raise _read_error(e) from e
            try:
                yield self._converted(values)
            except TypeError as e:
                raise _read_error(e) from e

    def _converted(self, values) -> tuple:
        if self.by_spec:
            (dtype,), (shape,) = self.types, self.shapes
            try:
                return (_as_constant_array(values, dtype),)
            except (TypeError, ValueError):
                raise TypeError(
                    "`generator` yielded an element that did not match the expected structure. "
                    f"The expected structure was {TensorSpec(shape, dtype)}, but the yielded "
                    f"element was {values}."
                ) from None
        try:
            flat = _flatten_up_to(self.structure, values)
        except (TypeError, ValueError):
            raise TypeError(
                "`generator` yielded an element that did not match the expected structure. The "
                f"expected structure was {self.structure}, but the yielded element was {values}."
            ) from None
        arrays = []
        for value, dtype, shape in zip(flat, self.types, self.shapes):
            try:
                if dtype == _dtypes.string:
                    array = _dtypes.string_array(value)
                else:
                    array = np.asarray(value, dtype=_dtypes.numpy_dtype(dtype))
            except (TypeError, ValueError):
                raise TypeError(
                    "`generator` yielded an element that could not be converted to the expected "
                    f"type. The expected type was {dtype.name}, but the yielded element was "
                    f"{value}."
                ) from None
            if not shape.is_compatible_with(array.shape):
                raise TypeError(
                    f"`generator` yielded an element of shape {array.shape} where an element of "
                    f"shape {tuple(shape.as_list())} was expected."
                )
            arrays.append(array)
        return tuple(arrays)


def _flatten_up_to(structure, values) -> list:
    """``values`` flattened to the leaves of ``structure``, whose tuples and dicts it must have
    (a list is one component, as tf.data takes it)."""
    if isinstance(structure, dict):
        if not isinstance(values, dict) or sorted(values) != sorted(structure):
            raise TypeError(f"expected a dict with the keys {sorted(structure)}")
        return [leaf for key in sorted(structure) for leaf in
                _flatten_up_to(structure[key], values[key])]  # fmt: skip
    if isinstance(structure, tuple):
        if not isinstance(values, tuple) or len(values) != len(structure):
            raise TypeError(f"expected a tuple of {len(structure)}")
        return [leaf for s, v in zip(structure, values) for leaf in _flatten_up_to(s, v)]
    return [values]


def _read_error(error: Exception) -> Exception:
    """What reading the dataset raises for ``error``, raised by the generator or its check."""
    if isinstance(error, OpError):
        return error
    return InvalidArgumentError(None, None, f"{type(error).__name__}: {error}")


def _generator_stage(inputs, parents, params, function):
    if function is None:  # a pipeline loaded from a file: its generator was not saved
        raise InvalidArgumentError(
            None, None, "A from_generator dataset has no generator: a saved graph holds none"
        )
    args = [a[()] if np.ndim(a) == 0 else a for a in (np.asarray(x) for x in inputs)]
    return lambda: function(args)


_STAGE_FACTORIES["generator"] = _generator_stage
