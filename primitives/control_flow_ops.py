"""`cond`, `case` and `while_loop`: in-graph control flow built from the five primitives.

They mirror ``tf.compat.v1`` (control flow v1) in names, signatures, return structures and graph
shapes, so that TensorFlow 1.x code and intuition carry over.  The graphs they build are the ones
``docs/control-flow-semantics.md`` prescribes:

cond(pred, true_fn, false_fn), in name scope "cond"::

    Switch(pred, pred) -> Identity "switch_f" (output 0), Identity "switch_t" (output 1): pivots
    each tensor a branch captures -> Switch(tensor, pred), output `branch` (memoized per branch)
    each result leaf            -> Merge([false_result, true_result]), output 0

while_loop(cond, body, loop_vars), in name scope and frame "while"::

    per loop variable: Enter -> Merge([enter, next]) -> Switch(merge, LoopCond(cond(*merges)))
                       Switch output 0 -> Exit (the result)
                       Switch output 1 -> Identity (fed to body; the first one is the pivot)
                       body result -> NextIteration -> the Merge's input 1 (the back edge)
    each tensor cond or body captures -> a constant Enter (memoized per loop, level by level)

The control-flow contexts (`primitives.contexts`) capture external tensors and add the pivot
control inputs while user code runs; they are also the records of what was built.

Where this differs from TensorFlow 1.x, deliberately:

- `cond` takes the predicate as seen by the context around it (``Switch(pred, pred).inputs[1]``)
  for every Switch, instead of adding an Identity "pred_id".
- Control dependencies on ops in enclosing frames are routed into a loop as data, never dropped
  (see `primitives.contexts`).  The structural ops (Merges, Switches, Identities, LoopCond,
  NextIterations, Exits, captures) are built without the user's ``control_dependencies``; the
  entry points (a cond's ``Switch(pred, pred)``, a loop's loop-variable Enters) keep them.
- With ``maximum_iterations`` (which puts the loop variables one level down, behind a counter),
  the body may still return a tuple for a list of variables, and a single variable in a
  one-element list or tuple, as it may without it (TensorFlow 1.x reports a structure mismatch).
- With a single loop variable, a body result with that variable's own structure (a dict, a
  namedtuple, a bare tensor) is wrapped in a list, not only a bare tensor as in TensorFlow.
- Non-tensor leaves returned by ``body`` are converted with the loop variable's dtype preferred,
  so ``lambda x: 0.0`` works for a float64 variable.
- ``shape_invariants`` may give a plain list of dims (``[None, 2]``) where a loop variable is a
  tensor, and None to keep a variable's own shape.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, Optional

from dataflow.framework import composites, nest
from dataflow.framework import dtypes as _dtypes
from dataflow.framework import graph as _graph
from dataflow.framework.graph import Operation, Tensor, get_default_graph
from dataflow.framework.indexed_slices import IndexedSlices
from dataflow.framework.op_registry import apply_op
from dataflow.framework.sparse_tensor import SparseTensorSpec
from dataflow.framework.tensor_conversion import convert_to_tensor
from dataflow.framework.tensor_shape import TensorShape, as_shape
from dataflow.framework.tensor_spec import TensorSpec
from dataflow.ops.array_ops import identity, stack
from dataflow.ops.constant_op import constant
from dataflow.ops.math_ops import add, cast, less, less_equal, logical_and, reduce_sum
from dataflow.ops.misc_ops import Assert
from dataflow.ops.ref_variables import forwarding_identity

from .auto_control_deps import order_effects
from .contexts import (
    CondContext,
    WhileContext,
    building_in,
    fetch_refusal,
    switch_refusal,
)
from .raw_ops import check_predicate, set_merge_input

__all__ = ["case", "cond", "while_loop", "with_dependencies"]

_logger = logging.getLogger(__name__)


# -- control flow v2 -------------------------------------------------------------------------------
# With control flow v2 enabled, ``cond`` builds a functional ``If`` op: its branches are traced
# into functions (`dataflow.eager.tracing.cond_v2`, which sits above this module and registers the
# builder here).
_v2_enabled = False
_functional_cond: Optional[Callable] = None


def enable_control_flow_v2() -> None:
    """Makes ``cond`` build a functional ``If`` op from now on (TensorFlow's
    ``tf.compat.v1.enable_control_flow_v2``)."""
    global _v2_enabled
    _v2_enabled = True


def disable_control_flow_v2() -> None:
    """Makes ``cond`` build v1's Switch/Merge form again (the default)."""
    global _v2_enabled
    _v2_enabled = False


def control_flow_v2_enabled() -> bool:
    """Whether ``cond`` builds control flow v2 (an ``If`` op)."""
    return _v2_enabled


def register_functional_cond(build: Callable) -> None:
    """Makes ``build(pred, true_fn, false_fn, strict, name, location)`` how ``cond`` builds
    while control flow v2 is enabled."""
    global _functional_cond
    _functional_cond = build


def _defined_at(fn: Callable) -> str:
    """``file:line`` where a function was defined, for error messages."""
    target = inspect.unwrap(fn.func if isinstance(fn, functools.partial) else fn)
    code = getattr(target, "__code__", None) or getattr(
        vars(type(target)).get("__call__"), "__code__", None
    )
    if code is None:
        return repr(fn)
    return f"{code.co_filename}:{code.co_firstlineno}"


def _describe_tensor(t: Tensor) -> str:
    return f"'{t.name}' ({t.dtype.name}, shape {t.shape}, created at {t.op.location})"


def _unpack_if_singleton(value):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    return value


def _is_tensor_array(value) -> bool:
    from dataflow.ops.tensor_array_ops import TensorArray

    return isinstance(value, TensorArray)


def _flow_or_value(value):
    """A TensorArray travels through a cond or loop as its flow (TF1's
    ``_convert_tensorarray_to_flow``); any other value as itself."""
    return value.flow if _is_tensor_array(value) else value


def _with_tensor_arrays(originals: list, tensors: list) -> list:
    """``tensors`` (flat), with each one that stands for a TensorArray of ``originals`` made
    into that TensorArray again, ordered by the tensor (TF1's
    ``_convert_flows_to_tensorarrays``)."""
    from dataflow.ops.tensor_array_ops import build_ta_with_new_flow

    return [
        build_ta_with_new_flow(original, t) if _is_tensor_array(original) else t
        for original, t in zip(originals, tensors)
    ]


def _same_structure(a, b) -> bool:
    try:
        nest.assert_same_structure(a, b)
    except (TypeError, ValueError):
        return False
    return True


# -- cond ------------------------------------------------------------------------------------------
def cond(
    pred,
    true_fn=None,
    false_fn=None,
    strict: bool = False,
    name: Optional[str] = None,
    fn1=None,
    fn2=None,
):
    """Returns ``true_fn()`` if ``pred`` is true, else ``false_fn()``; only that branch runs.
    (``fn1``/``fn2`` are TensorFlow 1.x's old names of ``true_fn``/``false_fn``.)

    Both functions are called once, now, to build their branch.  They must return the same
    nested structure (lists, tuples, namedtuples, dicts) with the same dtypes (a `TensorArray`
    leaf is merged as its flow, and must be one in both branches); singleton lists and
    tuples are unpacked unless ``strict``.  A leaf may be an `Operation`: its place in the
    result is then a bool tensor that is ready once the op has run (as in TensorFlow 1.x, an
    Identity of the branch's pivot with a control input from the op).  Tensors a branch uses from
    outside are captured through a Switch, and ops created outside the branches run whichever
    branch is taken.

    Raises ``TypeError`` when a function is missing or not callable or ``pred`` is not bool,
    ``ValueError`` when ``pred`` is not a scalar, a function returns None or nothing, or the
    branches' results differ in structure (``TypeError`` when sequence types differ) or dtype.

    Inside a df.function, as TensorFlow builds a functional cond there: ``strict`` is ignored
    and singletons are kept, and a result that is IndexedSlices from one branch only is a
    ``TypeError`` ("Cannot reconcile tf.cond ...").
    """
    location = _graph._user_location()
    for old_name, old_fn, fn_name in (("fn1", fn1, "true_fn"), ("fn2", fn2, "false_fn")):
        if old_fn is not None:
            if (true_fn if fn_name == "true_fn" else false_fn) is not None:
                raise TypeError(
                    f"cond(): '{fn_name}' and '{old_name}' may not be set simultaneously. "
                    f"({location})"
                )
            true_fn, false_fn = (old_fn, false_fn) if fn_name == "true_fn" else (true_fn, old_fn)
    for fn, fn_name in ((true_fn, "true_fn"), (false_fn, "false_fn")):
        if fn is None:
            raise TypeError(f"cond(): '{fn_name}' argument required ({location})")
        if not callable(fn):
            raise TypeError(f"'{fn_name}' must be callable, got {fn!r} ({location})")
    if isinstance(pred, bool):
        raise TypeError(
            f"'pred' must not be a Python bool ({location}): choose the branch with Python's "
            "`if`, or pass a bool tensor."
        )
    graph = get_default_graph()
    pred = convert_to_tensor(pred)
    try:
        check_predicate(pred, "cond's pred")
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} ({location})") from None
    if graph._eager:  # the predicate has its value: only the branch taken is called
        result = true_fn() if pred else false_fn()
        return result if strict else _unpack_if_singleton(result)
    if graph.building_function:
        # TensorFlow builds a function's cond as a functional If (cond_v2), which has no
        # ``strict``: a singleton list stays a list, and the argument is never looked at.
        strict = True
    if _v2_enabled:
        return _functional_cond(pred, true_fn, false_fn, strict, name, location)
    return _cond_v1(graph, pred, true_fn, false_fn, strict, name, location)


def _cond_v1(graph, pred: Tensor, true_fn, false_fn, strict: bool, name, location):
    """Builds v1's Switch/Merge form of a cond whose arguments `cond` has checked (also how
    ``dataflow.eager.tracing.cond_v2`` lowers an ``If`` op)."""
    outer = graph._control_flow_context
    with graph.name_scope(name or "cond") as scope:
        cond_name = scope[:-1]
        # The entry point keeps the user's control dependencies; the outer context captures pred.
        switch_op = apply_op("Switch", [pred, pred], name="Switch")
        pred = switch_op.inputs[1]
        with building_in(graph, outer):
            pivot_t = apply_op("Identity", [switch_op.outputs[1]], name="switch_t").outputs[0]
            pivot_f = apply_op("Identity", [switch_op.outputs[0]], name="switch_f").outputs[0]
        context_t = CondContext(graph, cond_name, pred, pivot_t, 1, outer)
        context_f = CondContext(graph, cond_name, pred, pivot_f, 0, outer)
        # As in TensorFlow 1.x: the Switch has a dead output and each pivot lives in its branch.
        graph.prevent_fetching(switch_op, switch_refusal(context_t))
        for context in (context_t, context_f):
            graph.prevent_fetching(context.pivot.op, fetch_refusal(context))
        orig_t, flat_t, returned_t = _build_branch(context_t, true_fn, "true_fn", location)
        orig_f, flat_f, returned_f = _build_branch(context_f, false_fn, "false_fn", location)

        if not strict:
            orig_t = _unpack_if_singleton(orig_t)
            orig_f = _unpack_if_singleton(orig_f)
            returned_t = _unpack_if_singleton(returned_t)
        where = (
            f"in cond '{cond_name}' ({location}; true_fn defined at {_defined_at(true_fn)}, "
            f"false_fn at {_defined_at(false_fn)})"
        )
        if graph.building_function:
            _check_indexed_slices_in_both_branches(returned_t, returned_f, where)
        try:
            nest.assert_same_structure(orig_t, orig_f)
        except TypeError as e:
            raise TypeError(
                f"Incompatible return types of 'true_fn' and 'false_fn' {where}: {e}"
            ) from None
        except ValueError as e:
            raise ValueError(
                f"Incompatible return values of 'true_fn' and 'false_fn' {where}: {e}"
            ) from None
        if not flat_t:
            raise ValueError(f"'true_fn' and 'false_fn' must return at least one result {where}")
        _cast_disagreeing_indices(returned_t, returned_f, flat_t, flat_f, context_t, context_f)
        paths = [path for path, _ in nest.flatten_with_paths(orig_t)]
        leaves_t, leaves_f = nest.flatten(orig_t), nest.flatten(orig_f)
        for path, t, f, leaf_t, leaf_f in zip(paths, flat_t, flat_f, leaves_t, leaves_f):
            if _is_tensor_array(leaf_t) != _is_tensor_array(leaf_f):
                raise TypeError(
                    f"Incompatible return types of 'true_fn' and 'false_fn' {where}: result"
                    f"{path} is {type(leaf_t).__name__} from 'true_fn' and "
                    f"{type(leaf_f).__name__} from 'false_fn'; a TensorArray must be returned "
                    "by both branches."
                )
            if t.dtype is not f.dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s) "
                    f"{where}: result{path} is {t.dtype.name} from 'true_fn' "
                    f"({_describe_tensor(t)}) and {f.dtype.name} from 'false_fn' "
                    f"({_describe_tensor(f)})."
                )
        with building_in(graph, outer):
            merges = [
                apply_op("Merge", [f, t], name="Merge").outputs[0] for f, t in zip(flat_f, flat_t)
            ]
        context_t.merges = [m.op for m in merges]
        context_f.merges = list(context_t.merges)
    result = nest.pack_sequence_as(orig_t, _with_tensor_arrays(nest.flatten(orig_t), merges))
    result = composites.pack(returned_t, result)
    return result if strict else _unpack_if_singleton(result)


def _check_indexed_slices_in_both_branches(returned_t, returned_f, where: str) -> None:
    """Refuses, as TensorFlow's functional cond does, a result that is IndexedSlices from one
    branch and not from the other (a TF1 graph's cond reports it as a structure mismatch)."""
    leaves_t = nest.flatten(returned_t)
    leaves_f = nest.flatten(returned_f)
    if len(leaves_t) != len(leaves_f):
        return  # the structure check below reports it
    for k, (leaf_t, leaf_f) in enumerate(zip(leaves_t, leaves_f)):
        if isinstance(leaf_t, IndexedSlices) != isinstance(leaf_f, IndexedSlices):
            raise TypeError(
                f"Cannot reconcile tf.cond {k}-th outputs {where}:\n"
                f"  branches returned: ({leaf_t!r}, {leaf_f!r})"
            )


def _cast_disagreeing_indices(returned_t, returned_f, flat_t, flat_f, context_t, context_f):
    """Where both branches return IndexedSlices whose indices differ in dtype (int32 and
    int64), casts both to int64 inside their branches (TF1's ``_cast_indexed_slice_indices``);
    ``flat_t`` and ``flat_f`` are changed in place."""
    marks_t = composites.indexed_slices_indices(returned_t)
    marks_f = composites.indexed_slices_indices(returned_f)
    for k, (mark_t, mark_f) in enumerate(zip(marks_t, marks_f)):
        if mark_t and mark_f and flat_t[k].dtype is not flat_f[k].dtype:
            for flat, context in ((flat_t, context_t), (flat_f, context_f)):
                with building_in(context.graph, context):
                    flat[k] = cast(flat[k], _dtypes.int64)


def _build_branch(context: CondContext, fn: Callable, fn_name: str, location) -> tuple:
    """Calls ``fn`` in ``context``; returns its result (composites as their parts, see
    `primitives.composites`), the flat tensors to merge, and its result as it was."""
    graph = context.graph
    start = graph.last_operation()
    with building_in(graph, context, keep_control_dependencies=True):
        returned = fn()
        original = composites.expand(returned)
        if original is None:
            raise ValueError(
                f"'{fn_name}' must have a return value: it returned None (cond "
                f"'{context.name}' at {location}; {fn_name} defined at {_defined_at(fn)})."
            )
        flat = []
        for path, leaf in nest.flatten_with_paths(original):
            if isinstance(leaf, Operation):
                with context.graph.control_dependencies([leaf]):
                    pivot = apply_op("Identity", [context.pivot], name="control_dependency")
                flat.append(pivot.outputs[0])
                continue
            try:
                if leaf is None:
                    raise TypeError("None is not a tensor")
                tensor = convert_to_tensor(_flow_or_value(leaf))
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"'{fn_name}' returned {leaf!r} at result{path}, which is neither a tensor, "
                    f"a value convertible to one, nor an Operation ({e}; cond '{context.name}' at "
                    f"{location}; {fn_name} defined at {_defined_at(fn)})."
                ) from None
            # A branch returning a tensor from outside it ("lambda: x") still returns it
            # through the branch's Switch, so that the untaken side is dead.
            flat.append(context.add_value(tensor, "Merge"))
        if graph.automatic_control_dependencies:
            flat = order_effects(graph, graph.operations_after(start), context, flat)
    return original, flat, returned


# -- with_dependencies -----------------------------------------------------------------------------
def with_dependencies(dependencies, output_tensor, name: Optional[str] = None) -> Tensor:
    """The value of ``output_tensor``, available only once every op of ``dependencies`` has run.

    TensorFlow's ``control_flow_ops.with_dependencies`` (not in ``tf.compat.v1``'s namespace):
    an Identity named ``name``, or ``control_dependency`` in the current name scope, with
    control inputs on ``dependencies`` (ops, or tensors standing for their ops).  A variable
    given as ``output_tensor`` is read after them, so ``with_dependencies([v.initializer], v)``
    reads the initialized value.  As in TensorFlow, the Identity is colocated with
    ``output_tensor`` (it takes its device and ``loc:@`` group).
    """
    if get_default_graph()._eager:  # the dependencies have already run
        return output_tensor
    graph = output_tensor.graph if hasattr(output_tensor, "graph") else get_default_graph()
    colocation = (
        graph.colocate_with(output_tensor)
        if hasattr(output_tensor, "op")
        else contextlib.nullcontext()
    )
    with graph.as_default(), graph.name_scope(name or "control_dependency") as scope:
        with colocation, graph.control_dependencies(list(dependencies)):
            if composites.is_composite(output_tensor):  # each part waits for the dependencies
                return composites.map_parts(output_tensor, identity)
            # A reference stays one (TF1's _Identity); a variable is read.
            return forwarding_identity(convert_to_tensor(output_tensor), name=scope)


# -- case ------------------------------------------------------------------------------------------
def case(
    pred_fn_pairs,
    default: Optional[Callable] = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
):
    """Runs the function of the first true predicate (or ``default``), as nested `cond`s.

    ``pred_fn_pairs`` is a list of ``(bool tensor, callable)`` pairs, or a dict (then ordered by
    the predicates' tensor names, as TensorFlow 1.x does).  With ``exclusive=True`` an Assert
    checks at run time that at most one predicate is true.  Without ``default`` the last pair's
    function is the default, guarded by Asserts that its predicate is true and no other is.
    """
    location = _graph._user_location()
    predicates, actions = _canonical_case_pairs(pred_fn_pairs, exclusive, name, location)
    if default is not None and not callable(default):
        raise TypeError(f"'default' must be callable, got {default!r} ({location})")
    graph = get_default_graph()
    with graph.name_scope(name or "case"):
        if default is None:
            default, predicates, actions = _default_action(predicates, actions)
        fn = default
        # Nested in reverse so that the predicates are tested in order:
        # cond(p0, f0, lambda: cond(p1, f1, ... default)).
        for predicate, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(cond, predicate, true_fn=action, false_fn=fn, strict=strict)
        check = (
            _assert_at_most_n_true(predicates, 1, "Input error: exclusive=True")
            if exclusive
            else None
        )
        if check is None:
            return fn()
        with graph.control_dependencies([check]):
            return fn()


def _canonical_case_pairs(pred_fn_pairs, exclusive: bool, name: str, location) -> tuple:
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict ({location})")
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    if not pairs:
        raise ValueError(f"'pred_fn_pairs' must not be empty ({location})")
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple ({location})")
        pred, fn = pair
        if not isinstance(pred, Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred!r} ({location})")
        if pred.dtype is not _dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name} ({location})")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable ({location})")
    if isinstance(pred_fn_pairs, dict) and not isinstance(pred_fn_pairs, collections.OrderedDict):
        pairs.sort(key=lambda pair: pair[0].name)
        if not exclusive:
            _logger.warning(
                "%s: An unordered dictionary of predicate/fn pairs was provided, but "
                "exclusive=False. The order of conditional tests is deterministic but not "
                "guaranteed.",
                name,
            )
    predicates, actions = zip(*pairs)
    return list(predicates), list(actions)


def _default_action(predicates: list, actions: list) -> tuple:
    """Makes the last pair the default, guarded so that it runs only when its predicate holds."""
    k = len(predicates) - 1
    predicate, action = predicates[k], actions[k]
    others = predicates[:k]

    def default_action():
        message = (
            f"Implementation error: selected default action #{k} was called, but some of "
            "the other predicates are True: "
        )
        checks = [
            Assert(
                predicate,
                ["Input error: None of conditions evaluated as True:", stack(predicates)],
                summarize=len(predicates),
            ),
            _assert_at_most_n_true(others, 0, message),
        ]
        with get_default_graph().control_dependencies([c for c in checks if c is not None]):
            return action()

    return default_action, predicates[:k], actions[:k]


def _assert_at_most_n_true(predicates: list, n: int, message: str) -> Optional[Operation]:
    """An Assert that at most ``n`` of ``predicates`` are true at run time; None when there is
    no predicate, as the check then always holds (a ``case`` left with no pair besides its
    default: one pair and no ``default``)."""
    if not predicates:
        return None
    stacked = stack(predicates, name="preds_c")
    num_true = reduce_sum(cast(stacked, _dtypes.int32), name="num_true_conds")
    condition = less_equal(num_true, constant(n, name="n_true_conds"))
    names = ", ".join(p.name for p in predicates)
    return Assert(
        condition,
        [f"{message}: more than {n} conditions ({names}) evaluated as True:", stacked],
        summarize=len(predicates),
    )


# -- while_loop ------------------------------------------------------------------------------------
def while_loop(
    cond: Callable,
    body: Callable,
    loop_vars,
    shape_invariants=None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: Optional[str] = None,
    maximum_iterations=None,
    return_same_structure: bool = False,
):
    """Repeats ``body`` while ``cond`` is true; returns the loop variables' final values.

    ``loop_vars`` is a (possibly nested) tuple, namedtuple or list of tensors (dicts may be
    nested inside) and TensorArrays, which travel through the loop as their flows (the body
    sees them, and must return them, as TensorArrays).  ``cond(*loop_vars)`` returns a bool
    scalar and ``body(*loop_vars)`` the next values in the same structure with the same dtypes;
    both are called once, now, to build the loop.  A variable's static shape must not change
    across iterations unless ``shape_invariants`` (same structure, `TensorShape` leaves)
    relaxes it.  With
    ``maximum_iterations`` the loop also stops after that many iterations (a counter loop
    variable is added and its bound and-ed into the predicate).  At most ``parallel_iterations``
    iterations run at once; results never depend on it.  ``back_prop`` and ``swap_memory`` are
    recorded on the `WhileContext` (``swap_memory`` has no effect here).

    Returns the final values packed like the body's result; with a single loop variable and
    ``return_same_structure=False``, that variable's value itself.  The argument order is
    ``tf.compat.v1.while_loop``'s (``name`` before ``maximum_iterations``).
    """
    location = _graph._user_location()
    if not callable(cond):
        raise TypeError(f"'cond' must be callable, got {cond!r} ({location})")
    if not callable(body):
        raise TypeError(f"'body' must be callable, got {body!r} ({location})")
    if (
        isinstance(parallel_iterations, bool)
        or not isinstance(parallel_iterations, int)
        or parallel_iterations < 1
    ):
        raise TypeError(
            f"'parallel_iterations' must be a positive integer, got {parallel_iterations!r} "
            f"({location})"
        )
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(
            "'loop_vars' must be a tuple, namedtuple or list of loop variables, got "
            f"{type(loop_vars).__name__} ({location}). Wrap a single tensor or dict in a list: "
            "loop_vars=[x]."
        )
    if get_default_graph()._eager:
        return _eager_while_loop(cond, body, loop_vars, maximum_iterations, return_same_structure)
    if shape_invariants is not None:
        shape_invariants = _invariants_from_specs(
            loop_vars, shape_invariants, f"in while_loop '{name or 'while'}' ({location})"
        )
    if composites.holds_composites(loop_vars):
        return _while_loop_of_parts(
            cond, body, loop_vars, shape_invariants, parallel_iterations, back_prop,
            swap_memory, name, maximum_iterations, return_same_structure,
        )  # fmt: skip
    graph = get_default_graph()
    outer = graph._control_flow_context
    with graph.name_scope(name or "while") as scope:
        if not loop_vars:
            raise ValueError(f"'loop_vars' must be provided ({location})")
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError(
                    f"'maximum_iterations' must be a scalar. Received shape: "
                    f"{maximum_iterations.shape} ({location})"
                )
            if not (maximum_iterations.dtype.is_integer or maximum_iterations.dtype.is_floating):
                # As in TensorFlow, the counter takes the bound's dtype, so any number will do.
                raise TypeError(
                    "'maximum_iterations' must be a number, got "
                    f"{maximum_iterations.dtype.name} ({location})"
                )
            counter = constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            cond, body, loop_vars, shape_invariants = _with_iteration_counter(
                cond, body, loop_vars, shape_invariants, maximum_iterations, counter, try_to_pack
            )
        context = WhileContext(
            graph,
            scope[:-1],
            outer,
            parallel_iterations,
            back_prop,
            swap_memory,
            maximum_iterations,
        )
        result = _build_loop(
            context, cond, body, loop_vars, shape_invariants, return_same_structure, location
        )
    return result[1] if maximum_iterations is not None else result


def _invariants_from_specs(loop_vars, shape_invariants, where: str):
    """``shape_invariants`` with each `TensorSpec` and `SparseTensorSpec` leaf checked against
    its loop variable and replaced by the `TensorShape` invariant it stands for.

    As in TensorFlow, a spec must describe its variable (kind, dtype, shape), else TypeError: a
    TensorSpec fits only a dense tensor, a SparseTensorSpec only a SparseTensor (whose
    TensorShape invariant is the shape of its ``dense_shape`` vector, ``[rank]``).  Where the
    structures differ the invariants are left as they are, for the loop to report.
    """

    def walk(value, invariant, path):
        if isinstance(invariant, TensorSpec):
            dense = not composites.is_composite(value)
            fits = dense and invariant.is_compatible_with(
                TensorSpec.from_value(_flow_or_value(value))
            )
            shape = invariant.shape
        elif isinstance(invariant, SparseTensorSpec):
            fits = invariant.is_compatible_with(value)
            shape = TensorShape([invariant.shape.ndims])
        elif (
            isinstance(value, dict) and isinstance(invariant, dict) and set(value) == set(invariant)
        ):
            return type(invariant)(
                (k, walk(value[k], invariant[k], f"{path}[{k!r}]")) for k in invariant
            )
        elif (
            isinstance(value, (list, tuple))
            and isinstance(invariant, (list, tuple))
            and len(value) == len(invariant)
        ):
            items = [walk(v, i, f"{path}[{k}]") for k, (v, i) in enumerate(zip(value, invariant))]
            if hasattr(type(invariant), "_fields"):
                return type(invariant)(*items)
            return type(invariant)(items)
        else:
            return invariant
        if not fits:
            raise TypeError(
                f"TypeSpec {invariant!r} is not compatible with {value!r}: it is the shape "
                f"invariant of loop variable loop_vars{path} {where}"
            )
        return shape

    return walk(loop_vars, shape_invariants, "")


def _eager_while_loop(cond, body, loop_vars, maximum_iterations, return_same_structure):
    """`while_loop` in eager mode: a Python loop on the variables' values, as TensorFlow runs
    it there (a single variable comes back unpacked, ``maximum_iterations`` bounds the count)."""
    try_to_pack = len(loop_vars) == 1 and not return_same_structure
    packed = False
    iterations = 0
    while maximum_iterations is None or iterations < maximum_iterations:
        if not cond(*loop_vars):
            break
        loop_vars = body(*loop_vars)
        if try_to_pack and not isinstance(loop_vars, (list, tuple)):
            packed = True
            loop_vars = (loop_vars,)
        iterations += 1
    return loop_vars[0] if packed else loop_vars


def _while_loop_of_parts(
    cond, body, loop_vars, shape_invariants, parallel_iterations, back_prop, swap_memory, name,
    maximum_iterations, return_same_structure,
):  # fmt: skip
    """`while_loop` over the parts of its composite loop variables (IndexedSlices,
    SparseTensor: `primitives.composites`); ``cond`` and ``body`` still see composites."""

    @functools.wraps(cond)
    def cond_of_parts(*parts):
        return cond(*composites.pack(loop_vars, list(parts)))

    @functools.wraps(body)
    def body_of_parts(*parts):
        return composites.expand(body(*composites.pack(loop_vars, list(parts))))

    result = while_loop(
        cond_of_parts,
        body_of_parts,
        composites.expand(loop_vars),
        composites.expand_invariants(loop_vars, shape_invariants),
        parallel_iterations,
        back_prop,
        swap_memory,
        name,
        maximum_iterations,
        return_same_structure=True,
    )
    result = composites.pack(loop_vars, result)
    return result[0] if len(loop_vars) == 1 and not return_same_structure else result


def _with_iteration_counter(cond, body, loop_vars, shape_invariants, bound, counter, pack):
    """TensorFlow's rewrite for ``maximum_iterations``: a counter variable in front."""
    orig_cond, orig_body = cond, body
    if pack:
        first = loop_vars[0]

        @functools.wraps(orig_cond)
        def cond(i, value):
            return logical_and(less(i, bound), orig_cond(value))

        @functools.wraps(orig_body)
        def body(i, value):
            result = orig_body(value)
            if not _same_structure(result, first) and _same_structure(
                _unpack_if_singleton(result), first
            ):
                result = _unpack_if_singleton(result)
            return add(i, 1), result

        loop_vars = (counter, first)
        if isinstance(shape_invariants, (list, tuple)) and len(shape_invariants) == 1:
            shape_invariants = shape_invariants[0]
    else:

        @functools.wraps(orig_cond)
        def cond(i, values):
            return logical_and(less(i, bound), orig_cond(*values))

        @functools.wraps(orig_body)
        def body(i, values):
            result = orig_body(*values)
            # TensorFlow compares the loop variables' top level as a list; keep that leniency
            # now that they sit one level down.
            if type(result) in (list, tuple) and type(values) in (list, tuple):
                result = type(values)(result)
            return add(i, 1), result

        loop_vars = (counter, loop_vars)
    if shape_invariants is not None:
        shape_invariants = (TensorShape([]), shape_invariants)
    return cond, body, loop_vars, shape_invariants


def _build_loop(
    context: WhileContext,
    cond,
    body,
    loop_vars,
    shape_invariants,
    return_same_structure: bool,
    location,
):
    graph = context.graph
    name = context.name
    where = f"in while_loop '{name}' ({location})"
    if context.maximum_iterations is not None:
        where = (
            f"in while_loop '{name}' ({location}; with maximum_iterations, loop_vars here is "
            "(iteration_counter, your loop_vars))"
        )
    paths = [path for path, _ in nest.flatten_with_paths(loop_vars)]
    flat_originals = nest.flatten(loop_vars)
    flat_vars = [convert_to_tensor(_flow_or_value(v)) for v in flat_originals]
    if shape_invariants is None:
        invariants = [None] * len(flat_vars)
    else:
        invariants = _shape_invariants(loop_vars, shape_invariants, where)
        # A TensorArray's flow is a scalar whatever the elements' shapes.
        invariants = [
            None if _is_tensor_array(v) else invariant
            for v, invariant in zip(flat_originals, invariants)
        ]
    for path, var, invariant in zip(paths, flat_vars, invariants):
        if invariant is not None and not _shape_less_equal(var.shape, invariant):
            raise ValueError(
                f"The shape invariant specified for loop variable loop_vars{path} {where} is not "
                f"compatible with the initial shape of the loop variable. It enters the loop "
                f"with shape {var.shape} ({_describe_tensor(var)}), but the specified shape "
                f"invariant is {invariant}."
            )

    # Loop-variable Enters are the loop's entry points: they keep the user's control deps.
    enters = []
    for var, invariant in zip(flat_vars, invariants):
        enter = context.enter_loop_variable(var, invariant, keep_control_dependencies=True)
        enters.append(enter.outputs[0])
    context.loop_enters = [e.op for e in enters]

    with building_in(graph, context):
        merges = [apply_op("Merge", [e, e], name="Merge").outputs[0] for e in enters]
    context.merges = [m.op for m in merges]
    context.pivot_for_pred = merges[0]

    start = graph.last_operation()
    with building_in(graph, context, keep_control_dependencies=True):
        pred = cond(*nest.pack_sequence_as(loop_vars, _with_tensor_arrays(flat_originals, merges)))
        try:
            pred = convert_to_tensor(pred)
            check_predicate(pred, "the value")
        except (TypeError, ValueError) as e:
            raise type(e)(
                f"'cond' must return a bool scalar tensor {where}; it returned {pred!r}: {e} "
                f"(cond defined at {_defined_at(cond)})."
            ) from None
        if graph.automatic_control_dependencies:
            pred = order_effects(graph, graph.operations_after(start), context, pred)

    with building_in(graph, context):
        loop_cond = apply_op("LoopCond", [pred], name="LoopCond").outputs[0]
        switches = [apply_op("Switch", [m, loop_cond], name="Switch") for m in merges]
        body_vars = [forwarding_identity(s.outputs[1], name="Identity") for s in switches]
    context.loop_cond = loop_cond.op
    context.switches = switches
    context.pivot = body_vars[0]

    packed_body_vars = nest.pack_sequence_as(
        loop_vars, _with_tensor_arrays(flat_originals, body_vars)
    )
    start = graph.last_operation()
    with building_in(graph, context, keep_control_dependencies=True):
        result = body(*packed_body_vars)
        if not nest.is_nested(result) or (
            len(packed_body_vars) == 1 and _same_structure(result, packed_body_vars[0])
        ):
            result = [result]
        try:
            nest.assert_same_structure(list(packed_body_vars), list(result))
        except (TypeError, ValueError) as e:
            raise type(e)(
                f"body must return the structure of loop_vars {where}: {e} (body defined at "
                f"{_defined_at(body)})."
            ) from None
        next_values = [
            _body_result_tensor(leaf, var, original, path, where, body)
            for (path, leaf), var, original in zip(
                nest.flatten_with_paths(list(result)), flat_vars, flat_originals
            )
        ]
        if graph.automatic_control_dependencies:
            next_values = order_effects(graph, graph.operations_after(start), context, next_values)
    for path, var, merged, value in zip(paths, flat_vars, merges, next_values):
        _check_loop_variable(path, var, merged, value, where, body)

    with building_in(graph, context):
        next_iterations = [
            apply_op("NextIteration", [v], name="NextIteration").outputs[0] for v in next_values
        ]
        for merged, next_value in zip(merges, next_iterations):
            set_merge_input(merged, 1, next_value)
        exits = []
        for s in switches:
            exit_op = apply_op("Exit", [s.outputs[0]], name="Exit")
            context.add_exit(exit_op)
            exits.append(exit_op.outputs[0])
    context.next_iterations = [n.op for n in next_iterations]

    packed = nest.pack_sequence_as(result, _with_tensor_arrays(flat_originals, exits))
    if return_same_structure:
        return packed
    return packed[0] if len(exits) == 1 else packed


def _body_result_tensor(leaf, var: Tensor, original, path: str, where: str, body) -> Tensor:
    if _is_tensor_array(original) != _is_tensor_array(leaf):
        raise TypeError(
            f"body returned {leaf!r} for loop variable loop_vars{path} {where}, which entered "
            f"the loop as {original!r}: a TensorArray loop variable must be a TensorArray after "
            f"each iteration, and only such a variable may be one (body defined at "
            f"{_defined_at(body)})."
        )
    leaf = _flow_or_value(leaf)
    try:
        if isinstance(leaf, Operation) or leaf is None:
            raise TypeError(f"{type(leaf).__name__} is not a tensor")
        return convert_to_tensor(leaf, preferred_dtype=var.dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"body returned {leaf!r} for loop variable loop_vars{path} {where}, which is not a "
            f"tensor ({e}; body defined at {_defined_at(body)})."
        ) from None


def _check_loop_variable(path, var: Tensor, merged: Tensor, value: Tensor, where, body) -> None:
    if value.dtype is not var.dtype:
        raise TypeError(
            f"Loop variable loop_vars{path} {where} enters the loop as {var.dtype.name} "
            f"({_describe_tensor(var)}) but the body returns {value.dtype.name} for it "
            f"({_describe_tensor(value)}; body defined at {_defined_at(body)}). A loop variable "
            "keeps its dtype: cast the body's result."
        )
    if not _shape_less_equal(value.shape, merged.shape):
        # TF1's sentences first (code matches on them), then where, and a suggestion.
        raise ValueError(
            f"Input tensor '{var.name}' enters the loop with shape {merged.shape}, but has "
            f"shape {value.shape} after one iteration. To allow the shape to vary across "
            "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
            f"less-specific shape. Here: loop variable loop_vars{path} {where} "
            f"({_describe_tensor(value)}; body defined at {_defined_at(body)}); e.g. "
            f"{_suggested_invariant(merged.shape, value.shape)} for this variable."
        )


def _suggested_invariant(a: TensorShape, b: TensorShape) -> str:
    relaxed = a.most_specific_compatible_shape(b)
    return f"df.TensorShape({None if relaxed.ndims is None else relaxed.as_list()})"


def _shape_less_equal(specific: TensorShape, general: TensorShape) -> bool:
    """True when ``specific`` is at least as specific as ``general`` (and compatible with it)."""
    return general.most_specific_compatible_shape(specific) == general


def _shape_invariants(loop_vars, shape_invariants, where: str) -> list:
    """The invariant of each flat loop variable: the leaf of ``shape_invariants`` at its place.

    A leaf may be a `TensorShape`, a list of dims, or None (keep the variable's own shape).
    """
    flat: list[Any] = [None] * len(nest.flatten(loop_vars))
    positions = nest.pack_sequence_as(loop_vars, list(range(len(flat))))

    def walk(position, invariant, path):
        if not nest.is_nested(position):
            flat[position] = None if invariant is None else as_shape(invariant)
            return
        if isinstance(position, dict):
            if not isinstance(invariant, dict) or set(invariant) != set(position):
                raise ValueError(
                    f"shape_invariants does not have the structure of loop_vars at "
                    f"{path or 'the top'} {where}: expected a dict with keys "
                    f"{sorted(map(repr, position))}, got {invariant!r}"
                )
            for key in position:
                walk(position[key], invariant[key], f"{path}[{key!r}]")
            return
        if not isinstance(invariant, (list, tuple)) or len(invariant) != len(position):
            raise ValueError(
                f"shape_invariants does not have the structure of loop_vars at "
                f"{path or 'the top'} {where}: expected a sequence of {len(position)}, got "
                f"{invariant!r}"
            )
        for i, (p, inv) in enumerate(zip(position, invariant)):
            walk(p, inv, f"{path}[{i}]")

    try:
        walk(positions, shape_invariants, "")
    except TypeError as e:
        raise ValueError(f"bad shape invariant {where}: {e}") from None
    return flat
