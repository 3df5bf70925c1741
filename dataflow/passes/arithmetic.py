"""Algebraic simplification: rewrites that leave every value identical, bit for bit.

The rules come from the ops' definitions (``OpDef.extra``, written beside each op):

- **Identity elements** (``"identity"``): ``x * 1``, ``1 * x``, ``x / 1``, ``x - 0`` and, exactly
  where it is exact, ``x + 0`` become ``x``.  For floats only ``x + (-0.0)`` is ``x`` for every
  ``x``: ``-0.0 + 0.0`` is ``0.0``, so ``x + 0.0`` is left alone (``x - 0.0`` is exact).  The
  constant must not widen the result: its shape has to broadcast into ``x``'s (a ``[3]`` of ones
  times a scalar ``x`` is a ``[3]``, not ``x``), and the dtypes are equal (binary ops require it).
- **Annihilators** (``"annihilator"``): ``x * 0`` becomes ``zeros_like(x)`` for integers only.
  For floats ``x * 0`` is NaN for NaN or inf and ``-0.0`` for negative ``x``, so even a provably
  finite ``x`` would change the sign of zeros; the rewrite is not done.
- **Involutions** (``"involution"``): ``-(-x)`` and ``not(not x)`` become ``x``.
- **Permutations** (``"permutation"``): a transpose of a transpose becomes one transpose with
  the composed axes, or ``x`` when they compose to the identity.
- **Views** (``"view"``): a reshape of a reshape reshapes the original once, when the inner one
  cannot fail (its input's shape is fully known, so inference already checked it); a reshape to
  the shape its input already has (both fully known) becomes the input.

When an op is replaced by its input ``x``, the gating it had (its control inputs and those of
the constant it dropped) is kept unless ``x`` being live already implies it (``x`` lies in the
branch or loop body whose pivot it is); otherwise the replacement is an ``Identity`` of ``x``
with those control inputs, so nothing runs or lives where it did not before.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from ..framework.tensor_shape import TensorShape
from .graph_item import GraphItem, constant_value, is_pure, value_context
from .registry import GraphPass, PassReport, register_pass


class ArithmeticOptimizer(GraphPass):
    name = "arithmetic"
    verb = "simplified"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        for op in topological_order(item.graph):
            if item.graph._ops_by_name.get(op._name) is not op:
                continue  # removed by an earlier rewrite
            if not is_pure(op) or item.is_fetched(op):
                continue
            extra = op._op_def.extra
            if "identity" in extra and _identity_element(item, op, extra["identity"]):
                report.count("identity elements removed")
            elif "annihilator" in extra and _annihilator(item, op, extra["annihilator"]):
                report.count("integer multiplications by zero replaced")
            elif extra.get("involution") and _involution(item, op):
                report.count("double negations removed")
            elif "permutation" in extra and _transposes(item, op, extra["permutation"]):
                report.count("transposes of transposes combined")
            elif extra.get("view") and _reshapes(item, op):
                report.count("reshapes simplified")


def _broadcasts_into(small: TensorShape, big: TensorShape) -> bool:
    """Whether broadcasting ``small`` with ``big`` gives ``big``'s shape, whatever the run-time
    sizes (unknown dims of ``big`` may be anything, including 0)."""
    if small.ndims is None:
        return False
    if small.ndims == 0:
        return True
    if big.ndims is None or small.ndims > big.ndims:
        return False
    for s, b in zip(reversed(small.as_list()), reversed(big.as_list())):
        if s == 1:
            continue
        if s is None or b is None or s != b:
            return False
    return True


def _all_equal_to(value: np.ndarray, element) -> bool:
    if value.size == 0:
        return False
    if not np.all(value == element):
        return False
    if value.dtype.kind == "f":
        return bool(np.all(np.signbit(value) == np.signbit(element)))
    return value.dtype.kind in "iub"


def implied_gates(t: Tensor) -> set[Operation]:
    """Ops that are certainly live whenever ``t`` is: the pivot of each cond branch around it,
    and each enclosing loop's predicate Merge (``pivot_for_pred``)."""
    gates: set[Operation] = set()
    context = value_context(t)
    while context is not None:
        if hasattr(context, "branch"):
            if context.pivot is not None:
                gates.add(context.pivot.op)
        elif getattr(context, "pivot_for_pred", None) is not None:
            gates.add(context.pivot_for_pred.op)
        context = context.outer_context
    return gates


def forward(item: GraphItem, op: Operation, x: Tensor, dropped: list[Operation]) -> None:
    """Replaces ``op``'s single output by ``x``, keeping the gating of ``op`` and ``dropped``."""
    gates = list(op._control_inputs)
    for d in dropped:
        for c in d._control_inputs:
            if c not in gates:
                gates.append(c)
    implied = implied_gates(x)
    gates = [g for g in gates if g not in implied and g is not x.op]
    if gates:
        identity = item.add_op(
            "Identity", [x], {}, f"{op.name}/forward", op, gates, context=value_context(x)
        )
        x = identity._outputs[0]
    item.replace_op(op, [x], [x.op])


def _identity_element(item: GraphItem, op: Operation, sides: dict) -> bool:
    out = op._outputs[0]
    for side, position in (("right", 1), ("left", 0)):
        if side not in sides or len(op._inputs) != 2:
            continue
        c, x = op._inputs[position], op._inputs[1 - position]
        value = constant_value(c)
        if value is None or x.dtype is not out.dtype:
            continue
        element = sides[side]
        if value.dtype.kind in "iu" and element == 0:
            element = 0
        if not _all_equal_to(value, element):
            continue
        if not _broadcasts_into(c.shape, x.shape):
            continue
        forward(item, op, x, [c.op])
        return True
    return False


def _annihilator(item: GraphItem, op: Operation, zero) -> bool:
    out = op._outputs[0]
    if _dtypes.numpy_dtype(out.dtype).kind not in "iu" or len(op._inputs) != 2:
        return False
    for position in (1, 0):
        c, x = op._inputs[position], op._inputs[1 - position]
        value = constant_value(c)
        if value is None or not _all_equal_to(value, zero):
            continue
        if not _broadcasts_into(c.shape, x.shape):
            continue
        controls = list(op._control_inputs) + [
            g for g in c.op._control_inputs if g not in op._control_inputs
        ]
        name = item.free_name(op)
        zeros = item.add_op("ZerosLike", [x], {}, name, op, controls)
        item.replace_op(op, zeros._outputs, [zeros])
        return True
    return False


def _involution(item: GraphItem, op: Operation) -> bool:
    inner = op._inputs[0].op
    if inner._op_def is not op._op_def or len(inner._inputs) != 1:
        return False
    forward(item, op, inner._inputs[0], [inner])
    return True


def _permutation(op: Operation, attr: str, rank: int):
    perm = op.attrs.get(attr)
    if perm is None:
        return list(range(rank))[::-1]
    return [a % rank for a in perm]


def _transposes(item: GraphItem, op: Operation, attr: str) -> bool:
    inner = op._inputs[0].op
    if inner._op_def is not op._op_def or len(inner._inputs) != 1:
        return False
    x = inner._inputs[0]
    rank = x.shape.ndims
    if rank is None:
        return False
    first, second = _permutation(inner, attr, rank), _permutation(op, attr, rank)
    combined = [first[a] for a in second]
    if combined == list(range(rank)):
        forward(item, op, x, [inner])
        return True
    controls = list(op._control_inputs) + [
        c for c in inner._control_inputs if c not in op._control_inputs
    ]
    name = item.free_name(op)
    new = item.add_op(op.type, [x], {**op.attrs, attr: tuple(combined)}, name, op, controls)
    item.replace_op(op, new._outputs, [new])
    return True


def _reshapes(item: GraphItem, op: Operation) -> bool:
    x, out = op._inputs[0], op._outputs[0]
    if x.shape.is_fully_defined() and out.shape.is_fully_defined():
        if x.shape.as_list() == out.shape.as_list():
            forward(item, op, x, [op._inputs[1].op] if len(op._inputs) > 1 else [])
            return True
    inner = x.op
    if inner._op_def is not op._op_def:
        return False
    source = inner._inputs[0]
    if not (source.shape.is_fully_defined() and x.shape.is_fully_defined()):
        return False
    controls = list(op._control_inputs)
    for c in inner._control_inputs + list(inner._inputs[1].op._control_inputs):
        if c not in controls:
            controls.append(c)
    name = item.free_name(op)
    new = item.add_op(
        op.type,
        [source, *op._inputs[1:]],
        dict(op.attrs),
        name,
        op,
        controls,
        outputs=[(t.dtype, t.shape) for t in op._outputs],
    )
    item.replace_op(op, new._outputs, [new])
    return True


register_pass(ArithmeticOptimizer())
