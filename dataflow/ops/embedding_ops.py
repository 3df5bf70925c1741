"""``nn.embedding_lookup``: rows of an embedding table (or of a table split into shards).

With one table it is a ``gather`` along axis 0, so its gradient with respect to the table is
sparse (`dataflow.indexed_slices.IndexedSlices`): only the rows looked up.  With a list of
shards, id ``i`` lives in shard ``i % n`` at row ``i // n`` (``partition_strategy="mod"``,
the default) or in the shard whose contiguous block of rows holds it (``"div"``: the first
``rows % n`` shards hold one row more), as in TensorFlow.
"""

from __future__ import annotations

from typing import Optional

from .. import dtypes as _dtypes
from ..graph import convert_to_tensor, name_scope
from .array_ops import concat, gather, identity, ones, reshape, shape, zeros_like
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

__all__ = ["embedding_lookup"]


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
