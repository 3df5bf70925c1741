"""Control flow v2 for `cond`: one functional ``If`` op whose branches are traced functions.

TensorFlow 2 builds ``cond`` as an ``If`` op instead of v1's Switch/Merge network (see
`control_flow_ops`): each branch function is traced into its own `FuncGraph`
(`dataflow.eager.tracing`), and the op takes the predicate and the tensors the branches read from
outside (the union of both branches' captures, in one order) and returns the branch's outputs.
Here, as in TensorFlow 1.x with ``enable_control_flow_v2()``:

- `enable_control_flow_v2` / `disable_control_flow_v2` / `control_flow_v2_enabled` switch which
  form ``cond`` builds, for the whole process (v1 is the default; nothing changes until it is
  switched on).  Only ``cond`` has a v2 form here; ``while_loop`` stays v1.
- The ``If`` op: input 0 is the predicate (``Tcond``), then the captured tensors (``Tin``);
  its outputs have dtypes ``Tout`` and static shapes ``output_shapes`` (the most specific shape
  both branches' outputs fit).  ``then_branch`` / ``else_branch`` are the `FuncGraph` objects:
  ``inputs`` is one placeholder per captured tensor (the same order in both), ``outputs`` the
  branch results.
- How it runs.  By default a Session *lowers* every ``If`` before it makes a plan (the pass
  ``lower_functional_ops``, `_lower_if`): the branch graphs are copied into a v1 ``cond``
  (Switch/Merge, pivots, `CondContext` records), so the executor and the other passes see v1
  control flow, as TensorFlow's ``LowerFunctionalOpsPass`` does.  With
  ``ConfigProto.experimental.executor_type = "SINGLE_THREADED_EXECUTOR"`` nothing is lowered and
  ``If`` runs as one op whose kernel runs the taken branch's plan inside the same run (same
  variables, same deadline); the untaken branch runs nothing in either form.
- The gradient of ``If`` is an ``If`` of the branches' gradient functions (as TensorFlow's
  cond_v2): each gradient function takes the forward inputs and the output gradients, rebuilds
  its forward branch and differentiates it.  Unlike TensorFlow, which adds the forward branch's
  intermediate values as extra outputs of the forward ``If``, the gradient recomputes them: the
  forward op stays as it was built.
- A branch may return tensors, Python values (made constants in the branch) and Operations (a
  bool tensor that is true once the op has run, as v1's ``cond`` gives).  Composite results
  (IndexedSlices, SparseTensor, TensorArray) need v1: a clear ``TypeError`` names the leaf.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Optional

from executor.program import NodeKind
from primitives import control_flow_ops
from primitives.contexts import building_in
from primitives.control_flow_ops import (  # noqa: F401 - offered here too
    control_flow_v2_enabled,
    disable_control_flow_v2,
    enable_control_flow_v2,
    register_functional_cond,
)
from primitives.raw_ops import set_merge_input

from ...autodiff.gradients import _is_backpropagatable, gradients
from ...client import session
from ...framework import composites, errors, nest
from ...framework import dtypes as _dtypes
from ...framework.gradient_registry import RegisterGradient
from ...framework.graph import Graph, Operation, Tensor, get_default_graph
from ...framework.op_registry import apply_op, define_op
from ...framework.tensor_conversion import convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...ops.array_ops import identity, zeros, zeros_like
from ...ops.constant_op import constant, placeholder
from .tracing import FuncGraph

__all__ = [
    "cond_v2",
    "control_flow_v2_enabled",
    "disable_control_flow_v2",
    "enable_control_flow_v2",
]


# -- the If op -------------------------------------------------------------------------------------
def _infer_if(op: Operation) -> list:
    return list(zip(op.attrs["Tout"], op.attrs["output_shapes"]))


def _if_kernel(attrs: dict) -> Callable:
    """Runs the taken branch's plan (made on first use, once per lowering of the op)."""
    branches = (attrs["else_branch"], attrs["then_branch"])
    plans: list = [None, None]
    lock = threading.Lock()

    def run(context, pred, *inputs):
        taken = 1 if pred else 0
        plan = plans[taken]
        if plan is None:
            with lock:
                if plans[taken] is None:
                    branch = branches[taken]
                    plans[taken] = session.lower_graph(
                        branch, list(branch.outputs), tuple(branch.inputs), ()
                    )
                plan = plans[taken]
        outputs = session.run_inside(plan, inputs, context)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


def _lower_if(graph: Graph, op: Operation) -> list[Tensor]:
    """Builds v1's form of ``op`` in ``graph`` (a Session's copy): a ``cond`` named as the op,
    whose branches are copies of the branch graphs; returns its results.  The predicate waits
    for the op's control inputs, so every Switch of the cond does too."""
    pred, inputs = op.inputs[0], list(op.inputs[1:])
    then_branch, else_branch = op.attrs["then_branch"], op.attrs["else_branch"]
    with graph.as_default(), building_in(graph, op._control_flow_context):
        with graph.name_scope(op.name + "/"):
            if op.control_inputs:
                with graph.control_dependencies(op.control_inputs):
                    pred = identity(pred, name="pred")
            return control_flow_ops._cond_v1(
                graph,
                pred,
                lambda: inline_graph(then_branch, inputs),
                lambda: inline_graph(else_branch, inputs),
                strict=True,
                name=op.name + "/",
                location=op.location,
            )


define_op(
    "If",
    _infer_if,
    _if_kernel,
    stateful=True,  # a branch may hold stateful ops: no pass may fold or merge the call
    wants_context=True,
    extra={"lowering": _lower_if},
)


# -- copying a branch graph ------------------------------------------------------------------------
def inline_graph(function_graph: FuncGraph, inputs: Sequence[Tensor]) -> list[Tensor]:
    """Copies the ops of ``function_graph`` into the default graph, where they take ``inputs``
    for its ``inputs`` placeholders; returns the copies of its ``outputs``.

    The copies are made in the current name scope and control-flow context (so a cond branch
    being built captures what they read from outside), keep the file:line of the ops they copy,
    and record them as ``_original`` (what run errors and statistics name).  A loop's back edge
    (a Merge input made after the Merge) is closed once its source is copied, and a loop's
    frame is renamed after the current name scope."""
    graph = get_default_graph()
    scope = graph.get_name_scope() + "/" if graph.get_name_scope() else ""
    copies: dict[Tensor, Tensor] = dict(zip(function_graph.inputs, inputs))
    op_copies: dict[Operation, Operation] = {}
    open_back_edges = []
    for op in function_graph._ops:
        if op.outputs and op.outputs[0] in copies and op.type == "Placeholder":
            continue
        new_inputs = []
        for index, t in enumerate(op.inputs):
            if t in copies:
                new_inputs.append(copies[t])
            else:  # a back edge into a Merge: closed below
                open_back_edges.append((op, index, t))
                new_inputs.append(copies[op.inputs[0]])
        controls = []
        for c in op.control_inputs:
            if c in op_copies:
                controls.append(op_copies[c])
            elif c.outputs and c.outputs[0] in copies:
                controls.append(copies[c.outputs[0]].op)
        attrs = dict(op.attrs)
        if op._op_def.kind == NodeKind.ENTER and scope:
            # The loop's frame is named after the scope of its copy, so that it differs from
            # every frame of the graph it is copied into (a copy inside a loop of the same name).
            attrs["frame_name"] = f"{scope}{attrs['frame_name']}"
        twin = graph.create_op(
            op._op_def,
            new_inputs,
            attrs,
            name=op.name,
            control_inputs=controls,
            location=op.location,
        )
        twin._original = getattr(op, "_original", op)
        op_copies[op] = twin
        for old, new in zip(op.outputs, twin.outputs):
            copies[old] = new
    for op, index, t in open_back_edges:
        set_merge_input(op_copies[op], index, copies[t])
    return [copies[t] for t in function_graph.outputs]


# -- building a v2 cond ----------------------------------------------------------------------------
def cond_v2(
    pred: Tensor, true_fn: Callable, false_fn: Callable, strict: bool, name: Optional[str], location
):
    """``cond`` in its v2 form (`control_flow_ops.cond` has checked the arguments): traces the
    branches, checks that their results agree, and returns the ``If`` op's outputs (each through
    an Identity ``<cond>/Identity``, as TensorFlow's) in the branches' structure."""
    graph = get_default_graph()
    with graph.name_scope(name or "cond") as scope:
        cond_name = scope[:-1]
        then_graph, then_result = _trace_branch(graph, true_fn, "true_fn", cond_name, location)
        else_graph, else_result = _trace_branch(graph, false_fn, "false_fn", cond_name, location)
        if not strict:
            then_result = control_flow_ops._unpack_if_singleton(then_result)
            else_result = control_flow_ops._unpack_if_singleton(else_result)
        where = (
            f"in cond '{cond_name}' ({location}; true_fn defined at "
            f"{control_flow_ops._defined_at(true_fn)}, false_fn at "
            f"{control_flow_ops._defined_at(false_fn)})"
        )
        try:
            nest.assert_same_structure(then_result, else_result)
        except (TypeError, ValueError) as e:
            raise type(e)(
                f"Incompatible return values of 'true_fn' and 'false_fn' {where}: {e}"
            ) from None
        paths = [path for path, _ in nest.flatten_with_paths(then_result)]
        if not paths:
            raise ValueError(f"'true_fn' and 'false_fn' must return at least one result {where}")
        for path, t, f in zip(paths, then_graph.outputs, else_graph.outputs):
            if t.dtype is not f.dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s) "
                    f"{where}: result{path} is {t.dtype.name} from 'true_fn' and "
                    f"{f.dtype.name} from 'false_fn'."
                )
        inputs = _share_captures(then_graph, else_graph)
        outputs = make_if(pred, inputs, then_graph, else_graph, cond_name)
        outputs = [identity(t, name="Identity") for t in outputs]
    return nest.pack_sequence_as(then_result, outputs)


def make_if(
    pred: Tensor, inputs: list, then_graph: FuncGraph, else_graph: FuncGraph, name: str
) -> list[Tensor]:
    """The outputs of a new ``If`` op named exactly ``name``; the branches take ``inputs`` and
    return outputs of the same dtypes (checked by the callers)."""
    shapes = [
        _most_specific_common_shape(t.shape, f.shape)
        for t, f in zip(then_graph.outputs, else_graph.outputs)
    ]
    attrs = {
        "then_branch": then_graph,
        "else_branch": else_graph,
        "Tcond": pred.dtype,
        "Tin": [t.dtype for t in inputs],
        "Tout": [t.dtype for t in then_graph.outputs],
        "output_shapes": shapes,
    }
    return apply_op("If", [pred, *inputs], attrs, name=name + "/").outputs


def _trace_branch(graph: Graph, fn: Callable, fn_name: str, cond_name: str, location):
    """Traces ``fn`` into a `FuncGraph`; returns it (``outputs`` set, ``inputs`` still to be
    set by `_share_captures`) and ``fn``'s result with its leaves replaced by those outputs."""
    branch = FuncGraph(f"{cond_name}_{fn_name}", outer_graph=graph)
    with branch.as_default(), building_in(branch, None):
        result = fn()
        if result is None:
            raise ValueError(
                f"'{fn_name}' must have a return value: it returned None (cond '{cond_name}' at "
                f"{location}; {fn_name} defined at {control_flow_ops._defined_at(fn)})."
            )
        outputs = []
        for path, leaf in nest.flatten_with_paths(result):
            outputs.append(_branch_output(leaf, path, fn, fn_name, cond_name, location))
    branch.outputs = outputs
    branch.structured_outputs = result
    return branch, nest.pack_sequence_as(result, outputs)


def _branch_output(leaf, path, fn, fn_name: str, cond_name: str, location) -> Tensor:
    """The branch graph's output for one leaf of ``fn``'s result: an Identity in the branch (so
    that a tensor from outside is captured, and every output is the branch's own op)."""
    where = (
        f"(cond '{cond_name}' at {location}; {fn_name} defined at "
        f"{control_flow_ops._defined_at(fn)})"
    )
    if isinstance(leaf, Operation):
        with get_default_graph().control_dependencies([leaf]):
            return constant(True, name="control_dependency")
    if composites.is_composite(leaf) or control_flow_ops._is_tensor_array(leaf):
        raise TypeError(
            f"'{fn_name}' returned a {type(leaf).__name__} at result{path}; a cond built with "
            f"control flow v2 returns tensors, Python values and Operations only {where}."
        )
    try:
        if leaf is None:
            raise TypeError("None is not a tensor")
        tensor = convert_to_tensor(leaf)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"'{fn_name}' returned {leaf!r} at result{path}, which is neither a tensor, a value "
            f"convertible to one, nor an Operation ({e}) {where}."
        ) from None
    return identity(tensor)


def _share_captures(then_graph: FuncGraph, else_graph: FuncGraph) -> list[Tensor]:
    """The outer tensors either branch captured, in one order; each branch gets a placeholder
    for every one of them (``inputs``), so that both take the same inputs."""
    outer = list(then_graph.captures)
    outer += [t for t in else_graph.captures if t not in then_graph.captures]
    for branch in (then_graph, else_graph):
        for t in outer:
            if t not in branch.captures:
                branch.captures[t] = branch._capture_placeholder(t, t.op.name.replace("/", "_"))
        branch.inputs = [branch.captures[t] for t in outer]
    return outer


def _most_specific_common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


# -- the gradient ----------------------------------------------------------------------------------
@RegisterGradient("If")
def _if_grad(op: Operation, *output_grads):
    """An ``If`` on the same predicate of the two branches' gradient functions; the inputs
    neither branch passes a gradient to get None."""
    pred, inputs = op.inputs[0], list(op.inputs[1:])
    output_grads = [
        g if g is not None else zeros_like(out) for g, out in zip(output_grads, op.outputs)
    ]
    graph = get_default_graph()
    branches = []
    for attr in ("then_branch", "else_branch"):
        branches.append(_gradient_graph(graph, op.attrs[attr], inputs, output_grads, op.name))
    then_grad, then_results = branches[0]
    else_grad, else_results = branches[1]
    positions = []
    for k, (t, f) in enumerate(zip(then_results, else_results)):
        if t is None and f is None:
            continue
        if t is None:
            then_results[k] = _zeros_in(then_grad, f, k, op)
        elif f is None:
            else_results[k] = _zeros_in(else_grad, t, k, op)
        positions.append(k)
    if not positions:
        return [None] * len(op.inputs)
    then_grad.outputs = [then_results[k] for k in positions]
    else_grad.outputs = [else_results[k] for k in positions]
    grad_inputs = inputs + output_grads
    for branch in (then_grad, else_grad):
        branch.structured_outputs = branch.outputs
    grads = make_if(pred, grad_inputs, then_grad, else_grad, graph.unique_name(op.name + "_grad"))
    result: list = [None] * len(op.inputs)
    for k, g in zip(positions, grads):
        result[k + 1] = g
    return result


def _gradient_graph(graph: Graph, forward: FuncGraph, inputs: list, output_grads: list, name):
    """A `FuncGraph` that takes the forward inputs and the output gradients, rebuilds the
    forward branch on them and differentiates it; returns it (``inputs`` set) and the gradient
    of each forward input (None where none flows)."""
    grad_graph = FuncGraph(f"{name}_{forward.name}_grad", outer_graph=graph)
    with grad_graph.as_default(), building_in(grad_graph, None):
        forward_inputs = [placeholder(t.dtype, t.shape, name="input") for t in inputs]
        grad_ys = [placeholder(g.dtype, g.shape, name="output_grad") for g in output_grads]
        outputs = inline_graph(forward, forward_inputs)
        differentiable = [k for k, t in enumerate(forward_inputs) if _is_backpropagatable(t)]
        results: list = [None] * len(inputs)
        float_outputs = [
            k for k, t in enumerate(outputs) if t.dtype.is_floating or t.dtype.is_complex
        ]
        if differentiable and float_outputs:
            grads = gradients(
                [outputs[k] for k in float_outputs],
                [forward_inputs[k] for k in differentiable],
                grad_ys=[grad_ys[k] for k in float_outputs],
            )
            for k, g in zip(differentiable, grads):
                if g is not None:
                    results[k] = identity(convert_to_tensor(g))
    grad_graph.inputs = forward_inputs + grad_ys
    return grad_graph, results


def _zeros_in(branch: FuncGraph, like: Tensor, k: int, op: Operation) -> Tensor:
    """A zero gradient in ``branch`` for forward input ``k``, which only the other branch's
    gradient (``like``) reaches: zeros like the input, or (for a variable's handle) of
    ``like``'s static shape, which must then be known."""
    forward_input = branch.inputs[k]
    with branch.as_default(), building_in(branch, None):
        if forward_input.dtype is not _dtypes.resource:
            return zeros_like(forward_input)
        if not like.shape.is_fully_defined():
            raise errors.UnimplementedError(
                None,
                op,
                f"The gradient of {errors.describe_op(op)} for the variable "
                f"'{op.inputs[k + 1].name}' that only one branch reads needs its shape, which "
                "is not known statically.",
            )
        return zeros(like.shape, like.dtype)


# ``cond`` builds this form while control flow v2 is enabled.
register_functional_cond(cond_v2)
