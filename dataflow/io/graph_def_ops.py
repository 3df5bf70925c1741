"""The op set dataflow shares with TensorFlow's ``GraphDef``: an entry per TensorFlow op type.

`dataflow.io.graph_def` reads and writes ``NodeDef`` s through `OP_TABLE`; this module holds the
table and nothing that touches a protocol buffer.  Each entry says how a TensorFlow node becomes a
dataflow op (on import) and how a dataflow op becomes a node (on export).  Keys of an entry:

- ``type``: our op type, when it differs from TensorFlow's (``AddV2`` is our ``Add``);
- ``dtypes``: ``{attr: index of the input whose dtype it is (among our op's inputs), or "out"
  for the first output, "out:1" for the second}``:
  TensorFlow's type attributes, written on export; on import only an ``"out"`` one is kept (as
  our attribute of the same name), the others follow from the inputs;
- ``derived``: the ``"out"`` dtypes our op computes itself (written on export, not read);
- ``attrs``: attributes both sides hold under the same name;
- ``tf_names``: ``{our attribute: TensorFlow's name}`` for a scalar attribute named otherwise;
- ``renamed``: ``{our attribute: TensorFlow's name}`` for a list attribute where our ``None``
  is TensorFlow's empty list (``Squeeze``'s axes);
- ``const``: the inputs TensorFlow takes where we hold an attribute known when the graph is
  built, each ``(position, our attribute, TensorFlow's input name, kind, index dtype
  attribute)``: ``position`` counts TensorFlow's inputs (negative from the end), ``kind`` is
  ``"int"``, ``"ints"`` or ``"pairs"``; on export the attribute becomes a ``Const`` node there,
  on import it is read back from the ``Const`` feeding that input;
- ``count``: the attribute holding the number of inputs (``N``);
- ``dtype_list``: the attribute listing the dtype of every input (``IdentityN``'s ``T``),
  written on export;
- ``output_count``: the attribute holding the number of outputs, written on export only (ours
  follows from another attribute: ``SplitV``'s ``size_splits``);
- ``spatial``: attributes we hold per spatial dimension (``strides=(2, 2)``) that TensorFlow
  holds per dimension of the data format (``[1, 2, 2, 1]`` for NHWC);
- ``keep_dims``: a reduction, whose ``keep_dims`` is our ``keepdims``;
- ``last_axis``: our axis attribute, where TensorFlow's op works on the last axis only;
- ``defaults``: TensorFlow's default of each attribute read above that has one: TensorFlow
  leaves an attribute holding its default out of a GraphDef written with defaults stripped (a
  SavedModel's), and a node without it takes that value;
- ``require``: ``{TensorFlow attribute: (the only value dataflow supports, its default)}``;
- ``build``: a function that builds the node from dataflow's own functions (an `ImportedNode`
  in, a tensor, a sequence of tensors or an op out), where TensorFlow's op is several of ours
  (``ResizeBilinear``) or its attributes need more than a renaming (``BatchMatMulV2``'s
  adjoints); the other keys then serve export only;
- ``import_only``: TensorFlow's older spelling of an op whose export writes another type
  (``FusedBatchNorm`` is read as our ``FusedBatchNormV3``, which writes itself).

An op type outside the table is an error on import, naming it (and every other unknown type of
the file) and its nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.op_registry import apply_op
from ..framework.tensor_shape import TensorShape
from ..ops import extra_nn_ops, gather_ops, image_ops_impl, math_ops, matrix_ops, misc_ops

__all__ = ["OP_TABLE", "ImportedNode", "OUR_TYPE_TO_TF"]


@dataclass
class ImportedNode:
    """What a ``build`` function of `OP_TABLE` gets: the node's data inputs (tensors of the
    graph being built), its attributes (``attr(name)``: TensorFlow's default when absent),
    the values of its ``Const`` inputs (``constant(index)``), and ``name``, the scope to pass
    as a dataflow function's ``name`` so that its last op takes the node's name."""

    inputs: list
    attr: Callable[[str], Any]
    constant: Callable[[int], np.ndarray]
    name: str


def _adjoint_matmul(node: ImportedNode):
    a, b = node.inputs
    return math_ops.matmul(
        a, b, adjoint_a=node.attr("adj_x"), adjoint_b=node.attr("adj_y"), name=node.name
    )


def _matmul_v3(node: ImportedNode):
    a, b = node.inputs
    out = node.attr("Tout")
    return math_ops.matmul(
        a,
        b,
        adjoint_a=node.attr("adj_x"),
        adjoint_b=node.attr("adj_y"),
        output_type=None if out == a.dtype else out,
        name=node.name,
    )


def _einsum(node: ImportedNode):
    return matrix_ops.einsum(
        _spelled_out_ellipsis(node.attr("equation"), node.inputs), *node.inputs, name=node.name
    )


def _spelled_out_ellipsis(equation: str, inputs: list) -> str:
    """``equation`` with each ``...`` replaced by letters it does not use, one per dimension it
    stands for (known from the inputs' ranks), aligned from the right as broadcasting aligns
    them: ``"...ij,...kj->...ik"`` of rank-3 inputs is ``"Aij,Akj->Aik"``."""
    if "..." not in equation:
        return equation
    terms, arrow, output = equation.replace(" ", "").partition("->")
    terms = terms.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation]
    counts = []
    for term, t in zip(terms, inputs):
        if "..." in term:
            if t.shape.rank is None:
                raise ValueError(f"einsum's '...' needs inputs of known rank, got {t.shape}")
            counts.append(t.shape.rank - (len(term) - 3))
    widest = max(counts, default=0)
    if widest > len(free) or min(counts, default=0) < 0:
        raise ValueError(f"the inputs' ranks do not fit the equation {equation!r}")
    letters = "".join(free[:widest])
    terms = [
        term.replace("...", letters[widest - counts.pop(0) :]) if "..." in term else term
        for term in terms
    ]
    if not arrow:
        return ",".join(terms)
    return ",".join(terms) + "->" + output.replace("...", letters)


def _resize(function):
    def build(node: ImportedNode):
        return function(
            node.inputs[0],
            node.constant(1),
            align_corners=node.attr("align_corners"),
            half_pixel_centers=node.attr("half_pixel_centers"),
            name=node.name,
        )

    return build


_RESIZE_DEFAULTS = {"align_corners": False, "half_pixel_centers": False}


def _assert(node: ImportedNode):
    condition, *data = node.inputs
    return misc_ops.Assert(condition, data, summarize=node.attr("summarize"), name=node.name)


def _top_k(node: ImportedNode):
    values, indices = extra_nn_ops.top_k(
        node.inputs[0],
        node.inputs[1],
        sorted=node.attr("sorted"),
        index_type=node.attr("index_type"),
        name=node.name,
    )
    return [values, indices]


def _variable_shape(handle) -> TensorShape:
    """The shape of the variable whose handle ``handle`` is, found through the ops that pass a
    handle on (into a loop or a cond branch); unknown when no ``VarHandleOp`` is found."""
    op = handle.op
    while op.type in ("Identity", "Enter", "Switch", "Merge") and op.inputs:
        op = op.inputs[0].op
    return op.attrs["shape"] if op.type == "VarHandleOp" else TensorShape(None)


def _variable_op(our_type: str):
    """A read or a write of a resource variable: ours hold the variable's dtype and shape,
    TensorFlow's the dtype only."""

    def build(node: ImportedNode):
        handle = node.inputs[0]
        attrs = {"dtype": node.attr("dtype"), "shape": _variable_shape(handle)}
        if our_type != "ReadVariableOp":
            attrs["validate_shape"] = True
        return apply_op(our_type, node.inputs, attrs, node.name)

    return build


_INDEX = {"dtypes": {"T": 0}}
OP_TABLE: dict[str, dict] = {
    "Const": {"dtypes": {"dtype": "out"}, "attrs": ("value",)},
    "Placeholder": {
        "dtypes": {"dtype": "out"},
        "attrs": ("shape",),
        "defaults": {"shape": TensorShape(None)},
    },
    "PlaceholderWithDefault": {"dtypes": {"dtype": 0}, "attrs": ("shape",)},
    "Identity": {"dtypes": {"T": 0}},
    "IdentityN": {"dtype_list": "T"},
    "StopGradient": {"dtypes": {"T": 0}},
    "CheckNumerics": {"dtypes": {"T": 0}, "attrs": ("message",)},
    "NoOp": {},
    "Assert": {
        "attrs": ("summarize",),
        "defaults": {"summarize": 3},
        "build": _assert,  # ours keeps the message's strings in an attribute: export writes
    },  # them as string Consts (graph_def._export_assert)
    # v1 control flow: conds and loops as TensorFlow 1.x writes them
    "Switch": {"dtypes": {"T": 0}},
    "Merge": {"dtypes": {"T": 0}, "count": "N"},
    "Enter": {
        "dtypes": {"T": 0},
        "attrs": ("frame_name", "is_constant", "parallel_iterations"),
        "defaults": {"is_constant": False, "parallel_iterations": 10},
    },
    "Exit": {"dtypes": {"T": 0}},
    "NextIteration": {"dtypes": {"T": 0}},
    "LoopCond": {},
    # matrices
    "MatMul": {
        "dtypes": {"T": 0},
        "attrs": ("transpose_a", "transpose_b"),
        "defaults": {"transpose_a": False, "transpose_b": False},
    },
    "BatchMatMul": {
        "defaults": {"adj_x": False, "adj_y": False},
        "build": _adjoint_matmul,
        "import_only": True,
    },
    "BatchMatMulV2": {
        "dtypes": {"T": 0},
        "tf_names": {"transpose_a": "adj_x", "transpose_b": "adj_y"},
        "defaults": {"adj_x": False, "adj_y": False},
        "build": _adjoint_matmul,
    },
    "BatchMatMulV3": {
        "dtypes": {"Ta": 0, "Tb": 1, "Tout": "out"},
        "derived": ("Tout",),
        "tf_names": {"transpose_a": "adj_x", "transpose_b": "adj_y"},
        "defaults": {"adj_x": False, "adj_y": False},
        "build": _matmul_v3,
    },
    "Einsum": {
        "dtypes": {"T": 0},
        "attrs": ("equation",),
        "count": "N",
        "build": _einsum,
    },
    # shapes, slices and copies
    "Cast": {"dtypes": {"SrcT": 0}, "attrs": ("DstT",)},
    "AddN": {"dtypes": {"T": 0}, "count": "N"},
    "Pack": {"dtypes": {"T": 0}, "count": "N", "attrs": ("axis",), "defaults": {"axis": 0}},
    "Unpack": {"dtypes": {"T": 0}, "attrs": ("num", "axis"), "defaults": {"axis": 0}},
    "ConcatV2": {"dtypes": {"T": 0}, "count": "N", "const": ((-1, "axis", "axis", "int", "Tidx"),)},
    "Transpose": {"dtypes": {"T": 0}, "const": ((1, "perm", "perm", "ints", "Tperm"),)},
    "ExpandDims": {"dtypes": {"T": 0}, "const": ((1, "axis", "dim", "int", "Tdim"),)},
    "Reshape": {"dtypes": {"T": 0, "Tshape": 1}},
    "Fill": {"dtypes": {"T": 1, "index_type": 0}},
    "Tile": {"dtypes": {"T": 0, "Tmultiples": 1}},
    "Slice": {"dtypes": {"T": 0, "Index": 1}},
    "StridedSlice": {
        "dtypes": {"T": 0, "Index": 1},
        "attrs": ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"),
        "defaults": dict.fromkeys(
            ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0
        ),
    },
    "Split": {
        "dtypes": {"T": 0},
        "attrs": ("num_split",),  # on export, the number of outputs too
        "const": ((0, "axis", "split_dim", "int", None),),
    },
    "SplitV": {
        "dtypes": {"T": 0},
        "const": (
            (1, "size_splits", "size_splits", "ints", "Tlen"),
            (2, "axis", "split_dim", "int", None),
        ),
        "output_count": "num_split",
    },
    "Squeeze": {"dtypes": {"T": 0}, "renamed": {"axis": "squeeze_dims"}},
    "ReverseV2": {"dtypes": {"T": 0, "Tidx": 1}},
    "Shape": {"dtypes": {"T": 0}, "attrs": ("out_type",), "defaults": {"out_type": _dtypes.int32}},
    "Size": {"dtypes": {"T": 0}, "attrs": ("out_type",), "defaults": {"out_type": _dtypes.int32}},
    "Rank": {"dtypes": {"T": 0}},
    "Range": {"dtypes": {"Tidx": 0}},
    "Select": {"dtypes": {"T": 1}},
    "SelectV2": {"dtypes": {"T": 1}},
    "Where": {"dtypes": {"T": 0}},
    "OneHot": {"dtypes": {"T": 2, "TI": 0}, "attrs": ("axis",), "defaults": {"axis": -1}},
    "Pad": {"build": lambda node: gather_ops.pad(node.inputs[0], node.constant(1), name=node.name)},
    "PadV2": {"dtypes": {"T": 0}, "const": ((1, "paddings", "paddings", "pairs", "Tpaddings"),)},
    "MirrorPad": {
        "dtypes": {"T": 0},
        "attrs": ("mode",),
        "const": ((1, "paddings", "paddings", "pairs", "Tpaddings"),),
    },
    # gathers and scatters
    "GatherV2": {
        "dtypes": {"Tparams": 0, "Tindices": 1},
        "const": ((2, "axis", "axis", "int", "Taxis"),),
        "require": {"batch_dims": (0, 0)},
    },
    "GatherNd": {
        "dtypes": {"Tparams": 0, "Tindices": 1},
        "attrs": ("bad_indices_policy",),
        "defaults": {"bad_indices_policy": ""},
    },
    "ScatterNd": {
        "dtypes": {"T": 1, "Tindices": 0},
        "attrs": ("bad_indices_policy",),
        "defaults": {"bad_indices_policy": ""},
    },
    # images
    "ResizeBilinear": {
        "defaults": _RESIZE_DEFAULTS,
        "build": _resize(image_ops_impl.resize_bilinear),
    },
    "ResizeNearestNeighbor": {
        "defaults": _RESIZE_DEFAULTS,
        "build": _resize(image_ops_impl.resize_nearest_neighbor),
    },
    # neural networks
    "BiasAdd": {"dtypes": {"T": 0}, "attrs": ("data_format",), "defaults": {"data_format": "NHWC"}},
    "FusedBatchNormV3": {
        "dtypes": {"T": 0, "U": 1},
        "attrs": ("epsilon", "data_format", "is_training", "exponential_avg_factor"),
        "defaults": {
            "epsilon": 0.0001,
            "data_format": "NHWC",
            "is_training": True,
            "exponential_avg_factor": 1.0,
        },
    },
    "LeakyRelu": {"dtypes": {"T": 0}, "attrs": ("alpha",), "defaults": {"alpha": 0.2}},
    "TopKV2": {
        "dtypes": {"T": 0, "index_type": "out:1"},
        "attrs": ("sorted",),
        "defaults": {"sorted": True, "index_type": _dtypes.int32},
        "build": _top_k,
    },
    "Cumsum": {
        "dtypes": {"T": 0},
        "attrs": ("exclusive", "reverse"),
        "const": ((1, "axis", "axis", "int", "Tidx"),),
        "defaults": {"exclusive": False, "reverse": False},
    },
    # strings
    "StringJoin": {"count": "N", "attrs": ("separator",), "defaults": {"separator": ""}},
    "AsString": {
        "dtypes": {"T": 0},
        "attrs": ("precision", "scientific", "shortest", "width", "fill"),
        "defaults": {
            "precision": -1,
            "scientific": False,
            "shortest": False,
            "width": -1,
            "fill": "",
        },
    },
    "StringToNumber": {"attrs": ("out_type",), "defaults": {"out_type": _dtypes.float32}},
    "StringLength": {"attrs": ("unit",), "defaults": {"unit": "BYTE"}},
    "Substr": {"dtypes": {"T": 1}, "attrs": ("unit",), "defaults": {"unit": "BYTE"}},
    "StaticRegexReplace": {
        "attrs": ("pattern", "rewrite", "replace_global"),
        "defaults": {"replace_global": True},
    },
    "RegexReplace": {"attrs": ("replace_global",), "defaults": {"replace_global": True}},
    "StringUpper": {"attrs": ("encoding",), "defaults": {"encoding": ""}},
    "StringLower": {"attrs": ("encoding",), "defaults": {"encoding": ""}},
    # summaries
    "ScalarSummary": {"dtypes": {"T": 1}},
    "HistogramSummary": {"dtypes": {"T": 1}},
    "ImageSummary": {
        "dtypes": {"T": 1},
        "attrs": ("max_images", "bad_color"),
        "defaults": {"max_images": 3, "bad_color": np.array([255, 0, 0, 255], np.uint8)},
    },
    "AudioSummaryV2": {"attrs": ("max_outputs",), "defaults": {"max_outputs": 3}},
    "TensorSummaryV2": {"dtypes": {"T": 1}},
    "MergeSummary": {"count": "N"},
    "ArgMax": {
        "dtypes": {"T": 0},
        "attrs": ("output_type",),
        "const": ((1, "axis", "dimension", "int", "Tidx"),),
        "defaults": {"output_type": _dtypes.int64},
    },
    "ArgMin": {
        "dtypes": {"T": 0},
        "attrs": ("output_type",),
        "const": ((1, "axis", "dimension", "int", "Tidx"),),
        "defaults": {"output_type": _dtypes.int64},
    },
    "Softmax": {"dtypes": {"T": 0}, "last_axis": "axis"},
    "LogSoftmax": {"dtypes": {"T": 0}, "last_axis": "axis"},
    "SoftmaxCrossEntropyWithLogits": {"dtypes": {"T": 0}, "last_axis": "axis"},
    "SparseSoftmaxCrossEntropyWithLogits": {"dtypes": {"T": 0, "Tlabels": 1}},
    "LRN": {
        "dtypes": {"T": 0},
        "attrs": ("depth_radius", "bias", "alpha", "beta"),
        "defaults": {"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5},
    },
    "RandomUniform": {
        "dtypes": {"dtype": "out", "T": 0},
        "attrs": ("seed", "seed2"),
        "defaults": {"seed": 0, "seed2": 0},
    },
    "RandomStandardNormal": {
        "dtypes": {"dtype": "out", "T": 0},
        "attrs": ("seed", "seed2"),
        "defaults": {"seed": 0, "seed2": 0},
    },
}
OP_TABLE["ImageSummary"]["defaults"]["bad_color"].flags.writeable = False  # shared by imports
# TensorFlow's older batch norms: the same op with five outputs, of which ours has the first
# three (a frozen graph reads the first); FusedBatchNorm has no exponential_avg_factor and so
# takes its default, 1.
for _type in ("FusedBatchNorm", "FusedBatchNormV2"):
    OP_TABLE[_type] = {
        **OP_TABLE["FusedBatchNormV3"],
        "type": "FusedBatchNormV3",
        "import_only": True,
    }
for _type, _input in (
    ("Conv2D", 0),
    ("DepthwiseConv2dNative", 0),
    ("Conv2DBackpropInput", 1),
    ("Conv2DBackpropFilter", 0),
):
    OP_TABLE[_type] = {
        "dtypes": {"T": _input},
        "attrs": ("padding", "data_format"),
        "spatial": ("strides", "dilations"),
        "defaults": {"data_format": "NHWC", "dilations": [1, 1, 1, 1]},
    }
for _type in "MaxPool AvgPool".split():
    OP_TABLE[_type] = {
        "dtypes": {"T": 0},
        "attrs": ("padding", "data_format"),
        "spatial": ("ksize", "strides"),
        "defaults": {"data_format": "NHWC"},
    }
# Elementwise ops whose only attribute is their dtype T: the arithmetic, comparisons, activations
# and special functions.
for _type in (
    "Add Sub Mul RealDiv FloorDiv FloorMod TruncateDiv TruncateMod DivNoNan Pow Minimum Maximum "
    "SquaredDifference Atan2 Igamma Igammac Zeta Polygamma Betainc BitwiseAnd BitwiseOr "
    "BitwiseXor LeftShift RightShift Equal NotEqual Less LessEqual Greater GreaterEqual "
    "Neg Abs Sign Square Sqrt Rsqrt Reciprocal Exp Expm1 Log Log1p Sin Cos Tan Asin Acos Atan "
    "Sinh Cosh Asinh Acosh Atanh Floor Ceil Round Rint Invert IsNan IsInf IsFinite "
    "Erf Erfc Erfinv Ndtri Lgamma Digamma BesselI0e BesselI1e "
    "Tanh Sigmoid Relu Relu6 Elu Softplus ZerosLike OnesLike ClipByValue L2Loss"
).split():
    OP_TABLE[_type] = dict(_INDEX)
for _type in "LogicalAnd LogicalOr LogicalNot".split():
    OP_TABLE[_type] = {}
for _type in "Sum Mean Max Min Prod".split():
    OP_TABLE[_type] = {
        "dtypes": {"T": 0},
        "const": ((1, "axis", "reduction_indices", "ints", "Tidx"),),
        "keep_dims": True,
    }
for _type in "Any All".split():
    OP_TABLE[_type] = {
        "const": ((1, "axis", "reduction_indices", "ints", "Tidx"),),
        "keep_dims": True,
    }
# Fourier transforms: the complex ones of the innermost 1-3 dimensions, and the real ones with
# their fft_length input (TensorFlow's too).
for _type in "FFT IFFT FFT2D IFFT2D FFT3D IFFT3D".split():
    OP_TABLE[_type] = {"dtypes": {"Tcomplex": 0}}
for _type in "RFFT RFFT2D RFFT3D".split():
    OP_TABLE[_type] = {"dtypes": {"Treal": 0, "Tcomplex": "out"}}
for _type in "IRFFT IRFFT2D IRFFT3D".split():
    OP_TABLE[_type] = {"dtypes": {"Treal": "out", "Tcomplex": 0}}
OP_TABLE["Conj"] = {"dtypes": {"T": 0}}
# Complex numbers: built from and taken apart into their parts.
for _type in "Complex Real Imag Angle ComplexAbs".split():
    OP_TABLE[_type] = {"dtypes": {"T": 0, "Tout": "out"}, "derived": ("Tout",)}
OP_TABLE["AddV2"] = {"type": "Add", "dtypes": {"T": 0}}  # TensorFlow 1.15+'s name for Add
# TensorArray V3: the arrays of v1 loops (dynamic_rnn's inputs and outputs); the attributes
# are TensorFlow's under its names.
_TENSOR_ARRAY_FLAGS = ("dynamic_size", "clear_after_read", "identical_element_shapes")
OP_TABLE.update(
    {
        "TensorArrayV3": {
            "attrs": ("dtype", "element_shape", *_TENSOR_ARRAY_FLAGS, "tensor_array_name"),
            "defaults": {
                "element_shape": TensorShape(None),
                "dynamic_size": False,
                "clear_after_read": True,
                "identical_element_shapes": False,
                "tensor_array_name": "",
            },
        },
        "TensorArrayReadV3": {"attrs": ("dtype",)},
        "TensorArrayWriteV3": {"attrs": ("T",)},
        "TensorArrayGatherV3": {
            "attrs": ("dtype", "element_shape"),
            "defaults": {"element_shape": TensorShape(None)},
        },
        "TensorArrayScatterV3": {"attrs": ("T",)},
        "TensorArrayConcatV3": {
            "attrs": ("dtype", "element_shape_except0"),
            "defaults": {"element_shape_except0": TensorShape(None)},
        },
        "TensorArraySplitV3": {"attrs": ("T",)},
        "TensorArraySizeV3": {},
        "TensorArrayCloseV3": {},
    }
)

# Resource variables, as a graph that is not frozen yet holds them (``sess.graph.as_graph_def()``
# before ``convert_variables_to_constants``): our writes export through graph_def._export_write.
OP_TABLE.update(
    {
        "VarHandleOp": {
            "attrs": ("dtype", "shape", "shared_name"),
            "defaults": {"shared_name": ""},
        },
        "ReadVariableOp": {"attrs": ("dtype",), "build": _variable_op("ReadVariableOp")},
        "AssignVariableOp": {"build": _variable_op("Assign"), "import_only": True},
        "AssignAddVariableOp": {"build": _variable_op("AssignAdd"), "import_only": True},
        "AssignSubVariableOp": {"build": _variable_op("AssignSub"), "import_only": True},
    }
)

# Our op type -> the TensorFlow op type export writes it as.
OUR_TYPE_TO_TF = {
    spec.get("type", tf_type): tf_type
    for tf_type, spec in OP_TABLE.items()
    if not spec.get("import_only")
}
OUR_TYPE_TO_TF["Add"] = "Add"
