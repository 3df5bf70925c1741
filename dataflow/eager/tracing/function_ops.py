"""Ops made from Python functions that are traced or converted first: `vectorized_map` (the
structure of ``fn``'s results is found by tracing it once) and
`nondifferentiable_batch_function` (AutoGraph converts the function)."""

from __future__ import annotations

import functools

from primitives.functional_ops import map_fn

from ...framework import nest
from ...framework.graph import Tensor, control_dependencies, name_scope
from ...framework.tensor_conversion import convert_to_tensor
from ...framework.tensor_spec import TensorSpec
from ...ops.array_ops import shape, stop_gradient
from ...ops.check_ops import assert_less_equal
from ..autograph import to_graph
from .tracing import function

__all__ = ["nondifferentiable_batch_function", "vectorized_map"]


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each element of ``elems`` (a tensor or a nested structure of them,
    split along dimension 0), the results stacked: the values of TensorFlow's vectorized map.
    TensorFlow rewrites ``fn`` into batched ops where it can and otherwise (with
    ``fallback_to_while_loop``) runs it in a while loop; here it always runs in the loop of
    `map_fn`, so ``fallback_to_while_loop`` and ``warn`` (about that fallback) change nothing.
    The results' structure and dtypes are found by tracing ``fn`` once on the elements'
    specs, apart from the graph."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("vectorized_map needs at least one element tensor in elems")
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"vectorized_map: elems must have a first dimension, got {t}")
    elems = nest.pack_sequence_as(elems, flat)
    specs = nest.pack_sequence_as(elems, [TensorSpec(t.shape[1:], t.dtype) for t in flat])
    traced = function(fn, autograph=False).get_concrete_function(specs)
    outputs = nest.flatten(traced.structured_outputs)
    if any(not isinstance(o, Tensor) for o in outputs):
        raise TypeError(
            "vectorized_map: fn must return tensors (or a nested structure of them), got "
            f"{traced.structured_outputs!r}"
        )
    signature = nest.pack_sequence_as(traced.structured_outputs, [o.dtype for o in outputs])
    return map_fn(fn, elems, fn_output_signature=signature, name="vectorized_map")


def nondifferentiable_batch_function(
    num_batch_threads,
    max_batch_size,
    batch_timeout_micros,
    allowed_batch_sizes=None,
    max_enqueued_batches=10,
    autograph=True,
    enable_large_batch_splitting=True,
):
    """A decorator for a function of tensors whose rows are independent (dimension 0 is the
    batch): a call gives the function's results, with no gradient.  TensorFlow also gathers
    the rows of calls that run at the same time into one batch (of at most
    ``max_batch_size`` rows, padded to one of ``allowed_batch_sizes``, waiting at most
    ``batch_timeout_micros``, with ``num_batch_threads`` threads), which gives such a function
    the same results; here each call runs on its own rows.  A call of more than
    ``max_batch_size`` rows is an ``InvalidArgumentError`` when it runs, as in TensorFlow."""
    if max_batch_size < 1 or num_batch_threads < 1:
        raise ValueError("max_batch_size and num_batch_threads must be positive")
    if allowed_batch_sizes is not None:
        sizes = list(allowed_batch_sizes)
        if sizes != sorted(set(sizes)) or any(size < 1 for size in sizes):
            raise ValueError(f"allowed_batch_sizes must increase, got {sizes}")

    def decorator(fn):
        body = to_graph(fn) if autograph else fn

        @functools.wraps(fn)
        def decorated(*args):
            with name_scope("batch"):
                tensors = [convert_to_tensor(a) for a in args]
                checks = [
                    assert_less_equal(
                        shape(t)[0],
                        max_batch_size,
                        message=f"Task size is larger than maximum input batch size "
                        f"{max_batch_size}",
                    )
                    for t in tensors
                ]
                with control_dependencies(checks):
                    outputs = body(*tensors)
                flat = [stop_gradient(convert_to_tensor(o)) for o in nest.flatten(outputs)]
                return nest.pack_sequence_as(outputs, flat)

        return decorated

    return decorator
