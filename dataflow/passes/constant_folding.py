"""Constant folding: compute at optimization time what depends on constants only.

Two rewrites, repeated until neither applies:

- **Folding.**  A pure op (not stateful, not reading the run's state, an ordinary kernel) whose
  data inputs are all ``Const`` outputs is run once now, with the same kernel a run would call,
  and replaced by ``Const`` ops holding its outputs: the values are bit for bit what the run
  would have computed.  The new ``Const`` takes the op's name (so a fetched name resolves), its
  location and context, and as control inputs those of the op and of its constant inputs: a
  constant inside a loop or a branch stays gated by the pivot its inputs had, so it stays in
  its frame and is dead exactly when the op would have been.  An op whose kernel raises is left
  alone (the run raises as before); outputs over `MAX_FOLDED_BYTES` are not folded (the graph
  would hold them for good), nor are ops without data inputs (``Placeholder``) or without a
  kernel, nor ops that stand for a value a run may feed (``PlaceholderWithDefault``, marked
  ``extra["feedable"]``): as in TensorFlow, the default of a placeholder is not a constant, so
  a cond on one keeps its Switches whether or not this run feeds it.
- **Constant predicates.**  A ``Switch`` whose predicate is a ``Const`` always sends its data
  the same way: the taken output's consumers read the data directly (or, when the predicate
  has control inputs, an ``Identity`` of it gated by them, since the Switch was live only
  when they were), and everything that only the untaken output reaches is
  statically dead and removed; each ``Merge`` that loses its dead inputs and keeps one is
  replaced by it.  So ``cond(True, f, g)`` collapses to ``f``'s ops.  The rewrite is skipped
  when a statically dead value is fetched (the run must still report it), when a Merge that
  loses inputs has its ``value_index`` used, or when a loop would be left half dead.  Ops of
  the untaken branch, stateful ones included, never run, so removing them changes nothing.
"""

from __future__ import annotations

import warnings

import numpy as np

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from .graph_item import GraphItem, constant_value, is_pure, value_context
from .registry import GraphPass, PassReport, register_pass

MAX_FOLDED_BYTES = 10 * 2**20
_MAX_ROUNDS = 20


class ConstantFolding(GraphPass):
    name = "constant_folding"
    verb = "folded"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        for _ in range(_MAX_ROUNDS):
            changed = fold_constants(item, report)
            changed |= collapse_constant_switches(item, report)
            if not changed:
                break


def _foldable(item: GraphItem, op: Operation) -> bool:
    if not op._inputs or not is_pure(op) or item.is_fetched(op):
        return False
    if op._op_def.extra.get("feedable"):
        return False
    for out in op._outputs:
        size = out.shape.num_elements()
        if size is not None and size * out.dtype.size > MAX_FOLDED_BYTES:
            return False
    return all(constant_value(t) is not None for t in op._inputs)


def _evaluate(op: Operation, values: list):
    """The outputs of ``op`` on ``values`` as arrays of its output dtypes, or None."""
    try:
        kernel = op._op_def.kernel(op.attrs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                result = kernel(*values)
    except Exception:
        return None
    outputs = (result,) if len(op._outputs) == 1 else tuple(result)
    if len(outputs) != len(op._outputs):
        return None
    arrays = []
    for out, value in zip(op._outputs, outputs):
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        array = np.asarray(value)
        if array.dtype != _dtypes.numpy_dtype(out.dtype) or array.nbytes > MAX_FOLDED_BYTES:
            return None
        if not out.shape.is_compatible_with(array.shape):
            return None
        arrays.append(array)
    return arrays


def fold_constants(item: GraphItem, report: PassReport) -> bool:
    changed = False
    for op in topological_order(item.graph):
        if not _foldable(item, op):
            continue
        values = [constant_value(t) for t in op._inputs]
        if any(v is None for v in values):
            continue
        arrays = _evaluate(op, values)
        if arrays is None:
            continue
        controls = list(op._control_inputs)
        for t in op._inputs:
            for c in t.op._control_inputs:
                if c not in controls:
                    controls.append(c)
        single = len(op._outputs) == 1
        new_outputs = []
        name = item.free_name(op)  # the constant of a single-output op takes the name
        for i, array in enumerate(arrays):
            const_name = name if single else f"{name}/folded_{i}"
            new_outputs.append(item.add_const(array, const_name, op, controls))
        item.replace_op(op, new_outputs, controls)
        report.count("folded")
        changed = True
    return changed


# -- constant predicates ---------------------------------------------------------------------------
def collapse_constant_switches(item: GraphItem, report: PassReport) -> bool:
    changed = False
    enters_of: dict[str, list[Operation]] = {}  # frame name -> its Enters, removed ones too
    for op in list(item.graph._ops):
        if op._op_def.kind == NodeKind.ENTER:
            enters_of.setdefault(op.attrs.get("frame_name"), []).append(op)
    for op in list(item.graph._ops):
        if op._op_def.kind != NodeKind.SWITCH or op not in item.graph._ops:
            continue
        pred = constant_value(op._inputs[1])
        if pred is None or np.size(pred) != 1:
            continue
        if _collapse(item, op, int(bool(np.asarray(pred).reshape(()))), enters_of):
            report.count("switches with a constant predicate removed")
            changed = True
    return changed


def _collapse(item: GraphItem, switch: Operation, taken: int, enters_of: dict) -> bool:
    if item.has_fetched_output(switch):
        return False
    plan = _dead_region(item, switch._outputs[1 - taken], switch, enters_of)
    if plan is None:
        return False
    dead_ops, merge_losses = plan
    data, pred = switch._inputs
    gate = list(pred.op._control_inputs)
    live = switch._outputs[taken]
    if gate and item.consumers(live):
        # The taken side was live only when the predicate was: keep that gate on the value.
        gated = item.add_op(
            "Identity", [data], {}, f"{switch.name}/taken", switch, gate, context=None
        )
        gated._control_flow_context = value_context(data)
        item.replace_uses(live, gated._outputs[0])
    else:
        item.replace_uses(live, data)
    single_input_merges = []
    for merge, positions in merge_losses.items():
        for i in sorted(positions, reverse=True):
            item.remove_input(merge, i)
        if len(merge._inputs) == 1 and not merge._control_inputs:
            single_input_merges.append(merge)
    item.remove_ops(dead_ops)
    item.replace_op(switch, [data, data], [data.op, *gate])
    for merge in single_input_merges:
        item.replace_op(merge, [merge._inputs[0], merge._outputs[1]])
    return True


def _dead_region(item: GraphItem, dead: Tensor, switch: Operation, enters_of: dict):
    """The ops only ``dead`` reaches (statically dead) and the inputs each Merge loses, or None
    when collapsing would change what a run does (see the module docstring).  ``enters_of``
    maps frame names to their Enter ops (some maybe removed since), so that checking a dead
    loop costs its Enters, not a scan of the graph."""
    dead_ops: set[Operation] = set()
    merge_losses: dict[Operation, set[int]] = {}
    dead_tensors = [dead]
    dead_controls: list[Operation] = []

    def kill(op: Operation) -> None:
        if op in dead_ops:
            return
        dead_ops.add(op)
        dead_tensors.extend(op._outputs)
        dead_controls.append(op)

    while dead_tensors or dead_controls:
        while dead_tensors:
            t = dead_tensors.pop()
            if item.is_fetched(t):
                return None
            for consumer in item.consumers(t):
                if consumer._op_def.kind == NodeKind.MERGE:
                    positions = merge_losses.setdefault(consumer, set())
                    positions.update(i for i, x in enumerate(consumer._inputs) if x is t)
                    forward = [
                        i
                        for i, x in enumerate(consumer._inputs)
                        if x.op._op_def.kind != NodeKind.NEXT_ITERATION
                    ]
                    if all(i in positions for i in forward):
                        kill(consumer)
                    elif any(
                        consumer._inputs[i].op._op_def.kind == NodeKind.NEXT_ITERATION
                        for i in positions
                    ):
                        return None  # a loop's back edge would be dead while the loop lives
                else:
                    kill(consumer)
        while dead_controls:
            op = dead_controls.pop()
            if item.is_fetched(op):
                return None
            for consumer in item.control_consumers(op):
                kill(consumer)
    for merge in merge_losses:
        if merge in dead_ops:
            continue
        if item.consumers(merge._outputs[1]) or item.is_fetched(merge._outputs[1]):
            return None
    # A loop is dead whole or not at all.
    dead_frames = {
        op.attrs.get("frame_name") for op in dead_ops if op._op_def.kind == NodeKind.ENTER
    }
    for frame in dead_frames:
        for op in enters_of.get(frame, ()):
            if op in item.graph._ops and op not in dead_ops:
                return None
    merge_losses = {m: p for m, p in merge_losses.items() if m not in dead_ops}
    if switch in dead_ops:
        return None
    return dead_ops, merge_losses


register_pass(ConstantFolding())
