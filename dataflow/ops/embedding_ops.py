"""``nn.embedding_lookup``: rows of an embedding table (or of a table split into shards).

With one table it is a ``gather`` along axis 0, so its gradient with respect to the table is
sparse (`dataflow.framework.indexed_slices.IndexedSlices`): only the rows looked up.  With a list of
shards, id ``i`` lives in shard ``i % n`` at row ``i // n`` (``partition_strategy="mod"``,
the default) or in the shard whose contiguous block of rows holds it (``"div"``: the first
``rows % n`` shards hold one row more), as in TensorFlow.
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from . import slice_ops as _slices
from .array_ops import concat, identity, ones, reshape, shape, zeros_like
from .extra_math_ops import div_no_nan
from .gather_ops import gather
from .math_ops import (
    add,
    cast,
    equal,
    floordiv,
    less,
    maximum,
    minimum,
    mod,
    multiply,
    subtract,
    where_v2,
)

__all__ = ["embedding_lookup", "embedding_lookup_sparse", "safe_embedding_lookup_sparse"]


def embedding_lookup(
    params,
    ids,
    partition_strategy: str = "mod",
    name: Optional[str] = None,
    validate_indices: bool = True,
    max_norm=None,
):
    """The rows of ``params`` (a table, or a list of shards of one) at ``ids``; the result has
    shape ``ids.shape + params.shape[1:]``.  With ``max_norm`` each row is scaled down to
    that l2 norm when larger."""
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    shards = list(params) if isinstance(params, (list, tuple)) else [params]
    if not shards:
        raise ValueError("Need at least one param")
    with name_scope(name or "embedding_lookup") as scope:
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            looked_up = gather(shards[0], ids, name=scope)
            return identity(_clip(looked_up, ids, max_norm))
        looked_up = _clip(_sharded_lookup(shards, ids, partition_strategy), ids, max_norm)
        return identity(looked_up, name=scope)


def _clip(looked_up, ids, max_norm):
    """Each embedding of ``looked_up`` scaled down to an l2 norm of ``max_norm`` when larger
    (the norm over the embedding's own dimensions), as TensorFlow's ``max_norm``."""
    if max_norm is None:
        return looked_up
    from .clip_ops import clip_by_norm

    ids_rank, rank = ids.shape.ndims, looked_up.shape.ndims
    if ids_rank is None or rank is None:
        from .array_ops import range as range_
        from .array_ops import rank as rank_of

        axes = range_(rank_of(ids), rank_of(looked_up))
    else:
        axes = list(range(ids_rank, rank))
    return clip_by_norm(looked_up, max_norm, axes=axes)


def _sharded_lookup(shards: list, ids, strategy: str):
    """Each id looked up in its shard: every shard gathers its (clipped) rows for all ids, and
    each id keeps the row of its own shard, so a shard's gradient holds rows of only its ids."""
    n = len(shards)
    ids = cast(ids, _dtypes.int64)
    if strategy == "mod":
        shard_of = mod(ids, n)
        row_of = floordiv(ids, n)
    else:
        sizes = [cast(shape(convert_to_tensor(p))[0], _dtypes.int64) for p in shards]
        total = sizes[0]
        for s in sizes[1:]:
            total = add(total, s)
        per_shard = floordiv(total, n)
        extras = mod(total, n)  # the first `extras` shards hold per_shard + 1 rows
        big = add(per_shard, 1)
        in_big_shards = multiply(extras, big)  # the ids that the bigger shards hold
        past = subtract(ids, in_big_shards)
        is_early = less(ids, in_big_shards)
        shard_of = where_v2(is_early, floordiv(ids, big), add(extras, floordiv(past, per_shard)))
        row_of = where_v2(is_early, mod(ids, big), mod(past, per_shard))
    result = None
    for k, shard in enumerate(shards):
        shard = convert_to_tensor(shard)
        rows = cast(shape(shard)[0], _dtypes.int64)
        mine = equal(shard_of, k)
        safe_rows = minimum(maximum(where_v2(mine, row_of, 0), 0), subtract(rows, 1))
        looked_up = gather(shard, safe_rows)
        extra_dims = looked_up.shape.ndims - ids.shape.ndims
        keep = reshape(mine, concat([shape(ids), ones([extra_dims], _dtypes.int32)], 0))
        part = where_v2(keep, looked_up, zeros_like(looked_up))
        result = part if result is None else add(result, part)
    return result


# -- sparse lookups --------------------------------------------------------------------------------
def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


_COMBINERS = ("sum", "mean", "sqrtn")


def embedding_lookup_sparse(
    params,
    sp_ids,
    sp_weights,
    partition_strategy: str = "mod",
    name: Optional[str] = None,
    combiner: Optional[str] = None,
    max_norm=None,
    allow_fast_lookup: bool = False,
) -> Tensor:
    """For each row of the SparseTensor ``sp_ids``, the embeddings of its ids combined by
    ``combiner`` ("mean", the default, "sum" or "sqrtn"), weighted by ``sp_weights`` (a
    SparseTensor of the same indices, or None for weight 1).  Row ``i`` of the result is the
    combination for the ``i``-th row of ``sp_ids``; rows past the last one with ids are absent,
    rows without ids in between are zeros (TensorFlow's segment semantics).
    ``allow_fast_lookup`` gathers a single (unsharded) table's rows at the ids directly, without
    first making the ids unique (same values, as in TensorFlow); ``max_norm`` scales each
    embedding down to that l2 norm before combining."""
    from ..framework.sparse_tensor import SparseTensor
    from .segment_ops import segment_sum, unique

    combiner = "mean" if combiner is None else combiner
    if combiner not in _COMBINERS:
        _fail("embedding_lookup_sparse", f"combiner must be one of {_COMBINERS}, got {combiner!r}")
    if not isinstance(sp_ids, SparseTensor):
        _fail("embedding_lookup_sparse", "sp_ids must be a SparseTensor", TypeError)
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        _fail("embedding_lookup_sparse", "sp_weights must be a SparseTensor or None", TypeError)
    graph = sp_ids.values.graph
    with graph.as_default(), graph.name_scope(name or "embedding_lookup_sparse"):
        segment_ids = _m.cast(_slices.slice(sp_ids.indices, [0, 0], [-1, 1]), _dtypes.int32)
        segment_ids = _a.reshape(segment_ids, [-1])
        shards = params if isinstance(params, (list, tuple)) else [params]
        if allow_fast_lookup and len(shards) == 1 and max_norm is None:
            embeddings = _g.gather(shards[0], sp_ids.values)
        else:
            ids, positions = unique(sp_ids.values)
            embeddings = embedding_lookup(
                params, ids, partition_strategy=partition_strategy, max_norm=max_norm
            )
            embeddings = _g.gather(embeddings, positions)
        if sp_weights is None:
            weights = _m.cast(_a.ones_like(segment_ids), embeddings.dtype)
        else:
            weights = _m.cast(sp_weights.values, embeddings.dtype)
        rank = embeddings.shape.ndims
        column = _a.reshape(weights, [-1] + [1] * ((rank or 2) - 1))
        summed = segment_sum(_m.multiply(embeddings, column), segment_ids)
        if combiner == "sum":
            return summed
        if combiner == "mean":
            total = segment_sum(weights, segment_ids)
        else:
            total = _m.sqrt(segment_sum(_m.square(weights), segment_ids))
        total = _a.reshape(total, [-1] + [1] * ((rank or 2) - 1))
        return div_no_nan(summed, total)


def safe_embedding_lookup_sparse(
    embedding_weights,
    sparse_ids,
    sparse_weights=None,
    combiner: str = "mean",
    default_id=None,
    name: Optional[str] = None,
    partition_strategy: str = "div",
    max_norm=None,
    allow_fast_lookup: bool = False,
) -> Tensor:
    """`embedding_lookup_sparse` that tolerates bad input: ids below 0 (and, unless
    ``combiner`` is "sum", weights of 0 or less) are left out, and a row left without ids
    gives the embedding of ``default_id``, or zeros when that is None.  ``sparse_ids`` may have
    any rank of at least 2: the result is ``sparse_ids``' dense shape without its last
    dimension, plus the embedding's dimensions."""
    from ..framework.sparse_tensor import SparseTensor
    from .sparse_extra_ops import sparse_fill_empty_rows, sparse_reshape, sparse_retain

    if embedding_weights is None:
        _fail("safe_embedding_lookup_sparse", f"Missing embedding_weights {embedding_weights}.")
    if not isinstance(embedding_weights, (list, tuple)):
        embedding_weights = [embedding_weights]
    if len(embedding_weights) < 1:
        _fail("safe_embedding_lookup_sparse", f"Missing embedding_weights {embedding_weights}.")
    if not isinstance(sparse_ids, SparseTensor):
        _fail("safe_embedding_lookup_sparse", "sparse_ids must be a SparseTensor", TypeError)
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    graph = sparse_ids.values.graph
    with graph.as_default(), graph.name_scope(name or "embedding_lookup") as scope:
        embedding_weights = [convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape.as_list()[0] if original_shape.shape.ndims == 1 else None
        original_rank = _a.size(original_shape) if rank_dim is None else rank_dim
        sparse_ids = sparse_reshape(
            sparse_ids,
            _a.stack(
                [
                    _m.reduce_prod(_slices.slice(original_shape, [0], [original_rank - 1])),
                    _g.gather(original_shape, original_rank - 1),
                ]
            ),
        )
        if sparse_weights is not None:
            sparse_weights = SparseTensor(
                sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape
            )
        valid = _m.greater_equal(sparse_ids.values, 0)
        if combiner != "sum" and sparse_weights is not None:
            valid = _m.logical_and(valid, _m.greater(sparse_weights.values, 0))
        sparse_ids = sparse_retain(sparse_ids, valid)
        if sparse_weights is not None:
            sparse_weights = sparse_retain(sparse_weights, valid)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(
            embedding_weights,
            sparse_ids,
            sparse_weights,
            partition_strategy=partition_strategy,
            combiner=combiner,
            max_norm=max_norm,
            allow_fast_lookup=allow_fast_lookup,
        )
        if default_id is None:
            is_row_empty = _g.tile(
                _a.reshape(is_row_empty, [-1, 1]), _a.stack([1, _a.shape(result)[1]])
            )
            result = _m.where(is_row_empty, _a.zeros_like(result), result)
        leading = _slices.slice(_m.cast(original_shape, _dtypes.int32), [0], [original_rank - 1])
        final = _a.reshape(
            result, _a.concat([leading, _slices.slice(_a.shape(result), [1], [-1])], 0), name=scope
        )
        return final
