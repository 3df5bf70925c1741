"""Nested structures of lists, tuples, namedtuples and dicts, as ``tf.nest`` treats them.

Dicts are traversed in sorted key order (so two dicts with the same keys flatten alike);
every other object is a leaf.  With ``expand_composites=True`` a composite tensor is a
structure of its component tensors, in TensorFlow's order: a SparseTensor's ``indices``,
``values``, ``dense_shape``; a RaggedTensor's ``flat_values`` then its row splits, outermost
first; an IndexedSlices' ``values``, ``indices`` (and ``dense_shape`` when it has one).
"""

from __future__ import annotations

from collections.abc import Callable, KeysView, ValuesView
from typing import Any


def is_nested(seq: Any) -> bool:
    """Whether ``seq`` is a list, tuple (a namedtuple too) or dict, not a leaf."""
    return isinstance(seq, (list, tuple, dict))


class _Components(list):
    """The component tensors a composite tensor stands for under ``expand_composites``."""


def _composite_classes() -> tuple:
    from .indexed_slices import IndexedSlices
    from .ragged_tensor import RaggedTensor
    from .sparse_tensor import SparseTensor

    return IndexedSlices, SparseTensor, RaggedTensor


def _components(value) -> _Components:
    indexed_slices, sparse, ragged = _composite_classes()
    if isinstance(value, sparse):
        return _Components([value.indices, value.values, value.dense_shape])
    if isinstance(value, ragged):
        return _Components([value.flat_values, *value.nested_row_splits])
    parts = [value.values, value.indices]
    return _Components(parts if value.dense_shape is None else [*parts, value.dense_shape])


def _expanded(structure: Any) -> Any:
    """``structure`` with each composite tensor replaced by its `_Components`."""
    composites = _composite_classes()
    if isinstance(structure, composites):
        return _components(structure)
    if not is_nested(structure):
        return structure
    return _rebuild(structure, [_expanded(c) for c in _children(structure)])


def _restored(original: Any, packed: Any) -> Any:
    """``packed`` (in the shape `_expanded` made of ``original``) with each composite made
    again from its components."""
    indexed_slices, sparse, ragged = _composite_classes()
    if isinstance(original, sparse):
        return sparse(*packed)
    if isinstance(original, ragged):
        value = packed[0]
        for splits in reversed(packed[1:]):
            value = ragged(value, splits, internal=True)
        return value
    if isinstance(original, indexed_slices):
        return indexed_slices(*packed)
    if not is_nested(original):
        return packed
    return _rebuild(
        packed, [_restored(o, p) for o, p in zip(_children(original), _children(packed))]
    )


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(structure: Any) -> list:
    if isinstance(structure, dict):
        return [structure[k] for k in _sorted_keys(structure)]
    return list(structure)


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of ``structure`` in order (a dict's ``keys()``/``values()`` view counts as a
    list, as in ``tf.nest``); with ``expand_composites`` the component tensors of composite
    tensors (see the module docstring)."""
    if expand_composites:
        structure = _expanded(structure)
    if _is_flat(structure):
        return list(structure)
    if isinstance(structure, (KeysView, ValuesView)):
        structure = list(structure)
    if not is_nested(structure):
        return [structure]
    leaves: list = []
    for child in _children(structure):
        leaves.extend(flatten(child))
    return leaves


def flatten_up_to(shallow_tree: Any, input_tree: Any) -> list:
    """The parts of ``input_tree`` at the leaves of ``shallow_tree`` (deeper structure in
    ``input_tree`` stays whole), as ``tf.nest.flatten_up_to``; a ``ValueError`` where
    ``input_tree`` has another structure above those leaves."""
    if not is_nested(shallow_tree):
        return [input_tree]
    if not is_nested(input_tree):
        raise ValueError(
            f"If shallow structure is a sequence, input must also be a sequence. Input has "
            f"type: {type(input_tree).__name__}."
        )
    shallow, given = _children(shallow_tree), _children(input_tree)
    if len(shallow) != len(given):
        raise ValueError(
            f"The two structures don't have the same sequence length. Input structure has "
            f"length {len(given)}, while shallow structure has length {len(shallow)}."
        )
    leaves: list = []
    for shallow_child, input_child in zip(shallow, given):
        leaves.extend(flatten_up_to(shallow_child, input_child))
    return leaves


def _is_flat(structure: Any) -> bool:
    """Whether ``structure`` is a plain list or tuple of leaves (the common case, taken
    without recursion)."""
    if type(structure) is not list and type(structure) is not tuple:
        return False
    for child in structure:
        kind = type(child)
        if kind not in _LEAF_TYPES:
            if isinstance(child, (list, tuple, dict, KeysView, ValuesView)):
                return False
            _LEAF_TYPES.add(kind)
    return True


# Types seen to be leaves, so that a leaf costs one set lookup, not the views' ABC checks.
_LEAF_TYPES: set = set()


def _rebuild(structure: Any, children: list) -> Any:
    if isinstance(structure, dict):
        keys = _sorted_keys(structure)
        rebuilt = dict(zip(keys, children))
        return type(structure)((k, rebuilt[k]) for k in structure)
    if _is_namedtuple(structure):
        return type(structure)(*children)
    return type(structure)(children)


def pack_sequence_as(structure: Any, flat_sequence: list, expand_composites: bool = False) -> Any:
    """The inverse of `flatten`: puts ``flat_sequence`` back into the shape of ``structure``
    (with ``expand_composites``, making its composite tensors again from their components)."""
    if expand_composites:
        expanded = _expanded(structure)
        return _restored(structure, pack_sequence_as(expanded, flat_sequence))
    flat_sequence = list(flat_sequence)
    if _is_flat(structure) and len(flat_sequence) == len(structure):
        return flat_sequence if type(structure) is list else tuple(flat_sequence)
    if len(flat_sequence) != len(flatten(structure)):
        raise ValueError(
            f"Structure has {len(flatten(structure))} leaves but flat_sequence has "
            f"{len(flat_sequence)} elements."
        )
    position = 0

    def build(s):
        nonlocal position
        if not is_nested(s):
            position += 1
            return flat_sequence[position - 1]
        return _rebuild(s, [build(c) for c in _children(s)])

    return build(structure)


def map_structure(func: Callable, *structures: Any) -> Any:
    """Applies ``func`` leaf by leaf to structures of the same shape."""
    if not structures:
        raise ValueError("map_structure needs at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*leaves) for leaves in zip(*flats)])


def assert_same_structure(
    nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False
) -> None:
    """Raises ``ValueError`` (different nesting) or ``TypeError`` (different sequence types).
    With ``expand_composites`` composite tensors are structures too: two must be of one type,
    dtype and compatible shape."""
    problem = _structure_difference(nest1, nest2, check_types, path="", expand=expand_composites)
    if problem is not None:
        kind, message = problem
        raise kind(f"The two structures don't have the same nested structure: {message}")


def _composite_difference(a, b, path: str):
    composites = _composite_classes()
    if not (isinstance(a, composites) and isinstance(b, composites) and type(a) is type(b)):
        return ValueError, f"at {path or 'the top'}, {_describe(a)} vs {_describe(b)}"
    shape_a, shape_b = a.shape, b.shape
    ranks = getattr(a, "ragged_rank", None), getattr(b, "ragged_rank", None)
    if a.dtype != b.dtype or not shape_a.is_compatible_with(shape_b) or ranks[0] != ranks[1]:
        return (
            ValueError,
            f"at {path or 'the top'}, incompatible {type(a).__name__}s: {a.dtype.name} "
            f"{shape_a} vs {b.dtype.name} {shape_b}",
        )
    return None


def _structure_difference(a, b, check_types: bool, path: str, expand: bool = False):
    if expand and (isinstance(a, _composite_classes()) or isinstance(b, _composite_classes())):
        return _composite_difference(a, b, path)
    if is_nested(a) != is_nested(b):
        return ValueError, f"at {path or 'the top'}, {_describe(a)} vs {_describe(b)}"
    if not is_nested(a):
        return None
    if check_types and type(a) is not type(b):
        return TypeError, f"at {path or 'the top'}, type {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        if _sorted_keys(a) != _sorted_keys(b):
            return (
                ValueError,
                f"at {path or 'the top'}, keys {_sorted_keys(a)} vs {_sorted_keys(b)}",
            )
        labels = [f"{path}[{k!r}]" for k in _sorted_keys(a)]
    else:
        if len(a) != len(b):
            return (
                ValueError,
                f"at {path or 'the top'}, the two structures don't have the same number of "
                f"elements: {len(a)} vs {len(b)}",
            )
        labels = [f"{path}[{i}]" for i in range(len(a))]
    for label, x, y in zip(labels, _children(a), _children(b)):
        problem = _structure_difference(x, y, check_types, label, expand)
        if problem is not None:
            return problem
    return None


def _describe(x) -> str:
    return f"a {type(x).__name__}" if is_nested(x) else f"a leaf ({type(x).__name__})"


def flatten_with_paths(structure: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``[(path, leaf), ...]`` with paths like ``[0]['x']``, for error messages."""
    if not is_nested(structure):
        return [(prefix, structure)]
    if isinstance(structure, dict):
        labels = [f"{prefix}[{k!r}]" for k in _sorted_keys(structure)]
    else:
        labels = [f"{prefix}[{i}]" for i in range(len(structure))]
    out: list = []
    for label, child in zip(labels, _children(structure)):
        out.extend(flatten_with_paths(child, label))
    return out
