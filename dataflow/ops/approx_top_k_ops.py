"""``approx_max_k``, ``approx_min_k`` and ``approx_top_k``: the k largest (or smallest) entries
along one axis, for accelerators that trade recall for speed.

On a CPU TensorFlow computes them exactly, and so does dataflow: they are `top_k` along
``reduction_dimension`` (moved last and back), ``recall_target`` being a promise of at least
that recall, which an exact answer keeps.  Their gradient is `top_k`'s.
"""

from __future__ import annotations

from ..framework import dtypes as _dtypes
from ..framework.graph import _user_location
from ..framework.tensor_conversion import convert_to_tensor
from .array_ops import transpose
from .extra_nn_ops import _TopKResult, top_k
from .math_ops import graph_of, negative

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k"]


def _fail(function: str, message: str):
    raise ValueError(f"{function} at {_user_location()}: {message}")


def approx_top_k(
    input,  # noqa: A002
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    is_max_k=True,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """``(values, indices)`` of the ``k`` largest entries along ``reduction_dimension`` (the
    smallest with ``is_max_k=False``), in order; indices are int32."""
    function = "approx_max_k" if is_max_k else "approx_min_k"
    if not 0 < recall_target <= 1:
        _fail(function, f"recall_target must be in (0, 1], got {recall_target}")
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "ApproxTopK"):
        x = convert_to_tensor(input, name="input")
        rank = x.shape.ndims
        if rank is None or rank == 0:
            _fail(function, f"needs an input of known rank >= 1, got shape {x.shape}")
        axis = reduction_dimension + rank if reduction_dimension < 0 else reduction_dimension
        if not 0 <= axis < rank:
            _fail(function, f"reduction_dimension {reduction_dimension} is out of rank {rank}")
        if not is_max_k and x.dtype.is_unsigned:
            _fail(function, f"the smallest entries of unsigned {x.dtype.name} are not supported")
        perm = None
        if axis != rank - 1:
            perm = [d for d in range(rank) if d != axis] + [axis]
            x = transpose(x, perm)
        keyed = x if is_max_k else negative(x)
        values, indices = top_k(keyed, k, index_type=_dtypes.int32)
        if not is_max_k:
            values = negative(values)
        if perm is not None:
            back = [perm.index(d) for d in range(rank)]
            values, indices = transpose(values, back), transpose(indices, back)
        return _TopKResult(values, indices)


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The ``k`` largest entries of ``operand`` along ``reduction_dimension`` and their
    indices."""
    return approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        True,
        reduction_input_size_override,
        aggregate_to_topk,
        name,
    )


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The ``k`` smallest entries of ``operand`` along ``reduction_dimension``, smallest first,
    and their indices."""
    return approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        False,
        reduction_input_size_override,
        aggregate_to_topk,
        name,
    )
