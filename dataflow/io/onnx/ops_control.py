"""ONNX's control flow: ``If`` as `cond`, ``Loop`` and ``Scan`` as `while_loop`.

An ``If`` whose predicate is known at import (computed from static shapes, as the functions
ONNX defines ops with often do) builds only the branch it takes: the other one may not be
valid for those shapes.

Role: the converters of the control-flow family (see `converters` for the contract).  Each
subgraph is built by the builder inside the branch or loop body function, so it lands in the
cond's or loop's context, and names of the enclosing graphs resolve as ONNX's outer-scope
values do (dataflow's cond and loop route them in).

Invariants: a loop's carried values may change shape from one iteration to the next (ONNX
allows it), so they are carried with unknown-shape invariants; per-iteration outputs (Loop's
scan outputs, Scan's outputs) are gathered in TensorArrays and stacked along a new first axis,
then moved to the axis and direction the node asks for.
"""

from __future__ import annotations

import numpy as np

from primitives.control_flow_ops import cond, while_loop

from ...framework import dtypes
from ...framework.tensor_shape import TensorShape
from ...ops import array_ops, gather_ops, math_ops, selection_ops
from ...ops.constant_op import constant
from ...ops.reverse_ops import reverse_v2
from ...ops.tensor_array_ops import TensorArray
from .converters import NodeContext, converts, normalize_axis, rank_of
from .reader import dtype_of, static_dims


def _scalar_bool(tensor):
    return array_ops.reshape(selection_ops.cast(tensor, dtypes.bool), [])


def _fresh(tensors):
    """Each value as a tensor made inside the current branch or body (an outer value passed
    through unchanged needs one op of the body's own)."""
    return [array_ops.identity(t) for t in tensors]


@converts("If")
def _if(ctx: NodeContext):
    builder = ctx.builder
    known = ctx.static(0)
    if known is not None and builder.control_depth == 0:
        # A predicate known at import (of static shapes, say): only the branch it takes is
        # built, as the other may not even be valid for these shapes.
        taken = "then_branch" if bool(np.asarray(known).reshape(-1)[0]) else "else_branch"
        return _fresh(builder.build_subgraph(ctx.attr(taken), ctx.scope, [], ctx.where))
    pred = _scalar_bool(ctx.required_input(0))

    def branch(attribute):
        def build():
            return _fresh(builder.build_subgraph(ctx.attr(attribute), ctx.scope, [], ctx.where))

        return build

    outputs = cond(pred, branch("then_branch"), branch("else_branch"))
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _output_arrays(ctx: NodeContext, body, first: int, fallback) -> list:
    """One TensorArray per body output from index ``first`` on (the per-iteration outputs).
    An output whose type the body leaves undeclared is taken to have ``fallback``'s dtype, and
    `_write` checks it once the body is built."""
    arrays = []
    for value_info in list(body.output)[first:]:
        elem_type = value_info.type.tensor_type.elem_type
        if elem_type == 0 and fallback is not None:
            dtype = fallback.dtype
        else:
            dtype = dtype_of(elem_type, ctx.where)
        dims = static_dims(value_info)
        arrays.append(
            TensorArray(
                dtype,
                size=0,
                dynamic_size=True,
                infer_shape=False,
                element_shape=TensorShape(dims) if dims is not None else None,
            )
        )
    return arrays


def _array_shapes(arrays) -> list:
    """The shape invariants of TensorArrays carried by a loop: those of their flows."""
    return [array.flow.shape for array in arrays]


def _write(ctx: NodeContext, arrays, index, values) -> list:
    """Each value written at ``index`` into its TensorArray, whose dtype it must have."""
    written = []
    for array, value in zip(arrays, values):
        if value.dtype != array.dtype:
            raise ctx.error(
                f"a per-iteration output of the body is {value.dtype.name}, its declared (or "
                f"assumed) type is {array.dtype.name}"
            )
        written.append(array.write(index, value))
    return written


@converts("Loop")
def _loop(ctx: NodeContext):
    body = ctx.attr("body")
    builder = ctx.builder
    trip_count, condition = ctx.input(0), ctx.input(1)
    initial = [t for t in ctx.inputs[2:]]
    state_count = len(initial)
    if len(body.input) != state_count + 2:
        raise ctx.error(
            f"the body takes {len(body.input)} inputs, the node gives {state_count} loop values"
        )
    limit = None
    if trip_count is not None:
        limit = array_ops.reshape(selection_ops.cast(trip_count, dtypes.int64), [])
    keep_going = _scalar_bool(condition) if condition is not None else constant(True)
    arrays = _output_arrays(ctx, body, 1 + state_count, initial[0] if initial else None)

    def test(i, going, *rest):
        if limit is None:
            return going
        return math_ops.logical_and(math_ops.less(i, limit), going)

    def step(i, going, *rest):
        states, partial = rest[:state_count], rest[state_count:]
        outputs = builder.build_subgraph(body, ctx.scope, [i, going, *states], ctx.where)
        new_states = _fresh(outputs[1 : 1 + state_count])
        written = _write(ctx, partial, i, outputs[1 + state_count :])
        return [math_ops.add(i, constant(1, dtype=dtypes.int64)), _scalar_bool(outputs[0])] + (
            new_states + written
        )

    start = [constant(0, dtype=dtypes.int64), keep_going]
    # The counter and the condition are scalars; carried values may change shape.
    invariants = [TensorShape([]), TensorShape([])] + [TensorShape(None)] * state_count
    results = while_loop(
        test, step, start + initial + arrays, shape_invariants=invariants + _array_shapes(arrays)
    )
    finals = list(results[2 : 2 + state_count])
    stacked = [a.stack() for a in results[2 + state_count :]]
    return finals + stacked


@converts("Scan")
def _scan(ctx: NodeContext):
    if ctx.opset < 9:
        raise ctx.error("Scan before opset 9 (with a batch axis) is not supported")
    body = ctx.attr("body")
    builder = ctx.builder
    scan_count = ctx.attr("num_scan_inputs")
    values = [t for t in ctx.inputs if t is not None]
    state_count = len(values) - scan_count
    states, sequences = values[:state_count], values[state_count:]
    input_axes = ctx.attr("scan_input_axes", [0] * scan_count)
    input_directions = ctx.attr("scan_input_directions", [0] * scan_count)
    output_count = len(body.output) - state_count
    output_axes = ctx.attr("scan_output_axes", [0] * output_count)
    output_directions = ctx.attr("scan_output_directions", [0] * output_count)
    # Each sequence with its scanned axis first, in the order it is read.
    moved = []
    for sequence, axis, direction in zip(sequences, input_axes, input_directions):
        rank = rank_of(ctx, sequence, "a scan input")
        axis = normalize_axis(ctx, axis, rank)
        if axis:
            perm = [axis] + [d for d in range(rank) if d != axis]
            sequence = array_ops.transpose(sequence, perm)
        if direction:
            sequence = reverse_v2(sequence, [0])
        moved.append(sequence)
    length = array_ops.shape(moved[0], out_type=dtypes.int64)[0]
    arrays = _output_arrays(ctx, body, state_count, sequences[0] if sequences else None)

    def test(i, *rest):
        return math_ops.less(i, length)

    def step(i, *rest):
        carried, partial = rest[:state_count], rest[state_count:]
        elements = [gather_ops.gather(s, i) for s in moved]
        outputs = builder.build_subgraph(body, ctx.scope, [*carried, *elements], ctx.where)
        written = _write(ctx, partial, i, outputs[state_count:])
        return [math_ops.add(i, constant(1, dtype=dtypes.int64))] + (
            _fresh(outputs[:state_count]) + written
        )

    invariants = [TensorShape([])] + [TensorShape(None)] * state_count
    loop_vars = [constant(0, dtype=dtypes.int64)] + states + arrays
    results = while_loop(test, step, loop_vars, shape_invariants=invariants + _array_shapes(arrays))
    finals = list(results[1 : 1 + state_count])
    outputs = []
    for array, axis, direction in zip(results[1 + state_count :], output_axes, output_directions):
        stacked = array.stack()
        if direction:
            stacked = reverse_v2(stacked, [0])
        rank = stacked.shape.ndims
        if axis:
            if rank is None:
                raise ctx.error("scan_output_axes need the output's rank known at import")
            axis = normalize_axis(ctx, axis, rank)
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
            stacked = array_ops.transpose(stacked, perm)
        outputs.append(stacked)
    return finals + outputs
