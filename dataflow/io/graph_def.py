"""Exchanging graphs with TensorFlow as ``GraphDef`` protocol buffers.

`export_graph_def` writes a `Graph` as TensorFlow 1.x's ``GraphDef``: each op a ``NodeDef``
with TensorFlow's op type, inputs (``"name:1"``, ``"^control"``) and attributes (``T``,
``dtype``, ``value``, ``frame_name``, ...), so TensorFlow loads it and TensorBoard's graph tab
draws loops and conds as it draws TensorFlow's (the ``Enter``/``Merge``/``Switch``/``Exit``/
``NextIteration`` nodes of a frame).  `import_graph_def` builds such a ``GraphDef`` (a frozen
TensorFlow graph, a ``.pb`` file) into the default graph, with TensorFlow's ``input_map``,
``return_elements`` and ``name``.

The op set both sides share is `dataflow.io.graph_def_ops.OP_TABLE`, one entry per TensorFlow
op type: the attributes it carries, and where TensorFlow takes an axis, a permutation or
paddings as a constant input (``Sum``'s ``reduction_indices``, ``PadV2``'s ``paddings``), our
attribute becomes a ``Const`` node (``<op>/reduction_indices``) on export and is read back on
import (from a ``Const``, or shape arithmetic on constants, as ``dynamic_rnn`` computes its
``perm``).  A TensorFlow op that is several of ours (``ResizeBilinear``) is built with
dataflow's own functions.  Any other op is an error naming it: on export, unless
``for_display`` (the graph tab draws it with its type, inputs and shapes only); on import,
always, with every other unknown op type of the GraphDef in the same message.  Resource
variables export as TensorFlow's (``VarHandleOp``, ``ReadVariableOp``,
``AssignVariableOp``), so that ``convert_variables_to_constants`` can freeze
``sess.graph.as_graph_def()`` as in TF1.

A ``GraphDef`` is read as an untrusted file: its tensors are bounded as a graph file's arrays are
(`dataflow.framework.array_bounds.array_bytes`) before any is allocated, as are the outputs an
attribute asks for (``Split``'s ``num_split``), an input names an output by decimal digits that
the node has, the nodes form no cycle but a loop's, and an attribute TensorFlow strips when it
holds its default takes that default (``defaults`` in the table); anything else is a
`GraphDefError` naming the node.  `load_graph_def` reads a ``.pb`` file so.

The protos come from the optional package tensorboardX (`dataflow.framework.tensorboard_protos`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import array_bytes
from ..framework.graph import (
    DATA_TEXT_ATTRS,
    Graph,
    Operation,
    Tensor,
    _user_location,
    control_character,
    get_default_graph,
    register_graph_def_exporter,
)
from ..framework.graph_walk import topological_order
from ..framework.op_registry import get_op_def
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensorboard_protos import protos
from ..ops.static_values import known_int_value
from .dfg_format import MAX_OUTPUTS
from .graph_def_ops import OP_TABLE, OUR_TYPE_TO_TF, ImportedNode

__all__ = [
    "GraphDefError",
    "export_graph_def",
    "import_graph_def",
    "load_graph_def",
    "make_ndarray",
    "make_tensor_proto",
    "write_graph",
]

# The GraphDef version TensorFlow 1.15 writes; every op below has existed since well before.
_PRODUCER = 134


class GraphDefError(ValueError):
    """A graph holds an op a ``GraphDef`` of the shared op set cannot express, or a
    ``GraphDef`` holds one we cannot build."""


# -- tensors ---------------------------------------------------------------------------------------
def make_tensor_proto(
    values, dtype=None, shape=None, verify_shape: bool = False, allow_broadcast: bool = False
) -> Any:
    """A ``TensorProto`` of ``values`` (a numpy array, a Python value, or a value of a string
    tensor), as ``tf.make_tensor_proto``: Python floats become float32 and Python ints int32
    (int64 when they do not fit) unless ``dtype`` says; with ``shape``, one value fills the
    shape, as many values as it has are reshaped to it, fewer are padded with the last one,
    and ``allow_broadcast`` broadcasts; ``verify_shape`` asks for exactly ``shape``."""
    p = protos()
    array = _tensor_proto_array(values, dtype, shape, verify_shape, allow_broadcast)
    dtype = _dtypes.string if array.dtype == object else _dtypes.as_dtype(array.dtype)
    proto = p.TensorProto(dtype=dtype.as_datatype_enum)
    proto.tensor_shape.CopyFrom(_shape_proto(TensorShape(array.shape)))
    if dtype is _dtypes.string:
        proto.string_val.extend(_dtypes.string_array(array).reshape(-1).tolist())
    else:
        proto.tensor_content = (
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        )
    return proto


def _tensor_proto_array(values, dtype, shape, verify_shape: bool, allow_broadcast: bool):
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
        array = _dtypes.string_array(values) if dtype is _dtypes.string else None
        if array is None:
            array = np.asarray(values, dtype=_dtypes.numpy_dtype(dtype))
    elif isinstance(values, (np.ndarray, np.generic)):
        array = np.asarray(values)
    else:
        array = np.asarray(values)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and (array.size == 0 or np.abs(array).max() < 2**31):
            array = array.astype(np.int32)
    if shape is None:
        return array
    shape = [int(d) for d in shape]
    if verify_shape and list(array.shape) != shape:
        raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
    needed = int(np.prod(shape, dtype=np.int64))
    if array.size == needed:
        return array.reshape(shape)
    if allow_broadcast or array.size == 1:
        return np.broadcast_to(array, shape).copy()
    if array.size > needed:
        raise ValueError(
            f"Too many elements provided. Needed at most {needed}, but received {array.size}"
        )
    flat = array.reshape(-1)
    if flat.size == 0:
        raise ValueError(f"No values to fill a tensor of shape {shape}")
    padding = np.full(needed - flat.size, flat[-1], dtype=flat.dtype)
    return np.concatenate([flat, padding]).reshape(shape)


# TensorProto's repeated field holding the values of each dtype when tensor_content is empty.
_VALUE_FIELDS = {
    "float16": "half_val",
    "float32": "float_val",
    "float64": "double_val",
    "int8": "int_val",
    "int16": "int_val",
    "int32": "int_val",
    "uint8": "int_val",
    "int64": "int64_val",
    "bool": "bool_val",
    "string": "string_val",
    "complex64": "scomplex_val",
    "complex128": "dcomplex_val",
}


def _declared_bytes(proto, total: int = 0) -> int:
    """The bytes the array of a ``TensorProto`` takes by its declared shape, refused as
    `dataflow.io` refuses an array of a graph file (`dataflow.framework.array_bounds.array_bytes`),
    alone or with the ``total`` bytes of the arrays of the same GraphDef, before anything is
    allocated."""
    try:
        dtype = _dtypes.numpy_dtype(_dtypes.as_dtype(proto.dtype))
    except TypeError:
        raise GraphDefError(f"tensors of DataType {proto.dtype} are not supported") from None
    try:
        return array_bytes([d.size for d in proto.tensor_shape.dim], dtype, total)
    except ValueError as e:
        raise GraphDefError(str(e)) from None


def make_ndarray(tensor) -> np.ndarray:
    """The numpy array of a ``TensorProto``, read-only; a value list shorter than the shape is
    padded with its last value, as TensorFlow reads it."""
    try:
        dtype = _dtypes.as_dtype(tensor.dtype)
    except TypeError:
        raise GraphDefError(f"tensors of DataType {tensor.dtype} are not supported") from None
    if dtype is _dtypes.resource:
        raise GraphDefError("resource tensors cannot be read from a GraphDef")
    shape = [d.size for d in tensor.tensor_shape.dim]
    _declared_bytes(tensor)
    size = math.prod(shape)
    if dtype is _dtypes.string:
        values = list(tensor.string_val)
        array = np.empty(size, dtype=object)
        if values:
            array[: len(values)] = values[:size]
            array[len(values) :] = values[-1]
        else:
            array[:] = b""
    elif tensor.tensor_content:
        np_dtype = _dtypes.numpy_dtype(dtype).newbyteorder("<")
        if len(tensor.tensor_content) != size * np_dtype.itemsize:
            raise GraphDefError(
                f"tensor_content holds {len(tensor.tensor_content)} bytes, but a {dtype.name} "
                f"tensor of shape {shape} needs {size * np_dtype.itemsize}"
            )
        array = np.frombuffer(tensor.tensor_content, np_dtype).astype(_dtypes.numpy_dtype(dtype))
    else:
        values = np.asarray(getattr(tensor, _VALUE_FIELDS[dtype.name]))
        if dtype is _dtypes.float16:
            values = values.astype(np.uint16).view(np.float16)
        if dtype.is_complex:  # the real and imaginary parts, interleaved
            values = values[0::2] + 1j * values[1::2]
        values = values.astype(_dtypes.numpy_dtype(dtype))
        if values.size == 0:
            array = np.zeros(size, _dtypes.numpy_dtype(dtype))
        elif values.size >= size:
            array = values[:size]
        else:
            array = np.concatenate([values, np.full(size - values.size, values[-1])])
    array = np.array(array).reshape(shape)
    array.flags.writeable = False
    return array


def _shape_proto(shape: TensorShape):
    proto = protos().TensorShapeProto()
    if shape.rank is None:
        proto.unknown_rank = True
    else:
        for d in shape.as_list():
            proto.dim.add(size=-1 if d is None else d)
    return proto


def _shape_of(proto) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


# -- the shared op set: dataflow/io/graph_def_ops.py ----------------------------------------------
def _const_positions(spec: dict, count: int) -> list:
    """The ``const`` entries of ``spec`` with their positions among ``count`` TensorFlow
    inputs made absolute, in ascending order."""
    entries = [(p if p >= 0 else count + p, *rest) for p, *rest in spec.get("const", ())]
    return sorted(entries, key=lambda entry: entry[0])


# -- export ----------------------------------------------------------------------------------------
def _attr_value(value) -> Any:
    """An ``AttrValue`` of one of our attribute values, or None when it has no such form."""
    p = protos()
    if isinstance(value, (bool, np.bool_)):
        return p.AttrValue(b=bool(value))
    if isinstance(value, _dtypes.DType):
        return p.AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return p.AttrValue(shape=_shape_proto(value))
    if isinstance(value, np.ndarray):
        return p.AttrValue(tensor=make_tensor_proto(value))
    if isinstance(value, (int, np.integer)):
        return p.AttrValue(i=int(value))
    if isinstance(value, (float, np.floating)):
        return p.AttrValue(f=float(value))
    if isinstance(value, str):
        return p.AttrValue(s=value.encode("utf-8"))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in value):
        attr = p.AttrValue()
        attr.list.i.extend(int(v) for v in value)
        return attr
    return None


def _input_name(t: Tensor) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def _unused_name(graph: Graph, name: str, written: set) -> str:
    """``name``, or ``name_1``, ``name_2``, ... when the graph or the GraphDef has it already
    (a graph imported from TensorFlow still holds the Const this export writes anew)."""
    candidate, k = name, 0
    while candidate in written or candidate in graph._ops_by_name:
        k += 1
        candidate = f"{name}_{k}"
    return candidate


def _const_node(graph_def, name: str, value: np.ndarray, frame_source: str) -> None:
    """A Const node of ``value``; its control input from ``frame_source`` puts it in the frame
    (loop) of the op that reads it, where a node without inputs would lie in the root frame."""
    node = graph_def.node.add(name=name, op="Const", input=[f"^{frame_source}"])
    node.attr["dtype"].type = _dtypes.as_dtype(value.dtype).as_datatype_enum
    node.attr["value"].tensor.CopyFrom(make_tensor_proto(value))


def _const_value(op: Operation, attr: str, kind: str) -> np.ndarray:
    """Our attribute ``attr`` as the value of the constant input TensorFlow takes instead:
    a scalar (``kind`` "int"), a vector ("ints") or a matrix of ``[before, after]`` rows
    ("pairs")."""
    value = op.attrs[attr]
    if value is None:  # a reduction over every axis
        rank = op.inputs[0].shape.rank
        if rank is None:
            raise GraphDefError(
                f"{op.type} op '{op.name}' reduces every axis of a tensor of unknown rank, "
                "which a GraphDef cannot state"
            )
        value = list(range(rank))
    array = np.array(value, dtype=np.int32)
    return array.reshape(-1, 2) if kind == "pairs" else array


def export_graph_def(
    graph: Optional[Graph] = None,
    for_display: bool = False,
    from_version: Optional[int] = None,
    add_shapes: bool = True,
):
    """``graph`` (the default graph when None) as a TensorFlow ``GraphDef`` proto (call
    ``SerializeToString()`` for the bytes of a ``.pb`` file).

    Every node carries ``_output_shapes``, which TensorBoard shows on the edges, unless
    ``add_shapes`` is False (`Graph.as_graph_def`'s default, as in TensorFlow).  With
    ``from_version``, only the ops added after the graph's ``version`` was that are written.
    An op outside the shared op set is a `GraphDefError` naming it, unless ``for_display``:
    then it is written with its type, inputs and shapes only, for TensorBoard's graph tab.
    """
    p = protos()
    graph = graph if graph is not None else get_default_graph()
    graph_def = p.GraphDef()
    graph_def.versions.producer = _PRODUCER
    written_names: set = set()  # the constants written for attributes TensorFlow takes as inputs
    for op in topological_order(graph, control_inputs=False):
        if from_version is not None and op._id <= from_version:
            continue
        if op.type in _EXPANSIONS and not for_display:  # a picture shows our op as one node
            _EXPANSIONS[op.type](graph_def, op, lambda n: _claim_name(graph, n, written_names))
            continue
        tf_type = OUR_TYPE_TO_TF.get(op.type)
        if tf_type is None and not for_display:
            raise GraphDefError(
                f"{op.type} op '{op.name}' (created at {op.location}) has no TensorFlow "
                f"GraphDef form in the op set dataflow shares with TensorFlow"
            )
        node = graph_def.node.add(name=op.name, op=tf_type or op.type)
        node.input.extend(_input_name(t) for t in op.inputs)
        spec = OP_TABLE.get(tf_type, {})
        for attr, source in spec.get("dtypes", {}).items():
            if isinstance(source, str):  # "out", "out:1": the dtype of an output
                dtype = op.outputs[int(source.partition(":")[2] or 0)].dtype
            else:
                dtype = op.inputs[source].dtype
            node.attr[attr].type = dtype.as_datatype_enum
        names = spec.get("attrs", ()) if tf_type is not None else tuple(op.attrs)
        for attr in names:
            value = _attr_value(op.attrs.get(attr))
            if value is not None:
                node.attr[attr].CopyFrom(value)
            elif tf_type is not None and attr in op.attrs:
                raise GraphDefError(f"attribute '{attr}' of {op.type} op '{op.name}' has no form")
        for attr, tf_attr in spec.get("tf_names", {}).items():
            node.attr[tf_attr].CopyFrom(_attr_value(op.attrs[attr]))
        for attr in spec.get("spatial", ()):
            node.attr[attr].list.i.extend(_per_format_dimension(op.attrs[attr], op))
        for attr, tf_attr in spec.get("renamed", {}).items():
            value = _attr_value(op.attrs[attr] or [])
            node.attr[tf_attr].CopyFrom(value)
        if "last_axis" in spec:
            _check_last_axis(op, spec["last_axis"])
        if "count" in spec:
            node.attr[spec["count"]].i = len(op.inputs)
        if "dtype_list" in spec:
            node.attr[spec["dtype_list"]].list.type.extend(
                t.dtype.as_datatype_enum for t in op.inputs
            )
        if "output_count" in spec:
            node.attr[spec["output_count"]].i = len(op.outputs)
        if spec.get("keep_dims"):
            node.attr["keep_dims"].b = bool(op.attrs["keepdims"])
        consts = _const_positions(spec, len(op.inputs) + len(spec.get("const", ())))
        for position, attr, input_name, kind, index_attr in consts:
            value = _const_value(op, attr, kind)
            const_name = _unused_name(graph, f"{op.name}/{input_name}", written_names)
            _const_node(graph_def, const_name, value, op.inputs[0].op.name)
            written_names.add(const_name)
            node.input.insert(position, const_name)
            if index_attr is not None:
                node.attr[index_attr].type = _dtypes.int32.as_datatype_enum
        node.input.extend(f"^{c.name}" for c in op.control_inputs)
        shapes = node.attr["_output_shapes"].list.shape
        for t in op.outputs:
            shapes.add().CopyFrom(_shape_proto(t.shape))
    if not add_shapes:
        for node in graph_def.node:
            if "_output_shapes" in node.attr:
                del node.attr["_output_shapes"]
    return graph_def


register_graph_def_exporter(export_graph_def)


def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a `Graph` (as `Graph.as_graph_def` gives it) or a ``GraphDef`` to
    ``logdir/name``, in protobuf text format or, unless ``as_text``, binary; makes ``logdir``
    if needed and returns the file's path, as ``tf.io.write_graph``."""
    if isinstance(graph_or_graph_def, Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    elif hasattr(graph_or_graph_def, "node") and hasattr(graph_or_graph_def, "SerializeToString"):
        graph_def = graph_or_graph_def
    else:
        raise TypeError(
            "write_graph writes a Graph or a GraphDef, got "
            f"{type(graph_or_graph_def).__name__} ({_user_location()})"
        )
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        from google.protobuf import text_format

        with open(path, "w") as f:
            f.write(text_format.MessageToString(graph_def))
    else:
        with open(path, "wb") as f:
            f.write(graph_def.SerializeToString(deterministic=True))
    return path


def _claim_name(graph: Graph, name: str, written: set) -> str:
    name = _unused_name(graph, name, written)
    written.add(name)
    return name


def _export_dropout(graph_def, op: Operation, claim_name) -> None:
    """Our one ``Dropout`` op as the ops TensorFlow's ``nn.dropout`` builds: a
    ``RandomUniform`` mask compared with the rate, and ``x`` scaled by ``1 / (1 - rate)``.  The
    last node takes the op's name, so consumers of its output read it unchanged; the mask output
    feeds only the gradient, which a frozen graph has no use for."""
    if op.outputs[1].consumers():
        raise GraphDefError(
            f"Dropout op '{op.name}' (created at {op.location}) has its mask read by "
            f"'{op.outputs[1].consumers()[0].name}'; only its output crosses to TensorFlow"
        )
    x, rate = op.inputs
    dtype = x.dtype.as_datatype_enum
    frame_source = x.op.name

    def node(suffix: str, tf_type: str, inputs: list, name: Optional[str] = None, **types):
        new = graph_def.node.add(name=name or claim_name(f"{op.name}/{suffix}"), op=tf_type)
        new.input.extend(inputs)
        for attr, value in types.items():
            new.attr[attr].type = value
        return new

    noise_shape = op.attrs["noise_shape"]
    if noise_shape is None:
        shape = node("Shape", "Shape", [_input_name(x)], T=dtype)
        shape.attr["out_type"].type = _dtypes.int32.as_datatype_enum
        shape_name = shape.name
    else:
        shape_name = claim_name(f"{op.name}/noise_shape")
        _const_node(graph_def, shape_name, np.array(noise_shape, np.int32), frame_source)
    uniform = node(
        "random_uniform",
        "RandomUniform",
        [shape_name],
        dtype=dtype,
        T=_dtypes.int32.as_datatype_enum,
    )
    uniform.attr["seed"].i, uniform.attr["seed2"].i = op.attrs["seed"], op.attrs["seed2"]
    kept = node("GreaterEqual", "GreaterEqual", [uniform.name, _input_name(rate)], T=dtype)
    mask = node("Cast", "Cast", [kept.name], SrcT=_dtypes.bool.as_datatype_enum, DstT=dtype)
    one = claim_name(f"{op.name}/one")
    _const_node(graph_def, one, np.ones((), _dtypes.numpy_dtype(x.dtype)), frame_source)
    keep = node("sub", "Sub", [one, _input_name(rate)], T=dtype)
    scaled = node("truediv", "RealDiv", [_input_name(x), keep.name], T=dtype)
    out = node("", "Mul", [scaled.name, mask.name], name=op.name, T=dtype)
    out.input.extend(f"^{c.name}" for c in op.control_inputs)
    out.attr["_output_shapes"].list.shape.add().CopyFrom(_shape_proto(op.outputs[0].shape))


def _export_assert(graph_def, op: Operation, claim_name) -> None:
    """Our ``Assert`` as TensorFlow's: the strings of its message template become string
    ``Const`` inputs between its tensors, in the template's order."""
    node = graph_def.node.add(name=op.name, op="Assert")
    condition, *tensors = op.inputs
    node.input.append(_input_name(condition))
    data_types = node.attr["T"].list.type
    remaining = iter(tensors)
    for item in op.attrs["template"]:
        if item is None:
            t = next(remaining)
            node.input.append(_input_name(t))
            data_types.append(t.dtype.as_datatype_enum)
        else:
            name = claim_name(f"{op.name}/message")
            _const_node(graph_def, name, np.array(item.encode("utf-8"), object), condition.op.name)
            node.input.append(name)
            data_types.append(_dtypes.string.as_datatype_enum)
    node.attr["summarize"].i = int(op.attrs["summarize"])
    node.input.extend(f"^{c.name}" for c in op.control_inputs)


def _export_write(graph_def, op: Operation, claim_name) -> None:
    """Our write of a resource variable (``Assign``, ``AssignAdd``, ``AssignSub``) as
    TensorFlow's ``AssignVariableOp`` (...), which has no output: a GraphDef cannot say that
    an op reads the value ours returns."""
    readers = [c.name for c in op.outputs[0].consumers()]
    if op.inputs[0].dtype is not _dtypes.resource or readers:
        why = "writes a TF1 reference" if not readers else f"has its value read by {readers[0]!r}"
        raise GraphDefError(
            f"{op.type} op '{op.name}' (created at {op.location}) {why}; TensorFlow's "
            f"{op.type}VariableOp writes a resource variable and returns nothing"
        )
    node = graph_def.node.add(name=op.name, op=f"{op.type}VariableOp")
    node.input.extend(_input_name(t) for t in op.inputs)
    node.input.extend(f"^{c.name}" for c in op.control_inputs)
    node.attr["dtype"].type = op.attrs["dtype"].as_datatype_enum


# Our ops that TensorFlow writes otherwise: each writes its nodes itself.
_EXPANSIONS = {
    "Dropout": _export_dropout,
    "Assert": _export_assert,
    "Assign": _export_write,
    "AssignAdd": _export_write,
    "AssignSub": _export_write,
}


def _spatial_positions(data_format: str) -> tuple[int, int]:
    return (2, 3) if data_format.startswith("NC") else (1, 2)


def _per_format_dimension(values, op: Operation) -> list[int]:
    """Our per-spatial-dimension attribute as TensorFlow's: 1 for the batch and channels."""
    full = [1, 1, 1, 1]
    for position, value in zip(_spatial_positions(op.attrs["data_format"]), values):
        full[position] = int(value)
    return full


def _check_last_axis(op: Operation, attr: str) -> None:
    axis, rank = op.attrs[attr], op.inputs[0].shape.rank
    if axis != -1 and (rank is None or axis != rank - 1):
        raise GraphDefError(
            f"{op.type} op '{op.name}' (created at {op.location}) works on axis {axis}; "
            "TensorFlow's op works on the last axis only"
        )


# -- import ----------------------------------------------------------------------------------------
def _attr_python(attr) -> Any:
    """The Python value of an ``AttrValue`` (the kinds the shared op set uses)."""
    kind = attr.WhichOneof("value")
    if kind == "b":
        return bool(attr.b)
    if kind == "i":
        return int(attr.i)
    if kind == "f":
        return float(attr.f)
    if kind == "s":
        return attr.s.decode("utf-8")
    if kind == "type":
        return _dtypes.as_dtype(attr.type)
    if kind == "shape":
        return _shape_of(attr.shape)
    if kind == "tensor":
        return make_ndarray(attr.tensor)
    if kind == "list":
        values = attr.list
        if values.type:
            return [_dtypes.as_dtype(t) for t in values.type]
        if values.s:
            return [v.decode("utf-8") for v in values.s]
        if values.f:
            return [float(v) for v in values.f]
        if values.shape:
            return [_shape_of(v) for v in values.shape]
        return [int(i) for i in values.i]
    return None


# TensorFlow's tensor names: ``node``, ``node:3`` (an output index of decimal digits), ``^node``.
_INPUT = re.compile(r"(\^)?([^:]+)(?::([0-9]+))?")


def _parse_input(text: str) -> tuple[str, int, bool]:
    """``(node name, output index, is a control input)`` of a NodeDef input string; anything
    else (``c:-1``, ``c:+0``, ``c:x``) is a `GraphDefError`."""
    match = _INPUT.fullmatch(text)
    if match is None or (match[1] and match[3] is not None):
        raise GraphDefError(
            f"'{text}' is not a tensor name ('node', 'node:index' with a decimal output index, "
            "or '^node' for a control input)"
        )
    return match[2], int(match[3] or 0), bool(match[1])


def _output(op: Operation, index: int, text: str, who: str) -> Tensor:
    """Output ``index`` of ``op``, which ``who`` (a node's input, return_elements) names as
    ``text``."""
    if index >= len(op.outputs):
        count = len(op.outputs)
        raise GraphDefError(
            f"{who} '{text}', but {op.type} node '{_parse_input(text)[0]}' has {count} "
            f"output{'' if count == 1 else 's'}"
        )
    return op.outputs[index]


def _node_order(nodes: dict) -> list:
    """The nodes with each after its inputs, except a Merge's inputs from a NextIteration
    (a loop's back edge), which are connected after every node exists."""
    order, state = [], {}
    for root in nodes:
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(name)
                continue
            if state.get(name):
                continue
            state[name] = 1
            stack.append((name, True))
            node = nodes[name]
            for text in reversed(node.input):
                try:
                    source = _parse_input(text)[0]
                except GraphDefError as e:
                    raise GraphDefError(f"{node.op} node '{name}' has input {e}") from None
                if source not in nodes:
                    raise GraphDefError(
                        f"node '{name}' has input '{text}', which is not a node of the GraphDef"
                    )
                if node.op == "Merge" and nodes[source].op == "NextIteration":
                    continue
                if state.get(source) == 1:
                    raise GraphDefError(f"the GraphDef has a cycle through node '{name}'")
                if not state.get(source):
                    stack.append((source, False))
    return order


def _node_attr(node, attr: str) -> Any:
    """The value of attribute ``attr`` of ``node``, TensorFlow's default when it has none."""
    if attr in node.attr:
        value = _attr_python(node.attr[attr])
        if value is not None:
            return value
        problem = f"an attribute '{attr}' of a kind dataflow does not read"
    else:
        defaults = OP_TABLE.get(node.op, {}).get("defaults", {})
        if attr in defaults:
            return defaults[attr]
        problem = f"no attribute '{attr}', which TensorFlow's {node.op} requires"
    raise GraphDefError(f"{node.op} node '{node.name}' has {problem}")


def _constant_input(node, inputs: list, constants: dict, position: int, input_name: str):
    """The value of input ``position`` of ``node``, which must be known when the graph is
    built: a ``Const``, or int shape arithmetic on constants and known shapes (the
    ``ConcatV2`` of a ``Range`` that ``dynamic_rnn`` makes its ``perm`` of)."""
    value = None
    if position < len(inputs):
        value = constants.get(inputs[position])
        if value is None:
            value = known_int_value(inputs[position])
    if value is None:
        raise GraphDefError(
            f"{node.op} node '{node.name}': its input {position} ('{input_name}') must be "
            "known when the graph is built (a Const, or shape arithmetic on constants), as "
            "dataflow holds it as an attribute"
        )
    return np.asarray(value)


def _index_value(node, value: np.ndarray, kind: str, input_name: str):
    """A constant input's value as our attribute: an int, a tuple of ints, or of int pairs."""
    if value.dtype.kind not in "iu":
        raise GraphDefError(
            f"{node.op} node '{node.name}': input '{input_name}' holds {value.dtype}, not integers"
        )
    if kind == "int":
        if value.size != 1:
            raise GraphDefError(
                f"{node.op} node '{node.name}': input '{input_name}' must be one integer, got "
                f"shape {list(value.shape)}"
            )
        return int(value.reshape(-1)[0])
    if kind == "pairs":
        if value.ndim != 2 or value.shape[1] != 2:
            raise GraphDefError(
                f"{node.op} node '{node.name}': input '{input_name}' must be [before, after] "
                f"rows, got shape {list(value.shape)}"
            )
        return tuple((int(a), int(b)) for a, b in value)
    return tuple(int(v) for v in value.reshape(-1))


def _our_attrs(node, spec: dict, inputs: list, constants: dict) -> tuple[list, dict]:
    """Our inputs and attributes for a NodeDef of the shared op set."""
    attrs = {}
    for tf_attr, (supported, default) in spec.get("require", {}).items():
        value = _attr_python(node.attr[tf_attr]) if tf_attr in node.attr else default
        if value != supported:
            raise GraphDefError(
                f"{node.op} node '{node.name}' has {tf_attr}={value!r}; dataflow's op supports "
                f"{tf_attr}={supported!r} only"
            )
    for attr in spec.get("attrs", ()):
        attrs[attr] = _node_attr(node, attr)
    for attr, tf_attr in spec.get("tf_names", {}).items():
        attrs[attr] = _node_attr(node, tf_attr)
    if spec.get("keep_dims"):
        attrs["keepdims"] = bool(node.attr["keep_dims"].b) if "keep_dims" in node.attr else False
    for attr in spec.get("spatial", ()):
        full = _node_attr(node, attr)
        attrs[attr] = tuple(full[i] for i in _spatial_positions(attrs["data_format"]))
    for attr, tf_attr in spec.get("renamed", {}).items():
        value = tuple(_attr_python(node.attr[tf_attr]) or ()) if tf_attr in node.attr else ()
        attrs[attr] = value or None
    if "last_axis" in spec:
        attrs[spec["last_axis"]] = -1
    consts = _const_positions(spec, len(inputs))
    for position, attr, input_name, kind, _ in reversed(consts):
        value = _constant_input(node, inputs, constants, position, input_name)
        attrs[attr] = _index_value(node, value, kind, input_name)
        del inputs[position]
    for attr, source in spec.get("dtypes", {}).items():
        if source == "out" and attr not in spec.get("derived", ()):
            # the output's dtype is our attribute of the same name
            attrs[attr] = _node_attr(node, attr)
    if node.op == "Placeholder":
        attrs.setdefault("shape", TensorShape(None))
    _check_output_count(node, attrs)
    return inputs, attrs


def _check_output_count(node, attrs: dict) -> None:
    """Refuses an attribute that asks for more outputs than a graph file may hold
    (`dataflow.io.dfg_format.MAX_OUTPUTS`): a ``Split`` node of a few bytes can ask for a
    billion."""
    for attr, count in (
        ("num_split", attrs.get("num_split")),
        ("num", attrs.get("num")),
        ("size_splits", len(attrs.get("size_splits") or ())),
    ):
        if count is not None and not 0 <= count <= MAX_OUTPUTS:
            raise GraphDefError(
                f"{node.op} node '{node.name}': {attr} makes {count} outputs; a graph file's op "
                f"has at most {MAX_OUTPUTS}"
            )


def import_graph_def(
    graph_def,
    input_map: Optional[Mapping] = None,
    return_elements=None,
    name: Optional[str] = None,
    op_dict=None,
    producer_op_list=None,
):
    """Builds ``graph_def`` (a ``GraphDef`` proto, TensorFlow's or ours, or its serialized
    bytes) into the default graph, under the name scope ``name`` (``"import"`` when None).

    ``input_map`` maps names of the GraphDef's tensors (``"x:0"`` or ``"x"``) to tensors of the
    default graph to use instead; ``return_elements`` names the tensors (``"y:0"``) and
    operations (``"train"``) to return, in order.  A node outside the shared op set is a
    `GraphDefError` naming it.  ``op_dict`` and ``producer_op_list`` are accepted for
    TensorFlow's signature and unused.
    """
    del op_dict, producer_op_list
    return _import(graph_def, input_map, return_elements, name, _user_location())


def _import(graph_def, input_map, return_elements, name, location: str):
    """`import_graph_def`, its errors naming ``location`` (the caller's line, or the file)."""
    graph_def = parse_graph_def(graph_def, location)
    nodes = {}
    for node in graph_def.node:
        if node.name in nodes:
            raise GraphDefError(f"the GraphDef has two nodes named '{node.name}' ({location})")
        nodes[node.name] = node
    _check_op_types(graph_def, location)
    _check_array_sizes(graph_def, location)
    try:
        input_map = {_tensor_key(k): v for k, v in (input_map or {}).items()}
    except GraphDefError as e:
        raise GraphDefError(f"input_map has key {e} ({location})") from None
    missing = [f"{n}:{i}" for n, i in input_map if n not in nodes]
    if missing:  # TensorFlow's words
        raise GraphDefError(
            f"Attempted to map inputs that were not found in graph_def: [{', '.join(missing)}] "
            f"({location})"
        )
    for (source, index), value in input_map.items():
        declared = nodes[source].attr.get("dtype") if index == 0 else None
        value = convert_to_tensor(value)
        if declared is not None and declared.type and value.dtype != _attr_python(declared):
            raise GraphDefError(
                f"input_map maps '{source}:{index}' ({_attr_python(declared).name}) to "
                f"'{value.name}' of {value.dtype.name} ({location})"
            )
    graph = get_default_graph()
    built: dict[str, Operation] = {}
    constants: dict[tuple, np.ndarray] = {}
    back_edges: list = []
    with graph.name_scope(name if name is not None else "import") as scope:
        try:
            order = _node_order(nodes)
        except GraphDefError as e:
            raise GraphDefError(f"{e} ({location})") from None
        for node_name in order:
            node = nodes[node_name]
            try:
                built[node_name] = _build_node(
                    graph, node, nodes, built, input_map, constants, back_edges, scope
                )
            except (TypeError, ValueError, NotImplementedError) as e:
                if isinstance(e, GraphDefError):
                    raise
                raise GraphDefError(f"cannot import node {node_name!r} ({location}): {e}") from e
    from primitives.raw_ops import set_merge_input

    for merge, index, (source, output) in back_edges:
        who = f"Merge node '{merge.name}' has input"
        set_merge_input(merge, index, _output(built[source], output, f"{source}:{output}", who))
    if return_elements is None:
        return None
    return [_element(built, text, location) for text in return_elements]


def parse_graph_def(graph_def, location: str = ""):
    """``graph_def`` (a ``GraphDef`` proto of any protobuf package, or its serialized bytes) as
    the ``GraphDef`` of the protos dataflow reads; bytes that are no ``GraphDef`` are a
    `GraphDefError` (protocol buffers are parsed as data: nothing in them runs)."""
    from google.protobuf.message import DecodeError

    p = protos()
    if isinstance(graph_def, p.GraphDef):
        return graph_def
    if isinstance(graph_def, (bytes, bytearray, memoryview)):
        data = bytes(graph_def)
    elif hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):
        data = graph_def.SerializeToString()
    else:
        raise TypeError(
            f"import_graph_def takes a GraphDef or its bytes, got {type(graph_def).__name__}"
            + (f" ({location})" if location else "")
        )
    try:
        return p.GraphDef.FromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        where = f" ({location})" if location else ""
        raise GraphDefError(f"the bytes are not a GraphDef{where}: {e}") from None


def _check_op_types(graph_def, location: str) -> None:
    """Refuses, before anything is built, a GraphDef holding op types outside the shared op
    set, naming every such type with its nodes (the first three), not only the first met."""
    unknown: dict[str, list] = {}
    for node in graph_def.node:
        if node.op not in OP_TABLE:
            unknown.setdefault(node.op, []).append(node.name)
    if not unknown:
        return
    parts = []
    for op_type, names in sorted(unknown.items()):
        shown = ", ".join(f"'{n}'" for n in names[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        parts.append(f"{op_type} node{'s' if len(names) > 1 else ''} {shown}{more}")
    kinds = "such op" if len(parts) == 1 else f"op for any of these {len(parts)} op types"
    raise GraphDefError(
        f"cannot import {'; '.join(parts)}: dataflow has no {kinds} in the op set it shares "
        f"with TensorFlow ({location})"
    )


# The largest ``.pb`` file `load_graph_def` reads: protocol buffers cannot be larger, and the
# arrays in it are bounded as a graph file's (`MAX_ARRAY_BYTES`).
MAX_GRAPH_DEF_BYTES = 2**31 - 1


def load_graph_def(path) -> Graph:
    """A new `Graph` holding the binary ``GraphDef`` of the file ``path`` (a TensorFlow
    ``.pb``), its nodes under their own names, as the command line opens a ``.pb``.

    The file is untrusted: it is read only when no larger than a protocol buffer can be, parsed
    as data, and every size it declares is bounded before anything is allocated; an error
    names the file."""
    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
        if size > MAX_GRAPH_DEF_BYTES:
            raise GraphDefError(
                f"the file has {size} bytes; a GraphDef has at most {MAX_GRAPH_DEF_BYTES}"
            )
        with open(path, "rb") as f:
            data = f.read()
    except GraphDefError as e:
        raise GraphDefError(f"{path}: {e}") from None
    graph = Graph()
    with graph.as_default():
        _import(data, None, None, "", path)
    return graph


def _check_array_sizes(graph_def, location: str) -> None:
    """Refuses a GraphDef whose tensors (a Const's value) declare more than `dataflow.io`
    allows a graph file (`dataflow.framework.array_bounds.MAX_ARRAY_BYTES`, alone and in all),
    before any is built: a node of a few bytes can declare a shape of billions of elements."""
    total = 0
    for node in graph_def.node:
        for attr, value in node.attr.items():
            if value.WhichOneof("value") == "tensor":
                try:
                    total += _declared_bytes(value.tensor, total)
                except GraphDefError as e:
                    raise GraphDefError(
                        f"{node.op} node '{node.name}', attribute '{attr}' ({location}): {e}"
                    ) from None


def _tensor_key(text: str) -> tuple:
    source, index, _ = _parse_input(text)
    return source, index


def _build_node(graph, node, nodes, built, input_map, constants, back_edges, scope):
    spec = OP_TABLE[node.op]
    inputs, controls, pending = [], [], []
    for text in node.input:
        source, index, is_control = _parse_input(text)
        if is_control:
            controls.append(built[source])
        elif (source, index) in input_map:
            inputs.append(convert_to_tensor(input_map[(source, index)]))
        elif node.op == "Merge" and nodes[source].op == "NextIteration":
            pending.append((len(inputs), (source, index)))
            inputs.append(None)
        else:
            who = f"{node.op} node '{node.name}' has input"
            inputs.append(_output(built[source], index, text, who))
            if nodes[source].op == "Const":
                constants[inputs[-1]] = built[source].attrs["value"]
    if pending:
        stand_in = next((t for t in inputs if t is not None), None)
        if stand_in is None:
            raise GraphDefError(f"Merge node '{node.name}' has no input from outside its loop")
        inputs = [stand_in if t is None else t for t in inputs]
    if "build" in spec:
        return _build_with_functions(graph, node, spec, inputs, controls, constants, scope)
    inputs, attrs = _our_attrs(node, spec, inputs, constants)
    for attr, value in attrs.items():
        character = None if attr in DATA_TEXT_ATTRS else control_character(value)
        if character is not None:
            raise GraphDefError(
                f"{node.op} node {node.name!r}: attribute '{attr}' holds the control character "
                f"{character!r} (U+{ord(character):04X}); names and attributes that are not a "
                "kernel's data are printable text"
            )
    op_def = get_op_def(spec.get("type", node.op))
    op = graph.create_op(
        op_def, inputs, attrs, name=f"{scope}{node.name}/", control_inputs=controls
    )
    for index, edge in pending:
        back_edges.append((op, index, edge))
    return op


def _build_with_functions(graph, node, spec, inputs, controls, constants, scope) -> Operation:
    """A node that dataflow builds with its own functions (``build`` in `OP_TABLE`): the ops
    they make lie in the node's name scope, and the op of its output takes the node's name
    (through an ``Identity`` when the function's last op has another)."""
    name = f"{scope}{node.name}"

    def constant(position: int) -> np.ndarray:
        return _constant_input(node, inputs, constants, position, f"input {position}")

    imported = ImportedNode(list(inputs), lambda attr: _node_attr(node, attr), constant, name + "/")
    with graph.control_dependencies(controls):
        result = spec["build"](imported)
    if isinstance(result, Operation):
        return result
    outputs = [result] if isinstance(result, Tensor) else list(result)
    if len(outputs) == 1 and outputs[0].op.name != name:
        identity = get_op_def("Identity")
        return graph.create_op(identity, outputs, {}, name=name + "/")
    return outputs[0].op


def _element(built: dict, text: str, location):
    source, index, _ = _parse_input(text)
    op = built.get(source)
    if op is None:
        raise GraphDefError(
            f"return_elements names '{text}', which the GraphDef has not ({location})"
        )
    if ":" not in text:
        return op
    return _output(op, index, text, "return_elements names")
