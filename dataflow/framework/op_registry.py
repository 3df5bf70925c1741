"""The op table: one `OpDef` per op type, holding everything about that op in one place.

An op module defines an op with `define_op` (or the `op` decorator form) and a user-facing
function that calls `apply_op`.  Nothing else in the project special-cases an op by its name:
lowering, rendering and later passes ask the OpDef (``kind``, ``stateful``, ...).

OpDef fields:

- ``infer(op) -> [(dtype, shape), ...]``: static dtype and shape of each output, from
  ``op.inputs`` and ``op.attrs``; raise ``ValueError``/``TypeError`` for bad inputs (the message
  is prefixed with the op and the user's line).
- ``kernel(attrs) -> callable``: builds the numpy function that runs the op.  It is called once
  per lowering, with the op's attrs; the callable receives the input arrays positionally (and the
  run context first when ``wants_context``) and returns the output (a tuple when several).
- ``kind``: how the executor fires the node (`executor.NodeKind`); only the control-flow
  primitives use anything but ``OP``.
- ``stateful``: the op has effects or reads state, so passes must never merge, fold or drop it.
- ``feed_only``: the op has no value of its own; its kernel only reports that it was not fed
  (``Placeholder``).  A run that feeds it replaces it whole: a control edge from it waits for
  the feed instead (`dataflow.framework.graph.feeds_stand_in_for`).
- ``extra``: what only some ops have.  For TF1's reference types (`dataflow.ops.ref_variables`):
  ``ref_inputs`` (positions where the op takes a reference as it is; any other input of a
  reference type is read when the op runs), ``outputs_refs`` (the op's outputs may be
  references; any other op's outputs are values), ``ref_variant`` (the op type `apply_op` makes
  instead when every ``ref_inputs`` position of that type gets a reference: Switch makes a
  RefSwitch, as TF1's control-flow builders do).
- ``fires_on_dead``, ``blocking``, ``wants_frame``, ``asynchronous``: the executor node flags
  of kernels that talk to other runs through a rendezvous (``_Send``, ``_Recv``; see
  `executor.program`): run on a dead input, wait on a thread of their own, learn the frame
  instance and iteration, complete through a callback.
- ``inline``: ``True`` when the kernel is always cheap (shape queries, identities, scalars),
  ``None`` to let the executor decide at run time from the kernel's measured time
  (`executor.costs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

from executor.program import NodeKind

from . import graph as _graph
from .graph import ref_inputs
from .tensor_conversion import convert_to_tensor


@dataclass
class OpDef:
    type: str
    infer: Callable[[_graph.Operation], list]
    kernel: Optional[Callable[[dict], Callable]] = None
    kind: NodeKind = NodeKind.OP
    stateful: bool = False
    wants_context: bool = False
    inline: Optional[bool] = None
    feed_only: bool = False
    gradient: Optional[Callable] = None
    extra: dict = field(default_factory=dict)
    fires_on_dead: bool = False
    blocking: bool = False
    wants_frame: bool = False
    asynchronous: bool = False


_OP_DEFS: dict[str, OpDef] = {}


def define_op(type_name: str, infer: Callable, kernel: Optional[Callable] = None, **kw) -> OpDef:
    """Registers the op ``type_name``.  Defining the same type twice is a programming error."""
    if type_name in _OP_DEFS:
        raise KeyError(f"Op type {type_name!r} is defined twice")
    op_def = OpDef(type_name, infer, kernel, **kw)
    _OP_DEFS[type_name] = op_def
    return op_def


def get_op_def(type_name: str) -> OpDef:
    try:
        return _OP_DEFS[type_name]
    except KeyError:
        raise KeyError(f"No op type {type_name!r} is defined") from None


# Set once a graph with an op runner (eager mode's) has existed in the process: until then
# `apply_op` builds graph ops without asking the default graph for a runner.
_op_runners_in_use = False


def enable_op_runners() -> None:
    """Makes `apply_op` ask the default graph for its ``_op_runner`` from now on; a mode that
    runs ops instead of building them calls this before its graph becomes a default."""
    global _op_runners_in_use
    _op_runners_in_use = True


# Eager mode's short way for an op of one output (`dataflow.eager.runner.run_planned_op`):
# ``(type_name, inputs, attrs, name) -> output tensor``, or None to take `apply_op`.
_planned_output: Optional[Callable] = None


def register_planned_output(run: Callable) -> None:
    """Gives `apply_op_output` the short way of the mode that runs ops (eager mode's)."""
    global _planned_output
    _planned_output = run


def registered_op_types() -> list[str]:
    return sorted(_OP_DEFS)


def _forwards_refs_of(variant: OpDef, tensors: list) -> bool:
    slots = ref_inputs(variant, len(tensors))
    return bool(slots) and all(tensors[i].dtype.is_ref_dtype for i in slots)


def apply_op(
    type_name: str,
    inputs=(),
    attrs: Optional[dict] = None,
    name: Optional[str] = None,
    graph: Optional[_graph.Graph] = None,
    control_inputs=(),
) -> _graph.Operation:
    """Creates an op of type ``type_name`` in ``graph`` (or the graph of the inputs, or the
    default graph) and returns the `Operation`.  Inputs are converted with `convert_to_tensor`.

    The one hook of execution modes: when the default graph (or ``graph``) has an op runner
    (eager mode's graph does), the op is handed to ``runner.apply(op_def, inputs, attrs, name,
    control_inputs)`` with the inputs as given, and what that returns (an object with
    ``outputs``, like an `Operation`) is returned instead.  Graph building never pays more
    than the check of one module flag for this.
    """
    op_def = get_op_def(type_name)
    if _op_runners_in_use:
        runner = (_graph.get_default_graph() if graph is None else graph)._op_runner
        if runner is not None:
            return runner.apply(op_def, inputs, attrs or {}, name, control_inputs)
    tensors = [convert_to_tensor(x) if not isinstance(x, _graph.Tensor) else x for x in inputs]
    if graph is None:
        graph = _graph.get_default_graph()
        if tensors and not graph.captures_outer_tensors:
            if not _op_runners_in_use:
                graph = tensors[0].graph
            else:  # an eager input belongs to no graph: the op goes where its others are
                graph = next((t.graph for t in tensors if not t._is_eager), graph)
    if _op_runners_in_use:
        tensors = [
            graph._capture_eager_tensor(t, op_def.type) if t._is_eager else t for t in tensors
        ]
    variant = op_def.extra.get("ref_variant")
    if variant is not None and _forwards_refs_of(get_op_def(variant), tensors):
        op_def = get_op_def(variant)
    return graph.create_op(op_def, tensors, attrs or {}, name=name, control_inputs=control_inputs)


def apply_op_output(
    type_name: str, inputs=(), attrs: Optional[dict] = None, name: Optional[str] = None
) -> _graph.Tensor:
    """The one output of a new op of type ``type_name``: ``apply_op(type_name, inputs, attrs,
    name).outputs[0]``, for the functions of ops with one output that never need the op.

    In eager mode a repeated op takes the short way registered with
    `register_planned_output`: straight to the kernel of the plan kept for it, with no
    `Operation` made (the general way makes the plan, records on tapes, raises errors).
    """
    if _op_runners_in_use and _planned_output is not None:
        output = _planned_output(type_name, inputs, attrs, name)
        if output is not None:
            return output
    return apply_op(type_name, inputs, attrs, name).outputs[0]
