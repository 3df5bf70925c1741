"""Nested structures of lists, tuples, namedtuples and dicts, as ``tf.nest`` treats them.

Dicts are traversed in sorted key order (so two dicts with the same keys flatten alike);
every other object is a leaf.
"""

from __future__ import annotations

from collections.abc import Callable, KeysView, ValuesView
from typing import Any


def is_nested(structure: Any) -> bool:
    return isinstance(structure, (list, tuple, dict))


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


def flatten(structure: Any) -> list:
    """The leaves of ``structure`` in order (a dict's ``keys()``/``values()`` view counts as a
    list, as in ``tf.nest``)."""
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


def pack_sequence_as(structure: Any, flat_sequence: list) -> Any:
    """The inverse of `flatten`: puts ``flat_sequence`` back into the shape of ``structure``."""
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


def assert_same_structure(a: Any, b: Any, check_types: bool = True) -> None:
    """Raises ``ValueError`` (different nesting) or ``TypeError`` (different sequence types)."""
    problem = _structure_difference(a, b, check_types, path="")
    if problem is not None:
        kind, message = problem
        raise kind(f"The two structures don't have the same nested structure: {message}")


def _structure_difference(a, b, check_types: bool, path: str):
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
        problem = _structure_difference(x, y, check_types, label)
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
