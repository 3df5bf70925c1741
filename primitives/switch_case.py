"""`switch_case`: an integer-indexed choice among functions, as ``tf.compat.v1.switch_case``.

TensorFlow builds one n-way ``Case`` op and lowers it to Switch/Merge; here the same choice is a
chain of `cond`s, one per key, each testing ``branch_index == key``::

    cond(i == 0, branch 0, lambda: cond(i == 1, branch 1, ... lambda: default))

so exactly one branch function's ops run, and gradients are those of the conds.  An index that
is no key selects ``default``, or the branch of the largest key when there is no default.

Each branch's `CondContext` is named ``"branch <k>"`` (the default is ``"branch <n>"``, n the
number of keys, as TensorFlow counts it) and the conds that only chain to the next test are
unnamed.  As TensorFlow's Case op has functional branches, the branches are `isolated`: one
that uses a tensor made in another branch is reported as TensorFlow does, "Tensor x:0 in branch
1 is accessed from branch 4.", in a graph as in a df.function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Optional

from dataflow.framework import graph as _graph
from dataflow.framework.graph import get_default_graph
from dataflow.framework.tensor_conversion import convert_to_tensor
from dataflow.ops.constant_op import constant
from dataflow.ops.math_ops import equal

from .contexts import CondContext
from .control_flow_ops import cond

__all__ = ["switch_case"]


def switch_case(branch_index, branch_fns, default: Optional[Callable] = None, name="switch_case"):
    """Returns the result of the branch function whose key is ``branch_index`` (or ``default``).

    ``branch_fns`` is a dict from int keys to callables, a list of ``(int, callable)`` pairs, or
    a list of callables (keyed by position); the keys must be ``0 .. n-1``.  All functions must
    return the same structure of tensors with the same dtypes; the result keeps that structure
    (a one-element list stays a list).  ``branch_index`` is an integer scalar tensor.
    """
    location = _graph._user_location()
    actions = _canonical_branches(branch_fns, default, location)
    branch_index = convert_to_tensor(branch_index, name="branch_index")
    if not branch_index.dtype.is_integer:
        raise TypeError(
            f"'branch_index' must be an integer Tensor, got {branch_index.dtype.name} ({location})"
        )
    graph = get_default_graph()
    if graph._eager:
        index = int(branch_index)
        return actions[index if 0 <= index < len(actions) else len(actions) - 1]()
    with graph.name_scope(name or "switch_case"):
        keys = [
            equal(branch_index, constant(k, branch_index.dtype), name=f"is_branch_{k}")
            for k in range(len(actions) - 1)
        ]
        chained = _named_branch(actions[-1], f"branch {len(actions) - 1}")
        for k in reversed(range(len(actions) - 1)):
            test = functools.partial(
                cond, keys[k], _named_branch(actions[k], f"branch {k}"), chained, strict=True
            )
            chained = _named_branch(test, None)
        return chained()


def _named_branch(fn: Callable, branch_name: Optional[str]) -> Callable:
    """``fn``, which when called as a cond branch first names that branch for error messages."""

    @functools.wraps(fn)
    def branch():
        context = get_default_graph()._control_flow_context
        if isinstance(context, CondContext):
            context.branch_name = branch_name
            context.isolated = True
        return fn()

    return branch


def _canonical_branches(branch_fns, default, location) -> list:
    """The branch functions in key order, ``default`` (when given) last; TypeError/ValueError
    as TensorFlow's for a malformed ``branch_fns``."""
    if not branch_fns:
        raise ValueError(f"Must provide at least one item in 'branch_fns' ({location})")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError(f"'branch_fns' must be a list, tuple, or dict ({location})")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(
                f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair!r} ({location})"
            )
        key, fn = pair
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"key must be a Python `int`, got {type(key)} ({location})")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable ({location})")
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(
            f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
            f"{{{','.join(map(str, keys))}}} ({location})"
        )
    if default is not None and not callable(default):
        raise TypeError(f"'default' must be callable, got {default!r} ({location})")
    actions = [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]
    return actions + [default] if default is not None else actions
