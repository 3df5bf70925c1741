"""The ONNX form of each dataflow op type: one entry of `CONVERTERS` per op type.

A converter takes an `OpEmitter` (the op, the ONNX names of its inputs, and ways to add
nodes and constants to the graph being built) and returns the ONNX names of the op's outputs,
in order (a shorter list leaves the last outputs without an ONNX counterpart: an error only if
something reads them).  It raises `Unsupported` with the reason when the op's attributes ask for
something ONNX cannot do (a ``MirrorPad`` in SYMMETRIC mode, a ``StridedSlice`` with computed
bounds); the exporter reports it with the op's file and line.

Plain elementwise ops are the tables `_UNARY` and `_BINARY` (dataflow type -> ONNX type); the
rest have a function each, registered with `_converts`.

TensorArrays (``map_fn``, ``scan``, ``dynamic_rnn``) become ONNX sequences: the flow value a
TensorArray op passes on is the sequence of the elements written so far (its handle output
names the same sequence; the readers take the flow).  A write appends (``SequenceInsert`` at
its index: elements are written in index order, as ``map_fn``, ``scan`` and ``dynamic_rnn``
write them), a scatter of ``range(n)`` into a new TensorArray splits its value
(``SplitToSequence``), and a gather of ``range(n)`` stacks (``ConcatFromSequence``).

Layout: dataflow's ``NHWC`` convolutions, pools and batch norms become ONNX's ``NCHW`` ops
between ``Transpose`` nodes (NHWC -> NCHW before, back after; filters HWIO -> OIHW), so the
exported model has dataflow's inputs and outputs exactly; onnxruntime's layout optimizer
removes most of the pairs.  ``NCHW`` graphs need no transposes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import numpy as np
from onnx import helper

from ...framework import dtypes as _dtypes

__all__ = ["CONVERTERS", "OpEmitter", "Unsupported", "onnx_type"]

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class Unsupported(Exception):
    """An op of a mapped type whose attributes or inputs ONNX cannot express; the message says
    what."""


def onnx_type(dtype) -> int:
    """The ONNX element type of a dataflow dtype."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    if dtype.is_string:
        raise Unsupported("string tensors have no ONNX mapping here")
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype.as_numpy_dtype))


class OpEmitter:
    """What a converter sees: ``op`` (the dataflow op), ``inputs`` (the ONNX names of its data
    inputs), ``opset``, and `node`/`const` to add to the graph being built."""

    def __init__(self, exporter, nodes: list, op, inputs: list[str]):
        self._exporter = exporter
        self._nodes = nodes
        self.op = op
        self.inputs = inputs
        self.opset = exporter.opset
        self.attrs = op.attrs

    # -- building -------------------------------------------------------------------------------
    def node(self, op_type: str, inputs, outputs: int = 1, **attrs):
        """Adds one ONNX node; its output's name (a list of names when ``outputs`` != 1)."""
        base = self.op.name
        names = [self._exporter.fresh_name(f"{base}/{op_type}") for _ in range(outputs)]
        node_name = names[0] if names else self._exporter.fresh_name(f"{base}/{op_type}")
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self._nodes.append(helper.make_node(op_type, list(inputs), names, name=node_name, **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=None) -> str:
        """An initializer holding ``value`` (as ``dtype``, a numpy dtype, when given)."""
        array = np.asarray(value, dtype=dtype)
        return self._exporter.add_initializer(array, f"{self.op.name}/const")

    def int64s(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1))

    def like_input(self, value, i: int = 0) -> str:
        """A scalar constant of input ``i``'s dtype."""
        return self.const(np.asarray(value, dtype=self.dtype(i).as_numpy_dtype))

    def sequence(self, name: str, dtype) -> str:
        """Marks ``name`` as an ONNX sequence of ``dtype`` tensors (a TensorArray's flow), so
        the loops and branches that carry it declare a sequence type."""
        self._exporter.sequence_types[name] = onnx_type(dtype)
        return name

    def cast(self, name: str, dtype) -> str:
        return self.node("Cast", [name], to=onnx_type(dtype))

    def as_int64(self, i: int) -> str:
        """Input ``i`` as int64 (ONNX's shapes, repeats and bounds)."""
        if self.dtype(i).base_dtype == _dtypes.int64:
            return self.inputs[i]
        return self.cast(self.inputs[i], _dtypes.int64)

    # -- reading the op -------------------------------------------------------------------------
    def dtype(self, i: int = 0):
        return self.op.inputs[i].dtype.base_dtype

    def out_dtype(self, k: int = 0):
        return self.op.outputs[k].dtype.base_dtype

    def rank(self, i: int = 0) -> int:
        ndims = self.op.inputs[i].shape.ndims
        if ndims is None:
            raise Unsupported(f"the rank of input {i} is unknown, and the ONNX form needs it")
        return ndims

    def dim(self, i: int, axis: int) -> int:
        size = self.op.inputs[i].shape.as_list()[axis]
        if size is None:
            raise Unsupported(f"dimension {axis} of input {i} is unknown, and ONNX needs it")
        return size

    def constant_input(self, i: int) -> Optional[np.ndarray]:
        """Input ``i``'s value when it is a constant (through Identity ops), else None."""
        return constant_value(self.op.inputs[i])

    def attr(self, name: str, default=None):
        return self.attrs.get(name, default)


def constant_value(tensor) -> Optional[np.ndarray]:
    """``tensor``'s value when a ``Const`` gives it (through Identity and Enter ops), else None."""
    op = tensor.op
    while op.type in ("Identity", "Enter") and op.inputs:
        op = op.inputs[0].op
    if op.type == "Const":
        return np.asarray(op.attrs["value"])
    return None


Converter = Callable[[OpEmitter], list]
CONVERTERS: dict[str, Converter] = {}


def _converts(*op_types: str):
    def register(function: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = function
        return function

    return register


# -- elementwise ---------------------------------------------------------------------------------
_UNARY = {
    "Identity": "Identity",
    "StopGradient": "Identity",
    "PreventGradient": "Identity",
    "Snapshot": "Identity",
    "PlaceholderWithDefault": "Identity",
    "Relu": "Relu",
    "Sigmoid": "Sigmoid",
    "Tanh": "Tanh",
    "Exp": "Exp",
    "Log": "Log",
    "Neg": "Neg",
    "Abs": "Abs",
    "Sqrt": "Sqrt",
    "Reciprocal": "Reciprocal",
    "Inv": "Reciprocal",
    "Floor": "Floor",
    "Ceil": "Ceil",
    "Round": "Round",
    "Sign": "Sign",
    "Sin": "Sin",
    "Cos": "Cos",
    "Tan": "Tan",
    "Asin": "Asin",
    "Acos": "Acos",
    "Atan": "Atan",
    "Sinh": "Sinh",
    "Cosh": "Cosh",
    "Erf": "Erf",
    "Softplus": "Softplus",
    "Softsign": "Softsign",
    "Elu": "Elu",
    "Selu": "Selu",
    "LogicalNot": "Not",
    "IsNan": "IsNaN",
    "IsInf": "IsInf",
}

_BINARY = {
    "Add": "Add",
    "AddV2": "Add",
    "Sub": "Sub",
    "Mul": "Mul",
    "RealDiv": "Div",
    "Maximum": "Max",
    "Minimum": "Min",
    "Pow": "Pow",
    "Equal": "Equal",
    "Less": "Less",
    "LessEqual": "LessOrEqual",
    "Greater": "Greater",
    "GreaterEqual": "GreaterOrEqual",
    "LogicalAnd": "And",
    "LogicalOr": "Or",
}


def _same_op(onnx_op: str) -> Converter:
    def convert(b: OpEmitter) -> list:
        return [b.node(onnx_op, b.inputs)]

    return convert


for _op_type, _onnx_op in {**_UNARY, **_BINARY}.items():
    CONVERTERS[_op_type] = _same_op(_onnx_op)


@_converts("BitwiseAnd", "BitwiseOr", "BitwiseXor")
def _bitwise(b: OpEmitter) -> list:
    if b.opset < 18:
        raise Unsupported("ONNX has bitwise ops from opset 18 (export with opset=18)")
    return [b.node(b.op.type, b.inputs)]


@_converts("Div")
def _div(b: OpEmitter) -> list:
    # TensorFlow's Div floors on integers; ONNX's Div truncates.
    if b.dtype().is_integer:
        return _floor_div(b)
    return [b.node("Div", b.inputs)]


@_converts("FloorDiv")
def _floor_div(b: OpEmitter) -> list:
    x, y = b.inputs
    if not b.dtype().is_integer:
        return [b.node("Floor", [b.node("Div", [x, y])])]
    quotient = b.node("Div", [x, y])  # truncated
    remainder = b.node("Mod", [x, y], fmod=1)
    zero = b.like_input(0)
    inexact = b.node("Not", [b.node("Equal", [remainder, zero])])
    signs_differ = b.node("Xor", [b.node("Less", [x, zero]), b.node("Less", [y, zero])])
    correction = b.cast(b.node("And", [inexact, signs_differ]), b.dtype())
    return [b.node("Sub", [quotient, correction])]


@_converts("FloorMod")
def _floor_mod(b: OpEmitter) -> list:
    x, y = b.inputs
    if b.dtype().is_integer:
        return [b.node("Mod", [x, y], fmod=0)]
    floored = b.node("Floor", [b.node("Div", [x, y])])
    return [b.node("Sub", [x, b.node("Mul", [floored, y])])]


@_converts("NotEqual")
def _not_equal(b: OpEmitter) -> list:
    return [b.node("Not", [b.node("Equal", b.inputs)])]


@_converts("LogicalXor")
def _logical_xor(b: OpEmitter) -> list:
    return [b.node("Xor", b.inputs)]


@_converts("Square")
def _square(b: OpEmitter) -> list:
    return [b.node("Mul", [b.inputs[0], b.inputs[0]])]


@_converts("SquaredDifference")
def _squared_difference(b: OpEmitter) -> list:
    difference = b.node("Sub", b.inputs)
    return [b.node("Mul", [difference, difference])]


@_converts("Rsqrt")
def _rsqrt(b: OpEmitter) -> list:
    return [b.node("Reciprocal", [b.node("Sqrt", b.inputs)])]


@_converts("Log1p")
def _log1p(b: OpEmitter) -> list:
    return [b.node("Log", [b.node("Add", [b.inputs[0], b.like_input(1)])])]


@_converts("Expm1")
def _expm1(b: OpEmitter) -> list:
    return [b.node("Sub", [b.node("Exp", b.inputs), b.like_input(1)])]


@_converts("Relu6")
def _relu6(b: OpEmitter) -> list:
    return [b.node("Clip", [b.inputs[0], b.like_input(0), b.like_input(6)])]


@_converts("LeakyRelu")
def _leaky_relu(b: OpEmitter) -> list:
    return [b.node("LeakyRelu", b.inputs, alpha=float(b.attr("alpha", 0.2)))]


@_converts("ClipByValue")
def _clip_by_value(b: OpEmitter) -> list:
    # TensorFlow's bounds may be tensors that broadcast; ONNX's Clip takes scalars only.
    x, low, high = b.inputs
    return [b.node("Max", [b.node("Min", [x, high]), low])]


@_converts("AddN")
def _add_n(b: OpEmitter) -> list:
    return [b.node("Sum", b.inputs)]


@_converts("Select")
def _select(b: OpEmitter) -> list:
    condition, x, y = b.inputs
    # TF1's Select: a vector condition picks whole rows of higher-rank x and y.
    if b.rank(0) == 1 and b.rank(1) > 1:
        shape = b.int64s([-1] + [1] * (b.rank(1) - 1))
        condition = b.node("Reshape", [condition, shape])
    return [b.node("Where", [condition, x, y])]


@_converts("SelectV2")
def _select_v2(b: OpEmitter) -> list:
    return [b.node("Where", b.inputs)]


@_converts("Cast")
def _cast(b: OpEmitter) -> list:
    return [b.cast(b.inputs[0], b.out_dtype())]


@_converts("Softmax", "LogSoftmax")
def _softmax(b: OpEmitter) -> list:
    return [b.node(b.op.type, b.inputs, axis=int(b.attr("axis", -1)))]


@_converts("L2Loss")
def _l2_loss(b: OpEmitter) -> list:
    x = b.inputs[0]
    total = _reduce(b, "ReduceSum", b.node("Mul", [x, x]), None, False)
    return [b.node("Div", [total, b.like_input(2)])]


# -- matrices ------------------------------------------------------------------------------------
def _swap_last_two(b: OpEmitter, name: str, rank: int) -> str:
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return b.node("Transpose", [name], perm=perm)


@_converts("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _matmul(b: OpEmitter) -> list:
    a, c = b.inputs
    if b.attr("transpose_a") or b.attr("adj_x"):
        a = _swap_last_two(b, a, b.rank(0))
    if b.attr("transpose_b") or b.attr("adj_y"):
        c = _swap_last_two(b, c, b.rank(1))
    return [b.node("MatMul", [a, c])]


@_converts("Einsum")
def _einsum(b: OpEmitter) -> list:
    return [b.node("Einsum", b.inputs, equation=b.attr("equation"))]


@_converts("BiasAdd", "BiasAddV1")
def _bias_add(b: OpEmitter) -> list:
    x, bias = b.inputs
    if b.attr("data_format", "NHWC") == "NCHW" and b.rank(0) > 2:
        bias = b.node("Reshape", [bias, b.int64s([-1] + [1] * (b.rank(0) - 2))])
    return [b.node("Add", [x, bias])]


# -- convolutions and pools (NHWC <-> NCHW) ------------------------------------------------------
def _to_channels_first(b: OpEmitter, name: str, rank: int) -> str:
    return b.node("Transpose", [name], perm=[0, rank - 1] + list(range(1, rank - 1)))


def _to_channels_last(b: OpEmitter, name: str, rank: int) -> str:
    return b.node("Transpose", [name], perm=[0] + list(range(2, rank)) + [1])


def _spatial(values, rank: int, channels_last: bool, what: str) -> list[int]:
    """The spatial entries of a stride/ksize/dilation list of length ``rank - 2`` or ``rank``."""
    values = [int(v) for v in values]
    if len(values) == rank - 2:
        return values
    if len(values) == rank:
        return values[1:-1] if channels_last else values[2:]
    raise Unsupported(f"{what} {values} does not fit a rank-{rank} input")


def _padding(b: OpEmitter) -> dict:
    padding = b.attr("padding")
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "SAME":
        return {"auto_pad": "SAME_UPPER"}  # TensorFlow pads the extra cell at the end too
    if padding == "VALID":
        return {"auto_pad": "VALID"}
    raise Unsupported(f"padding {padding!r} (only SAME and VALID are exported)")


def _layout(b: OpEmitter, x: str, rank: int):
    """(channels_last, x in NCHW, a function back to the op's layout)."""
    data_format = b.attr("data_format", "NHWC")
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    channels_last = not data_format.startswith("NC")
    if not channels_last:
        return False, x, lambda name: name
    return True, _to_channels_first(b, x, rank), lambda name: _to_channels_last(b, name, rank)


@_converts("Conv2D", "Conv3D", "DepthwiseConv2dNative")
def _conv(b: OpEmitter) -> list:
    x, kernel = b.inputs
    rank = b.rank(0)
    channels_last, x, back = _layout(b, x, rank)
    strides = _spatial(b.attr("strides"), rank, channels_last, "strides")
    dilations = _spatial(b.attr("dilations") or [1] * rank, rank, channels_last, "dilations")
    group = 1
    depthwise = b.op.type == "DepthwiseConv2dNative"
    if depthwise:
        group = b.dim(1, 2)
    # HWIO (spatial dims, in, out) -> OIHW; a depthwise [H, W, C, M] is first [H, W, 1, C*M]:
    # C groups of M filters, each over one input channel.
    to_oihw = [rank - 1, rank - 2] + list(range(rank - 2))
    constant_kernel = b.constant_input(1)
    if constant_kernel is not None:  # done now, so the model holds the filter as ONNX wants it
        if depthwise:
            constant_kernel = constant_kernel.reshape(constant_kernel.shape[:2] + (1, -1))
        kernel = b.const(np.ascontiguousarray(constant_kernel.transpose(to_oihw)))
    else:
        if depthwise:
            height, width, channels, multiplier = (b.dim(1, a) for a in range(4))
            shape = b.int64s([height, width, 1, channels * multiplier])
            kernel = b.node("Reshape", [kernel, shape])
        kernel = b.node("Transpose", [kernel], perm=to_oihw)
    y = b.node(
        "Conv", [x, kernel], strides=strides, dilations=dilations, group=group, **_padding(b)
    )
    return [back(y)]


@_converts("Conv")
def _generic_conv(b: OpEmitter) -> list:
    """TensorFlow's generic N-d ``Conv`` (what an imported ONNX ``Conv`` becomes): either
    layout, ``groups``, and explicit paddings, which ONNX's ``pads`` hold as all the begins,
    then all the ends."""
    if b.attr("batch_dims", 1) != 1:
        raise Unsupported(f"batch_dims={b.attr('batch_dims')} (ONNX has one batch dimension)")
    x, kernel = b.inputs
    rank = b.rank(0)
    data_format = b.attr("data_format", "CHANNELS_LAST")
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    channels_last = data_format != "CHANNELS_FIRST"
    if channels_last:
        x = _to_channels_first(b, x, rank)
    strides = _spatial(b.attr("strides"), rank, channels_last, "strides")
    dilations = _spatial(b.attr("dilations") or [1] * (rank - 2), rank, channels_last, "dilations")
    padding = b.attr("padding")
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "EXPLICIT":
        pairs = [int(v) for v in b.attr("explicit_paddings")]
        pads = {"pads": pairs[0::2] + pairs[1::2]}
    else:
        pads = _padding(b)
    to_oihw = [rank - 1, rank - 2] + list(range(rank - 2))  # [*k, in / groups, out] -> OIHW
    constant_kernel = b.constant_input(1)
    if constant_kernel is not None:
        kernel = b.const(np.ascontiguousarray(constant_kernel.transpose(to_oihw)))
    else:
        kernel = b.node("Transpose", [kernel], perm=to_oihw)
    y = b.node(
        "Conv",
        [x, kernel],
        strides=strides,
        dilations=dilations,
        group=int(b.attr("groups", 1)),
        **pads,
    )
    return [_to_channels_last(b, y, rank) if channels_last else y]


@_converts("MaxPool", "AvgPool", "MaxPool3D", "AvgPool3D")
def _pool(b: OpEmitter) -> list:
    rank = b.rank(0)
    channels_last, x, back = _layout(b, b.inputs[0], rank)
    kernel = _spatial(b.attr("ksize"), rank, channels_last, "ksize")
    strides = _spatial(b.attr("strides"), rank, channels_last, "strides")
    onnx_op = "MaxPool" if b.op.type.startswith("Max") else "AveragePool"
    # AveragePool's count_include_pad defaults to 0: padding is left out of the mean, as in TF.
    y = b.node(onnx_op, [x], kernel_shape=kernel, strides=strides, **_padding(b))
    return [back(y)]


@_converts("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _fused_batch_norm(b: OpEmitter) -> list:
    if b.attr("is_training", True):
        return _training_batch_norm(b)
    x, scale, offset, mean, variance = b.inputs[:5]
    rank = b.rank(0)
    _, x, back = _layout(b, x, rank)
    y = b.node(
        "BatchNormalization",
        [x, scale, offset, mean, variance],
        epsilon=float(b.attr("epsilon", 1e-3)),
    )
    # At inference the statistics outputs are the mean and variance given.
    return [back(y), b.inputs[3], b.inputs[4]]


def _training_batch_norm(b: OpEmitter) -> list:
    """A batch norm on the batch's own statistics, in the op's layout, as dataflow's kernel:
    y from the biased variance; outputs 1 and 2 the batch mean and the unbiased variance,
    blended with the mean and variance given when ``exponential_avg_factor`` is not 1."""
    x, scale, offset, mean_in, variance_in = b.inputs[:5]
    rank = b.rank(0)
    channels_last = not str(b.attr("data_format", "NHWC")).startswith("NC")
    channel_axis = rank - 1 if channels_last else 1
    axes = [a for a in range(rank) if a != channel_axis]

    def broadcastable(vector: str) -> str:
        if channels_last:
            return vector
        return b.node("Reshape", [vector, b.int64s([-1] + [1] * (rank - 2))])

    batch_mean = _reduce(b, "ReduceMean", x, axes, False)
    centered = b.node("Sub", [x, broadcastable(batch_mean)])
    batch_variance = _reduce(b, "ReduceMean", b.node("Mul", [centered, centered]), axes, False)
    epsilon = b.like_input(float(b.attr("epsilon", 1e-3)), 1)
    inverse = b.node("Div", [scale, b.node("Sqrt", [b.node("Add", [batch_variance, epsilon])])])
    y = b.node("Add", [b.node("Mul", [centered, broadcastable(inverse)]), broadcastable(offset)])
    # count / max(count - 1, 1): the element count per channel, at run time.
    float_type = b.dtype(1)
    count = b.node(
        "Div",
        [
            b.cast(b.node("Size", [x]), float_type),
            b.cast(
                b.node("Gather", [b.node("Shape", [x]), b.const(np.int64(channel_axis))]),
                float_type,
            ),
        ],
    )
    one = b.like_input(1.0, 1)
    correction = b.node("Div", [count, b.node("Max", [b.node("Sub", [count, one]), one])])
    unbiased = b.node("Mul", [batch_variance, correction])
    factor = float(b.attr("exponential_avg_factor", 1.0))
    if factor != 1.0:
        keep, take = b.like_input(1.0 - factor, 1), b.like_input(factor, 1)

        def blend(old: str, new: str) -> str:
            return b.node("Add", [b.node("Mul", [old, keep]), b.node("Mul", [new, take])])

        batch_mean, unbiased = blend(mean_in, batch_mean), blend(variance_in, unbiased)
    return [y, batch_mean, unbiased]


# -- shapes and pieces ---------------------------------------------------------------------------
@_converts("Reshape")
def _reshape(b: OpEmitter) -> list:
    # TensorFlow's 0 in a shape is an empty dimension; ONNX's allowzero=1 says the same.
    allow = {"allowzero": 1} if b.opset >= 14 else {}
    return [b.node("Reshape", [b.inputs[0], b.as_int64(1)], **allow)]


@_converts("Transpose")
def _transpose(b: OpEmitter) -> list:
    perm = b.attr("perm")
    if perm is None and len(b.inputs) > 1:
        perm = b.constant_input(1)
        if perm is None:
            raise Unsupported("a permutation computed at run time")
    if perm is None:
        return [b.node("Transpose", b.inputs[:1])]
    return [b.node("Transpose", b.inputs[:1], perm=[int(p) for p in np.ravel(perm)])]


def _axis_attr(b: OpEmitter, name: str = "axis", input_index: Optional[int] = None):
    value = b.attr(name)
    if value is None and input_index is not None and len(b.inputs) > input_index:
        value = b.constant_input(input_index)
        if value is None:
            raise Unsupported(f"an {name} computed at run time")
    return value


@_converts("ConcatV2", "Concat")
def _concat(b: OpEmitter) -> list:
    axis = b.attr("axis")
    values = b.inputs
    if axis is None:
        axis = b.constant_input(len(b.inputs) - 1)
        if axis is None:
            raise Unsupported("an axis computed at run time")
        values = b.inputs[:-1]
    return [b.node("Concat", values, axis=int(axis))]


@_converts("Pack")
def _pack(b: OpEmitter) -> list:
    axis = int(b.attr("axis", 0))
    if axis < 0:
        axis += b.rank(0) + 1
    axes = b.int64s([axis])
    return [b.node("Concat", [b.node("Unsqueeze", [x, axes]) for x in b.inputs], axis=axis)]


@_converts("Unpack")
def _unpack(b: OpEmitter) -> list:
    axis = int(b.attr("axis", 0))
    count = int(b.attr("num"))
    pieces = _split(b, b.inputs[0], axis, [1] * count)
    axes = b.int64s([axis])
    return [b.node("Squeeze", [piece, axes]) for piece in pieces]


def _split(b: OpEmitter, x: str, axis: int, sizes: list[int]) -> list[str]:
    if len(sizes) == 1:
        return [b.node("Identity", [x])]
    return b.node("Split", [x, b.int64s(sizes)], outputs=len(sizes), axis=axis)


@_converts("Split")
def _split_even(b: OpEmitter) -> list:
    count = int(b.attr("num_split"))
    axis = int(_axis_attr(b, "axis"))
    x = b.inputs[-1] if len(b.inputs) > 1 else b.inputs[0]
    if count == 1:
        return [b.node("Identity", [x])]
    if b.opset >= 18:
        return b.node("Split", [x], outputs=count, axis=axis, num_outputs=count)
    # Before opset 18, a Split given no sizes makes equal parts, one per output: what
    # TensorFlow's Split does, and it needs no static size of the axis.
    return b.node("Split", [x], outputs=count, axis=axis)


@_converts("SplitV")
def _split_v(b: OpEmitter) -> list:
    sizes = [int(s) for s in b.attr("size_splits")]
    axis = int(b.attr("axis"))
    if -1 in sizes:
        known = sum(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = b.dim(0, axis) - known
    return _split(b, b.inputs[0], axis, sizes)


@_converts("Slice")
def _slice(b: OpEmitter) -> list:
    x = b.inputs[0]
    begin, size = b.constant_input(1), b.constant_input(2)
    if begin is not None and size is not None:
        begin = np.asarray(begin, np.int64)
        size = np.asarray(size, np.int64)
        ends = np.where(size == -1, INT64_MAX, begin + size)
        return [b.node("Slice", [x, b.int64s(begin), b.int64s(ends)])]
    starts, sizes = b.as_int64(1), b.as_int64(2)
    ends = b.node(
        "Where",
        [
            b.node("Equal", [sizes, b.const(np.int64(-1))]),
            b.const(np.int64(INT64_MAX)),
            b.node("Add", [starts, sizes]),
        ],
    )
    return [b.node("Slice", [x, starts, ends])]


@_converts("StridedSlice")
def _strided_slice(b: OpEmitter) -> list:
    begin, end, strides = (b.constant_input(i) for i in (1, 2, 3))
    if begin is None or end is None or strides is None:
        raise Unsupported("begin, end and strides computed at run time (only constants export)")
    begin, end, strides = (np.asarray(v, np.int64).reshape(-1) for v in (begin, end, strides))
    masks = {
        name: int(b.attr(name, 0) or 0)
        for name in (
            "begin_mask",
            "end_mask",
            "ellipsis_mask",
            "new_axis_mask",
            "shrink_axis_mask",
        )
    }
    specs = len(begin)
    real_specs = sum(
        1
        for i in range(specs)
        if not (masks["new_axis_mask"] >> i) & 1 and not (masks["ellipsis_mask"] >> i) & 1
    )
    starts, ends, axes, steps, squeezed, new_axes = [], [], [], [], [], []
    dim = out_position = 0
    for i in range(specs):
        if (masks["ellipsis_mask"] >> i) & 1:
            covered = b.rank(0) - real_specs  # the rank matters only here
            dim += covered
            out_position += covered
        elif (masks["new_axis_mask"] >> i) & 1:
            new_axes.append(out_position)
            out_position += 1
        elif (masks["shrink_axis_mask"] >> i) & 1:
            start = int(begin[i])
            starts.append(start)
            ends.append(INT64_MAX if start == -1 else start + 1)
            axes.append(dim)
            steps.append(1)
            squeezed.append(dim)
            dim += 1
        else:
            step = int(strides[i])
            if step == 0:
                raise Unsupported("a stride of 0")
            forward = step > 0
            start = int(begin[i])
            stop = int(end[i])
            if (masks["begin_mask"] >> i) & 1:
                start = 0 if forward else INT64_MAX
            if (masks["end_mask"] >> i) & 1:
                stop = INT64_MAX if forward else INT64_MIN
            starts.append(start)
            ends.append(stop)
            axes.append(dim)
            steps.append(step)
            dim += 1
            out_position += 1
    y = b.inputs[0]
    if axes:
        y = b.node("Slice", [y, b.int64s(starts), b.int64s(ends), b.int64s(axes), b.int64s(steps)])
    if squeezed:
        y = b.node("Squeeze", [y, b.int64s(squeezed)])
    if new_axes:
        y = b.node("Unsqueeze", [y, b.int64s(new_axes)])
    if not (axes or squeezed or new_axes):
        y = b.node("Identity", [y])
    return [y]


@_converts("GatherV2", "Gather")
def _gather(b: OpEmitter) -> list:
    if int(b.attr("batch_dims", 0) or 0) != 0:
        raise Unsupported("batch_dims other than 0")
    axis = _axis_attr(b, "axis", input_index=2)
    return [b.node("Gather", b.inputs[:2], axis=int(axis or 0))]


@_converts("ExpandDims")
def _expand_dims(b: OpEmitter) -> list:
    axis = int(_axis_attr(b, "axis", input_index=1))
    if axis < 0:
        axis += b.rank(0) + 1
    return [b.node("Unsqueeze", [b.inputs[0], b.int64s([axis])])]


@_converts("Squeeze")
def _squeeze(b: OpEmitter) -> list:
    axes = b.attr("axis") or b.attr("squeeze_dims")
    if not axes:
        return [b.node("Squeeze", b.inputs[:1])]
    return [b.node("Squeeze", [b.inputs[0], b.int64s(list(axes))])]


@_converts("Tile")
def _tile(b: OpEmitter) -> list:
    return [b.node("Tile", [b.inputs[0], b.as_int64(1)])]


@_converts("Pad", "PadV2", "MirrorPad")
def _pad(b: OpEmitter) -> list:
    paddings = b.attr("paddings")
    value_index = 1
    if paddings is None:
        paddings = b.constant_input(1)
        value_index = 2
        if paddings is None:
            raise Unsupported("paddings computed at run time")
    paddings = np.asarray(paddings, np.int64).reshape(-1, 2)
    pads = b.int64s(np.concatenate([paddings[:, 0], paddings[:, 1]]))
    mode = b.attr("mode", "CONSTANT")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode.upper() == "CONSTANT":
        inputs = [b.inputs[0], pads]
        if len(b.inputs) > value_index:
            inputs.append(b.inputs[value_index])
        return [b.node("Pad", inputs, mode="constant")]
    if mode.upper() == "REFLECT":
        return [b.node("Pad", [b.inputs[0], pads], mode="reflect")]
    raise Unsupported(f"mode {mode!r} (ONNX pads with CONSTANT and REFLECT only)")


@_converts("Shape")
def _shape(b: OpEmitter) -> list:
    shape = b.node("Shape", b.inputs)
    return [shape if b.out_dtype() == _dtypes.int64 else b.cast(shape, b.out_dtype())]


@_converts("Size")
def _size(b: OpEmitter) -> list:
    size = b.node("Size", b.inputs)
    return [size if b.out_dtype() == _dtypes.int64 else b.cast(size, b.out_dtype())]


@_converts("Fill")
def _fill(b: OpEmitter) -> list:
    return [b.node("Expand", [b.inputs[1], b.as_int64(0)])]


@_converts("ZerosLike", "OnesLike")
def _zeros_like(b: OpEmitter) -> list:
    value = b.like_input(0 if b.op.type == "ZerosLike" else 1)
    return [b.node("Expand", [value, b.node("Shape", b.inputs)])]


@_converts("Range")
def _range(b: OpEmitter) -> list:
    return [b.node("Range", b.inputs)]


@_converts("OneHot")
def _one_hot(b: OpEmitter) -> list:
    indices, depth, on_value, off_value = b.inputs
    values = b.node(
        "Concat",
        [
            b.node("Unsqueeze", [off_value, b.int64s([0])]),
            b.node("Unsqueeze", [on_value, b.int64s([0])]),
        ],
        axis=0,
    )
    return [b.node("OneHot", [indices, depth, values], axis=int(b.attr("axis", -1)))]


@_converts("Cumsum")
def _cumsum(b: OpEmitter) -> list:
    axis = _axis_attr(b, "axis", input_index=1)
    return [
        b.node(
            "CumSum",
            [b.inputs[0], b.const(np.int64(axis))],
            exclusive=int(bool(b.attr("exclusive", False))),
            reverse=int(bool(b.attr("reverse", False))),
        )
    ]


# -- reductions ----------------------------------------------------------------------------------
def _reduce(b: OpEmitter, onnx_op: str, x: str, axes, keepdims: bool) -> str:
    """``onnx_op`` over ``axes`` (None: all of them) in the opset's form (axes an input from
    opset 18, and from 13 for ReduceSum)."""
    keep = int(bool(keepdims))
    if axes is not None:
        axes = [int(a) for a in np.ravel(axes)]
        if not axes:
            return b.node("Identity", [x])  # TensorFlow reduces nothing over an empty list
    axes_are_input = b.opset >= 18 or onnx_op == "ReduceSum"
    if axes is None:
        return b.node(onnx_op, [x], keepdims=keep)
    if axes_are_input:
        return b.node(onnx_op, [x, b.int64s(axes)], keepdims=keep)
    return b.node(onnx_op, [x], axes=axes, keepdims=keep)


_REDUCTIONS = {
    "Sum": "ReduceSum",
    "Mean": "ReduceMean",
    "Max": "ReduceMax",
    "Min": "ReduceMin",
    "Prod": "ReduceProd",
    "All": "ReduceMin",
    "Any": "ReduceMax",
}


@_converts(*_REDUCTIONS)
def _reduction(b: OpEmitter) -> list:
    axes = _axis_attr(b, "axis", input_index=1)
    if axes is None and b.attr("axis") is None and len(b.inputs) > 1:
        raise Unsupported("axes computed at run time")
    keepdims = b.attr("keepdims", b.attr("keep_dims", False))
    onnx_op = _REDUCTIONS[b.op.type]
    x = b.inputs[0]
    if b.op.type in ("All", "Any"):  # ONNX reduces booleans as 0/1 integers
        result = _reduce(b, onnx_op, b.cast(x, _dtypes.int32), axes, keepdims)
        return [b.cast(result, _dtypes.bool)]
    return [_reduce(b, onnx_op, x, axes, keepdims)]


@_converts("ArgMax", "ArgMin")
def _arg_reduce(b: OpEmitter) -> list:
    axis = _axis_attr(b, "axis", input_index=1)
    index = b.node(b.op.type, [b.inputs[0]], axis=int(axis or 0), keepdims=0)
    if b.out_dtype() != _dtypes.int64:
        index = b.cast(index, b.out_dtype())
    return [index]


# -- TensorArrays as sequences -------------------------------------------------------------------
def _needs_sequences(b: OpEmitter) -> None:
    if b.opset < 14:
        raise Unsupported("TensorArrays export as ONNX sequences, which need opset 14 or later")


def _whole_range(b: OpEmitter, i: int) -> None:
    """Checks that input ``i`` (indices) is ``range(n)``: the form unstack and stack use."""
    op = b.op.inputs[i].op
    if op.type == "Range":
        start, delta = (constant_value(op.inputs[k]) for k in (0, 2))
        if start is not None and delta is not None and start == 0 and delta == 1:
            return
    elif op.type == "Const":
        value = np.asarray(op.attrs["value"]).reshape(-1)
        if np.array_equal(value, np.arange(value.size)):
            return
    raise Unsupported(f"indices other than range(n) (from {op.type} '{op.name}')")


@_converts("TensorArrayV3")
def _tensor_array(b: OpEmitter) -> list:
    _needs_sequences(b)
    dtype = b.attr("dtype")
    empty = b.sequence(b.node("SequenceEmpty", [], dtype=onnx_type(dtype)), dtype)
    return [empty, empty]  # the handle names the (empty) sequence too


@_converts("TensorArrayWriteV3")
def _tensor_array_write(b: OpEmitter) -> list:
    _needs_sequences(b)
    _, index, value, flow = b.inputs
    return [b.sequence(b.node("SequenceInsert", [flow, value, index]), b.dtype(2))]


@_converts("TensorArrayReadV3")
def _tensor_array_read(b: OpEmitter) -> list:
    _needs_sequences(b)
    _, index, flow = b.inputs
    return [b.node("SequenceAt", [flow, index])]


@_converts("TensorArrayScatterV3")
def _tensor_array_scatter(b: OpEmitter) -> list:
    _needs_sequences(b)
    _whole_range(b, 1)
    if b.op.inputs[3].op.type != "TensorArrayV3":
        raise Unsupported("a scatter into a TensorArray already written to")
    _, _, value, _ = b.inputs
    pieces = b.node("SplitToSequence", [value], axis=0, keepdims=0)
    return [b.sequence(pieces, b.dtype(2))]


@_converts("TensorArrayGatherV3")
def _tensor_array_gather(b: OpEmitter) -> list:
    _needs_sequences(b)
    _whole_range(b, 1)
    flow = b.inputs[2]
    element_shape = b.op.outputs[0].shape[1:]
    if not element_shape.is_fully_defined():
        # ONNX cannot stack an empty sequence; without the element's shape neither can we.
        return [b.node("ConcatFromSequence", [flow], axis=0, new_axis=1)]
    # Stack a zero element in front and cut it off again, so that an empty TensorArray (a
    # map_fn over no rows) stacks to shape [0, ...] as in dataflow.
    zeros = b.const(np.zeros(element_shape.as_list(), b.out_dtype().as_numpy_dtype))
    padded = b.node("SequenceInsert", [flow, zeros, b.const(np.int64(0))])
    stacked = b.node("ConcatFromSequence", [padded], axis=0, new_axis=1)
    return [b.node("Slice", [stacked, b.int64s([1]), b.int64s([INT64_MAX]), b.int64s([0])])]


@_converts("TensorArraySizeV3")
def _tensor_array_size(b: OpEmitter) -> list:
    _needs_sequences(b)
    return [b.cast(b.node("SequenceLength", [b.inputs[1]]), b.out_dtype())]


# -- more of the op library ----------------------------------------------------------------------
@_converts("Where")
def _where_indices(b: OpEmitter) -> list:
    # TensorFlow: [count, rank] int64 coordinates of the true (non-zero) entries; ONNX's
    # NonZero gives [rank, count].
    return [b.node("Transpose", [b.node("NonZero", b.inputs)], perm=[1, 0])]


@_converts("TopKV2", "TopK")
def _top_k(b: OpEmitter) -> list:
    k = b.attr("k")
    k = b.int64s([k]) if k is not None else b.node("Reshape", [b.as_int64(1), b.int64s([1])])
    values, indices = b.node("TopK", [b.inputs[0], k], outputs=2, axis=-1, largest=1, sorted=1)
    return [values, b.cast(indices, b.out_dtype(1))]


@_converts("GatherNd")
def _gather_nd(b: OpEmitter) -> list:
    return [b.node("GatherND", [b.inputs[0], b.as_int64(1)])]


@_converts("ScatterNd")
def _scatter_nd(b: OpEmitter) -> list:
    if b.opset < 16:
        raise Unsupported(
            "ScatterNd adds repeated indices up, which ONNX's ScatterND does from opset 16"
        )
    indices, updates, _ = b.inputs
    zeros = b.node("Expand", [b.const(np.zeros((), b.dtype(1).as_numpy_dtype)), b.as_int64(2)])
    return [b.node("ScatterND", [zeros, b.as_int64(0), updates], reduction="add")]


@_converts("ReverseV2")
def _reverse(b: OpEmitter) -> list:
    axes = b.constant_input(1)
    if axes is None:
        raise Unsupported("axes computed at run time")
    axes = [int(a) for a in np.ravel(axes)]
    if not axes:
        return [b.node("Identity", b.inputs[:1])]
    count = len(axes)
    return [
        b.node(
            "Slice",
            [
                b.inputs[0],
                b.int64s([-1] * count),
                b.int64s([INT64_MIN] * count),
                b.int64s(axes),
                b.int64s([-1] * count),
            ],
        )
    ]


@_converts("IsFinite")
def _is_finite(b: OpEmitter) -> list:
    x = b.inputs[0]
    return [b.node("Not", [b.node("Or", [b.node("IsNaN", [x]), b.node("IsInf", [x])])])]


@_converts("Rank")
def _rank(b: OpEmitter) -> list:
    return [b.cast(b.node("Size", [b.node("Shape", b.inputs)]), b.out_dtype())]


@_converts("LRN")
def _lrn(b: OpEmitter) -> list:
    # TensorFlow sums squares over 2r+1 channels times alpha; ONNX averages them (alpha / size).
    radius = int(b.attr("depth_radius", 5))
    size = 2 * radius + 1
    rank = b.rank(0)
    x = _to_channels_first(b, b.inputs[0], rank)
    y = b.node(
        "LRN",
        [x],
        size=size,
        alpha=float(b.attr("alpha", 1.0)) * size,
        beta=float(b.attr("beta", 0.5)),
        bias=float(b.attr("bias", 1.0)),
    )
    return [_to_channels_last(b, y, rank)]


@_converts("Conv2DBackpropInput")
def _conv_transpose(b: OpEmitter) -> list:
    """A transposed convolution (``conv2d_transpose``): ONNX's ConvTranspose with the padding
    of the forward convolution it transposes, and an output padding to reach its given size."""
    sizes = b.constant_input(0)
    if sizes is None:
        raise Unsupported("an output size computed at run time")
    _, kernel, x = b.inputs
    rank = b.rank(2)
    channels_last, x, back = _layout(b, x, rank)
    sizes = [int(s) for s in np.ravel(sizes)]
    out_spatial = sizes[1:-1] if channels_last else sizes[2:]
    in_spatial = [b.dim(2, a) for a in (range(1, rank - 1) if channels_last else range(2, rank))]
    strides = _spatial(b.attr("strides"), rank, channels_last, "strides")
    dilations = _spatial(b.attr("dilations") or [1] * rank, rank, channels_last, "dilations")
    kernel_spatial = [b.dim(1, a) for a in range(rank - 2)]
    padding = _padding(b)["auto_pad"]
    begins, ends, extra = [], [], []
    for size, inner, stride, dilation, k in zip(
        out_spatial, in_spatial, strides, dilations, kernel_spatial
    ):
        effective = (k - 1) * dilation + 1
        if padding == "VALID":
            total = 0
        else:  # the forward convolution's SAME padding, on an input of the output's size
            total = max((inner - 1) * stride + effective - size, 0)
        begins.append(total // 2)
        ends.append(total - total // 2)
        extra.append(size - ((inner - 1) * stride + effective - total))
    if any(e < 0 or e >= max(s, d) for e, s, d in zip(extra, strides, dilations)):
        raise Unsupported(
            f"an output size {out_spatial} no transposed convolution of this input gives"
        )
    # HW(out)(in) -> (in)(out)HW: ConvTranspose's weights are [C_in, C_out, kH, kW].
    to_weights = [rank - 1, rank - 2] + list(range(rank - 2))
    constant_kernel = b.constant_input(1)
    if constant_kernel is not None:
        kernel = b.const(np.ascontiguousarray(constant_kernel.transpose(to_weights)))
    else:
        kernel = b.node("Transpose", [kernel], perm=to_weights)
    y = b.node(
        "ConvTranspose",
        [x, kernel],
        strides=strides,
        dilations=dilations,
        pads=begins + ends,
        output_padding=extra,
    )
    return [back(y)]
