"""Layout transformation: a chain of NCHW convolutions, pools and elementwise ops runs in NHWC,
with transposes only at the chain's edges.

The kernels of ``conv_ops.py`` compute in NHWC; an op in NCHW (TensorFlow's GPU layout, which
TF1 models written for GPUs use) transposes its images to NHWC and its result back, two copies
per op.  A compiler that sees the whole graph can do better (the "layout transform" of AI
compiler front ends, TensorFlow's Grappler ``layout_optimizer``): run every layout-sensitive op
in the layout its kernels are fast in, put a transpose before and after it, and then cancel
each transpose back to NCHW that meets a transpose to NHWC, so that a chain pays for one
transpose where it starts and one where it ends.

What the pass rewrites (in topological order, so that a chain converts from its start):

- A **layout-sensitive** op (``OpDef.extra["layout"]``, a dict naming its image inputs, its
  inputs that hold a 4-vector of sizes in ``data_format`` order, and its image outputs) whose
  ``data_format`` is NCHW becomes the same op in NHWC: each image input goes through a
  `ToLayout` to NHWC (or is taken from before a transpose to NCHW, which cancels), each sizes
  vector is permuted with a ``GatherV2``, and each image output goes through a `ToLayout` back
  to NCHW for its consumers.
- An **elementwise** op (an ``OpDef.extra`` ``ufunc``, or ``extra["layout"] ==
  "elementwise"``) whose inputs are all 4-D or scalars, at least one of them the output of a
  transpose to NCHW, runs on the NHWC inputs instead and its output is transposed back.
  Transposing every operand the same way commutes with elementwise work and with broadcasting.

Transposes back to NCHW that every consumer cancelled are left with no reader, for pruning.

Values: bit for bit.  Every kernel computes in NHWC whatever the op's ``data_format``, from the
same numbers (its im2col and matrix products copy their operands into the same contiguous
matrices either way), and elementwise work does not depend on the layout.  `ToLayout` makes a
contiguous copy, so a reduction downstream of the chain (a bias gradient's sum, a loss) reads
an array laid out exactly as without the pass and adds in the same order.
"""

from __future__ import annotations

import numpy as np

from ..framework.gradient_registry import RegisterGradient
from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from ..framework.op_registry import apply_op, define_op
from ..ops.array_ops import _infer_transpose
from ..ops.conv_ops import TO_NCHW, TO_NHWC
from .graph_item import GraphItem, is_pure
from .registry import GraphPass, PassReport, register_pass


def _to_layout_kernel(attrs):
    perm = attrs["perm"]
    return lambda x: np.ascontiguousarray(np.transpose(x, perm))


# A transpose whose result is a contiguous copy (``Transpose`` gives a strided view): what the
# pass puts at a chain's edges, so that the values after it are laid out as the NCHW kernels'.
define_op("ToLayout", _infer_transpose, _to_layout_kernel, extra={"permutation": "perm"})


@RegisterGradient("ToLayout")
def _to_layout_grad(op, grad):
    inverse = tuple(int(a) for a in np.argsort(op.attrs["perm"]))
    return apply_op("ToLayout", (grad,), {"perm": inverse}, "ToLayout").outputs[0]


def _is_permutation_to(t: Tensor, perm: tuple) -> bool:
    op = t.op
    return (
        op._op_def.extra.get("permutation") == "perm"
        and tuple(op.attrs.get("perm") or ()) == perm
        and op._inputs[0].shape.ndims == 4
    )


def _is_elementwise(op: Operation) -> bool:
    extra = op._op_def.extra
    return "ufunc" in extra or extra.get("layout") == "elementwise"


class LayoutOptimizer(GraphPass):
    name = "layout"
    verb = "relaid out"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        nhwc: dict = {}  # (NCHW tensor, context) -> its NHWC copy, made once
        for op in topological_order(item.graph):
            if item.graph._ops_by_name.get(op._name) is not op:
                continue  # replaced already
            if not is_pure(op) or item.is_fetched(op):
                continue
            layout = op._op_def.extra.get("layout")
            if isinstance(layout, dict) and op.attrs.get("data_format") == "NCHW":
                if _convert_sensitive(item, op, layout, nhwc):
                    report.count("ops run in NHWC")
            elif _is_elementwise(op) and _convertible_elementwise(op):
                images = range(len(op._inputs))
                if _convert(item, op, nhwc, images=images, sizes=(), image_outputs=(0,)):
                    report.count("elementwise ops run in NHWC")
            elif _cancels_a_transpose_to_nchw(item, op):
                item.replace_op(op, [op._inputs[0].op._inputs[0]])
                report.count("transposes cancelled")


def _convertible_elementwise(op: Operation) -> bool:
    if len(op._outputs) != 1 or op._outputs[0].shape.ndims != 4:
        return False
    if any(t.shape.ndims not in (0, 4) for t in op._inputs):
        return False
    return any(_is_permutation_to(t, TO_NCHW) for t in op._inputs)


def _cancels_a_transpose_to_nchw(item: GraphItem, op: Operation) -> bool:
    """``op`` transposes to NHWC what a transpose to NCHW made, and only reshapes and
    elementwise ops read it: they give the same bits from the NHWC original, which is
    contiguous where ``op``'s result was a strided view (a reduction reading it could add in
    another order)."""
    if op._op_def.extra.get("permutation") != "perm" or op._control_inputs:
        return False
    if tuple(op.attrs.get("perm") or ()) != TO_NHWC or not _is_permutation_to(
        op._inputs[0], TO_NCHW
    ):
        return False
    readers = [reader for reader, _ in item.consumers(op._outputs[0]).edges()]
    return all(
        is_pure(reader) and (reader._op_def.extra.get("view") or _is_elementwise(reader))
        for reader in readers
    )


def _convert_sensitive(item: GraphItem, op: Operation, layout: dict, nhwc: dict) -> bool:
    images, image_outputs = layout.get("images", ()), layout.get("image_outputs", ())
    if any(op._inputs[i].shape.ndims != 4 for i in images) or any(
        op._outputs[k].shape.ndims != 4 for k in image_outputs
    ):
        return False  # an image of unknown or other rank (BiasAdd takes any from 2 up)
    return _convert(
        item,
        op,
        nhwc,
        images=images,
        sizes=layout.get("sizes", ()),
        image_outputs=image_outputs,
        attrs={**op.attrs, "data_format": "NHWC"},
    )


def _convert(
    item: GraphItem, op: Operation, nhwc: dict, images, sizes, image_outputs, attrs=None
) -> bool:
    """Replaces ``op`` by the same op on NHWC images (4-D inputs at ``images``; scalars pass
    as they are), permuted ``sizes`` vectors, and NCHW copies of its ``image_outputs``.  A
    fetched output 0 keeps its name (the op in NHWC is then ``<name>/nhwc``); an op with
    another output fetched is left alone, since only output 0 can keep its name."""
    if any(item.is_fetched(t) for t in op._outputs[1:]):
        return False
    fetched = item.has_fetched_output(op)
    inputs = list(op._inputs)
    for i in images:
        if inputs[i].shape.ndims == 4:
            key = (inputs[i], op._control_flow_context)
            if key not in nhwc:
                nhwc[key] = _to_nhwc(item, inputs[i], op)
            inputs[i] = nhwc[key]
    for i in sizes:
        # The control edge keeps the constant in the frame and branch of the sizes it permutes.
        permutation = item.add_const(np.int32(TO_NHWC), f"{op.name}/nhwc_order", op, [inputs[i].op])
        gather = item.add_op(
            "GatherV2", [inputs[i], permutation], {"axis": 0}, f"{op.name}/nhwc_sizes", op
        )
        inputs[i] = gather._outputs[0]
    name = item.free_name(op)
    new = item.add_op(
        op.type,
        inputs,
        attrs if attrs is not None else dict(op.attrs),
        f"{name}/nhwc" if fetched else name,
        op,
        list(op._control_inputs),
    )
    outputs = list(new._outputs)
    for k in image_outputs:
        back_name = name if fetched and k == 0 else f"{name}/to_nchw"
        back = item.add_op("ToLayout", [outputs[k]], {"perm": TO_NCHW}, back_name, op)
        outputs[k] = back._outputs[0]
    item.replace_op(op, outputs, [new])
    return True


def _to_nhwc(item: GraphItem, t: Tensor, like: Operation) -> Tensor:
    """``t`` (NCHW) in NHWC: the tensor before a transpose to NCHW when there is one (the two
    cancel), else a `ToLayout` of ``t``."""
    if _is_permutation_to(t, TO_NCHW) and not t.op._control_inputs:
        return t.op._inputs[0]
    name = f"{like.name}/to_nhwc"
    return item.add_op("ToLayout", [t], {"perm": TO_NHWC}, name, like)._outputs[0]


register_pass(LayoutOptimizer())
