"""The control-flow primitives as graph ops, and the raw builders for writing them by hand.

Five ops carry control flow (`docs/control-flow-semantics.md` gives their firing rules): ``Switch``,
``Merge``, ``Enter``, ``Exit`` and ``NextIteration``.  They have no kernel: their ``OpDef.kind``
tells the Session to lower them to executor nodes of that kind, and the executor fires them.
``LoopCond`` marks a loop's predicate; it is an ordinary op whose kernel passes its input on.

With these builders a loop and a cond can be written without the helpers.  A loop::

    entered = df.enter(df.constant(0), frame_name="count")
    limit = df.enter(df.constant(10), frame_name="count", is_constant=True)
    one = df.enter(df.constant(1), frame_name="count", is_constant=True)
    i, _ = df.merge([entered, entered])          # input 1 is replaced below
    keep_going = df.loop_cond(i < limit)
    i_done, i_body = df.switch(i, keep_going)
    df.set_merge_input(i, 1, df.next_iteration(i_body + one))
    result = df.exit(i_done)                     # 10

The Merge starts with the Enter value twice because the back edge comes from an op that needs the
Merge's own output; `set_merge_input` closes the cycle once the NextIteration exists.  Every
value used in the frame enters it: the loop variable through an Enter, the constants ``10`` and
``1`` through constant Enters, which hand the same value to every iteration.  (A plain
``i < 10`` would compare a value in the frame with one outside it: a malformed graph.)

The builders go through ``Graph.create_op`` like every op, so inside a `cond` branch or a
`while_loop` body their inputs are captured by the active control-flow context.  They are meant
for hand-written graphs: a frame written by hand inside a helper's loop is not known to the
helper, which cannot then check it.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import NamedTuple, Optional, Union

from dataflow.framework import composites, nest
from dataflow.framework import dtypes as _dtypes
from dataflow.framework.graph import Operation, Tensor, get_default_graph
from dataflow.framework.indexed_slices import IndexedSlices
from dataflow.framework.op_registry import apply_op, define_op
from dataflow.framework.tensor_conversion import convert_to_tensor
from dataflow.framework.tensor_shape import TensorShape
from dataflow.ops.array_ops import dense_as_indexed_slices
from dataflow.ops.ref_variables import as_ref_or_tensor
from dataflow.ops.variables import Variable
from executor.program import NodeKind

__all__ = [
    "enter",
    "exit",
    "loop_cond",
    "merge",
    "next_iteration",
    "ref_enter",
    "ref_exit",
    "ref_merge",
    "ref_next_iteration",
    "ref_switch",
    "set_merge_input",
    "switch",
]


# -- inference -------------------------------------------------------------------------------------
def _inputs(op, count: int) -> tuple:
    if len(op.inputs) != count:
        raise ValueError(f"expects {count} input(s), got {len(op.inputs)}")
    return op.inputs


def check_predicate(pred: Tensor, what: str = "pred") -> None:
    """Raises unless ``pred`` is a bool tensor of rank 0 (or of unknown rank)."""
    if pred.dtype is not _dtypes.bool:
        raise TypeError(
            f"{what} must be a bool tensor, got '{pred.name}' of dtype {pred.dtype.name}"
        )
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got '{pred.name}' of shape {pred.shape}")


def merged_shape(inputs: Sequence[Tensor]) -> TensorShape:
    """The most specific shape that every input of a Merge is compatible with."""
    shape = inputs[0].shape
    for t in inputs[1:]:
        shape = shape.most_specific_compatible_shape(t.shape)
    return shape


def _infer_switch(op):
    data, pred = _inputs(op, 2)
    check_predicate(pred)
    return [(data.dtype, data.shape), (data.dtype, data.shape)]


def _infer_merge(op):
    if not op.inputs:
        raise ValueError("Merge needs at least one input")
    first = op.inputs[0]
    for t in op.inputs[1:]:
        if t.dtype is not first.dtype:
            raise TypeError(
                f"all inputs of a Merge must have one dtype: '{first.name}' is "
                f"{first.dtype.name} but '{t.name}' is {t.dtype.name}"
            )
    return [(first.dtype, merged_shape(op.inputs)), (_dtypes.int32, TensorShape([]))]


def _infer_enter(op):
    (data,) = _inputs(op, 1)
    frame_name = op.attrs.get("frame_name")
    if not isinstance(frame_name, str) or not frame_name:
        raise ValueError(f"frame_name must be a non-empty string, got {frame_name!r}")
    if not isinstance(op.attrs.get("is_constant"), bool):
        raise TypeError(f"is_constant must be a bool, got {op.attrs.get('is_constant')!r}")
    parallel = op.attrs.get("parallel_iterations")
    if isinstance(parallel, bool) or not isinstance(parallel, numbers.Integral) or parallel < 1:
        raise ValueError(f"parallel_iterations must be a positive integer, got {parallel!r}")
    # As TensorFlow's Enter: a loop variable may change shape from one iteration to the next,
    # so only a constant Enter knows it; a loop's builder sets the shape it guarantees.
    return [(data.dtype, data.shape if op.attrs["is_constant"] else TensorShape(None))]


def _infer_pass_through(op):
    (data,) = _inputs(op, 1)
    return [(data.dtype, data.shape)]


def _infer_loop_cond(op):
    (pred,) = _inputs(op, 1)
    check_predicate(pred, "the loop condition")
    return [(_dtypes.bool, TensorShape([]))]


def _pass_through(value):
    return value


# Each primitive has a Ref variant that forwards a reference to a variable's storage (TF1's
# RefSwitch, ...); `apply_op` makes it when the data input is a reference (for RefMerge, all
# inputs are), so the control-flow builders choose it as TF1's do.  The executor fires both
# alike: a reference is a value to it.  A cond's Switch passes a sparse gradient on as it came
# (the gradient of a gather in a branch).
for _type, _infer, _kind, _ref_inputs, _extra in (
    ("Switch", _infer_switch, NodeKind.SWITCH, (0,), {"passes_sparse_gradients": True}),
    ("Merge", _infer_merge, NodeKind.MERGE, "all", {}),
    ("Enter", _infer_enter, NodeKind.ENTER, (0,), {}),
    ("Exit", _infer_pass_through, NodeKind.EXIT, (0,), {}),
    ("NextIteration", _infer_pass_through, NodeKind.NEXT_ITERATION, (0,), {}),
):
    define_op(
        _type,
        _infer,
        kind=_kind,
        inline=True,
        extra=dict(_extra, ref_variant="Ref" + _type),
    )
    define_op(
        "Ref" + _type,
        _infer,
        kind=_kind,
        inline=True,
        extra=dict(_extra, ref_inputs=_ref_inputs, outputs_refs=True),
    )
define_op("LoopCond", _infer_loop_cond, lambda attrs: _pass_through, inline=True)


# -- raw builders ----------------------------------------------------------------------------------
class SwitchOutput(NamedTuple):
    """What `switch` returns, with TensorFlow's field names."""

    output_false: Tensor
    output_true: Tensor


class MergeOutput(NamedTuple):
    """What `merge` returns, with TensorFlow's field names."""

    output: Tensor
    value_index: Tensor


def switch(data, pred, name: Optional[str] = None) -> SwitchOutput:
    """``(output_false, output_true)``: ``data`` comes out of the output that ``pred`` selects;
    the other output is dead.  A composite ``data`` (IndexedSlices, SparseTensor) is switched
    part by part, and comes out as two composites.  A reference (or a `Variable`, as its
    reference) is switched by a RefSwitch, TF1's ``_SwitchRefOrTensor``."""
    if isinstance(data, Variable):
        data = as_ref_or_tensor(data)
    if composites.is_composite(data):
        with get_default_graph().name_scope(name or "Switch"):
            parts = composites.expand(data)
            pairs = [switch(part, pred) for part in nest.flatten(parts)]
            return SwitchOutput(
                *(
                    composites.pack(
                        data, nest.pack_sequence_as(parts, [pair[side] for pair in pairs])
                    )
                    for side in (0, 1)
                )
            )
    op = apply_op("Switch", [data, pred], name=name or "Switch")
    return SwitchOutput(op.outputs[0], op.outputs[1])


def merge(inputs: Sequence, name: Optional[str] = None) -> MergeOutput:
    """``(output, value_index)``: the first of ``inputs`` to arrive live, and its position."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("merge() needs at least one input")
    if any(composites.is_composite(x) for x in inputs):
        # Part by part; all parts of one input arrive together, so one value_index serves.
        with get_default_graph().name_scope(name or "Merge"):
            inputs = _dense_joining_indexed_slices(inputs)
            parts = [composites.expand(x) for x in inputs]
            if len({type(p) for p in parts}) != 1:
                raise TypeError(f"merge() of values of different kinds: {inputs!r:.200}")
            columns = zip(*(nest.flatten(p) for p in parts))
            merged = [merge(list(column)) for column in columns]
            value = composites.pack(
                inputs[0], nest.pack_sequence_as(parts[0], [m[0] for m in merged])
            )
            return MergeOutput(value, merged[0][1])
    op = apply_op("Merge", inputs, name=name or "Merge")
    return MergeOutput(op.outputs[0], op.outputs[1])


def _dense_joining_indexed_slices(inputs: list) -> list:
    """``inputs`` with each plain tensor made IndexedSlices when another input is one, as
    TensorFlow's merge does: a cond whose one branch gives a sparse gradient and the other dense
    zeros merges into a sparse gradient."""
    sparse = [x for x in inputs if isinstance(x, IndexedSlices)]
    if not sparse:
        return inputs
    return [
        dense_as_indexed_slices(convert_to_tensor(x), sparse[0])
        if not composites.is_composite(x)
        else x
        for x in inputs
    ]


def enter(
    data,
    frame_name: str,
    is_constant: bool = False,
    parallel_iterations: int = 10,
    name: Optional[str] = None,
) -> Tensor:
    """Makes ``data`` available in the child frame ``frame_name``.

    A constant Enter (a loop invariant) gives its value to every iteration, and has the static
    shape of ``data``; a non-constant one gives it to iteration 0 only, and its static shape is
    unknown, as in TensorFlow (what iterations make of it may differ): use ``set_shape`` to
    state the shape a hand-written loop keeps.  At most ``parallel_iterations`` iterations of
    the frame run at once.
    """
    if isinstance(data, Variable):  # TF1's _Enter enters a variable as its reference
        data = as_ref_or_tensor(data)
    if composites.is_composite(data):  # IndexedSlices, SparseTensor: part by part
        with get_default_graph().name_scope(name or "Enter"):
            return composites.map_parts(
                data, lambda part: enter(part, frame_name, is_constant, parallel_iterations)
            )
    attrs = {
        "frame_name": frame_name,
        "is_constant": is_constant,
        "parallel_iterations": parallel_iterations,
    }
    return apply_op("Enter", [data], attrs, name=name or "Enter").outputs[0]


def exit(data, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """Passes ``data`` from a frame to its parent frame (a composite part by part)."""
    if composites.is_composite(data):
        with get_default_graph().name_scope(name or "Exit"):
            return composites.map_parts(data, exit)
    return apply_op("Exit", [data], name=name or "Exit").outputs[0]


def next_iteration(data, name: Optional[str] = None) -> Tensor:
    """Passes ``data`` to the next iteration of its frame (feed it to a Merge's back edge)."""
    return apply_op("NextIteration", [data], name=name or "NextIteration").outputs[0]


def _reference(data, what: str) -> Tensor:
    data = as_ref_or_tensor(data)
    if not data.dtype.is_ref_dtype:
        raise TypeError(f"{what} needs a reference, got '{data.name}' of dtype {data.dtype.name}")
    return data


def ref_switch(data, pred, name: Optional[str] = None) -> tuple:
    """`switch` of a reference (or a variable's): both outputs are references."""
    return switch(_reference(data, "ref_switch"), pred, name=name or "RefSwitch")


def ref_merge(inputs: Sequence, name: Optional[str] = None) -> tuple:
    """`merge` of references: ``(the reference that arrived, its position)``."""
    return merge([_reference(x, "ref_merge") for x in inputs], name=name or "RefMerge")


def ref_enter(data, frame_name: str, is_constant: bool = False, parallel_iterations: int = 10,
              name: Optional[str] = None) -> Tensor:  # fmt: skip
    """`enter` of a reference: the frame gets the reference."""
    data = _reference(data, "ref_enter")
    return enter(data, frame_name, is_constant, parallel_iterations, name=name or "RefEnter")


def ref_exit(data, name: Optional[str] = None) -> Tensor:
    """`exit` of a reference."""
    return exit(_reference(data, "ref_exit"), name=name or "RefExit")


def ref_next_iteration(data, name: Optional[str] = None) -> Tensor:
    """`next_iteration` of a reference."""
    return next_iteration(_reference(data, "ref_next_iteration"), name=name or "RefNextIteration")


def loop_cond(pred, name: Optional[str] = None) -> Tensor:
    """Marks ``pred`` (a bool scalar) as the condition of a loop; its value passes through."""
    return apply_op("LoopCond", [pred], name=name or "LoopCond").outputs[0]


def set_merge_input(merge_op: Union[Operation, Tensor], index: int, tensor) -> None:
    """Replaces input ``index`` of a Merge with ``tensor``, e.g. to close a loop's back edge.

    ``merge_op`` is the Merge or one of its outputs.  As in TensorFlow, the static shape of the
    Merge's output is recomputed from its new inputs (it can only become less specific).
    """
    op = merge_op.op if isinstance(merge_op, Tensor) else merge_op
    if not isinstance(op, Operation) or op.op_def.kind != NodeKind.MERGE:
        raise TypeError(f"set_merge_input() needs a Merge op or its output, got {merge_op!r}")
    tensor = convert_to_tensor(tensor)
    if not 0 <= index < len(op.inputs):
        raise IndexError(
            f"Merge '{op.name}' has {len(op.inputs)} inputs; there is no input {index}"
        )
    output = op.outputs[0]
    if tensor.dtype is not output.dtype:
        raise TypeError(
            f"Merge '{op.name}' carries {output.dtype.name}; cannot make '{tensor.name}' of dtype "
            f"{tensor.dtype.name} its input {index}"
        )
    op._update_input(index, tensor)
    output._shape = merged_shape(op.inputs)
