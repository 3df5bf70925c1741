"""Building a dataflow graph from an ONNX model: `import_model` and the `ImportedModel` it
returns.

Role: walks an ONNX graph in its node order (ONNX requires a topological order) and builds each
node through its converter from `converters.CONVERTERS` into the default graph.  Graph inputs
that are not initializers become placeholders named after them; initializers become constants
(or variables with ``trainable=True``); each graph output gets an identity op named after it,
so the ONNX names are the graph's names for the CLI and `Graph.get_tensor_by_name`.

An op type without a converter whose ONNX schema defines it as a function of other ops
(LayerNormalization, Gelu, ...) is built by expanding that function body, which comes from the
``onnx`` library's schemas, not from the file.  A model's own functions are expanded the same way.

Invariants:
- Before anything is built, every node (subgraphs and functions included) is checked; all op
  types that can be built neither way are reported in one `OnnxImportError`, each with its node.
- Opsets before 7 of the default domain are refused (their attributes differ); from 7 on, each
  converter reads the attribute forms of the opset the model imports.
- Names resolve through the scopes of enclosing subgraphs, as ONNX's outer-scope values do.
- Values known when the model is imported (initializers, Constant nodes, shapes that are fully
  known) are kept as numpy arrays so that ops needing constants (axes, pads) can read them.
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np

from ...client.session import Session
from ...framework.graph import Tensor, get_default_graph, name_scope
from ...framework.tensor_conversion import numpy_value_or_none
from ...ops.array_ops import identity
from ...ops.constant_op import constant, placeholder
from ...ops.variables import Variable, variables_initializer
from . import ops_array, ops_control, ops_image, ops_math, ops_nn, ops_quantize, ops_rnn  # noqa: F401 - they fill the table
from .converters import CONVERTERS, NodeContext
from .reader import (
    MAX_NESTING,
    OnnxImportError,
    _onnx,
    attribute_values,
    dtype_of,
    load_model,
    onnx_elem_type,
    static_dims,
    tensor_value,
)

# The oldest opset of the default domain read; converters read the older attribute forms (axes
# and splits as attributes before 13, pads before 11, ...) by the opset of the node.
MIN_OPSET = 7
_DEFAULT_DOMAINS = ("", "ai.onnx")
_INVALID_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_.\-/]")


def graph_name(onnx_name: str, fallback: str) -> str:
    """A valid dataflow op name for the ONNX name ``onnx_name`` (``fallback`` when empty)."""
    if isinstance(onnx_name, bytes):  # protobuf gives a name that is not UTF-8 as bytes
        onnx_name = onnx_name.decode("utf-8", errors="replace")
    name = _INVALID_NAME_CHARACTERS.sub("_", onnx_name).strip("/")
    name = re.sub("/+", "/", name)
    if not name or not re.match(r"[A-Za-z0-9.]", name[0]):
        name = f"{fallback}_{name}" if name else fallback
    return name


# The ONNX ops whose integer and bool values are computed at import when their inputs are
# known there (pure functions of their inputs: no random ops, no state).
FOLDABLE = frozenset(
    "Add Sub Mul Div Mod Neg Abs Max Min Equal Less Greater LessOrEqual GreaterOrEqual And Or "
    "Not Xor Where Shape Size Gather Concat Unsqueeze Squeeze Slice Cast Reshape Range "
    "ReduceProd ReduceSum ReduceMax ReduceMin Expand Tile Identity ConstantOfShape Flatten "
    "Transpose Split Clip Sign".split()
)
MAX_FOLDED_ELEMENTS = 4096


class _Scope:
    """The ONNX values visible in one graph or subgraph, with its enclosing scope's behind."""

    def __init__(self, parent: Optional[_Scope] = None):
        self.parent = parent
        self.values: dict[str, Tensor] = {}

    def lookup(self, name: str) -> Optional[Tensor]:
        scope = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None


class GraphBuilder:
    """Builds ONNX graphs into the default dataflow graph (one builder per model).

    ``opsets`` maps each domain to the version the model imports; ``functions`` maps
    ``(domain, name)`` to the model's own FunctionProtos."""

    def __init__(self, label: str, opsets: dict, functions: dict):
        self.label = label
        self.opsets = opsets
        self.functions = functions
        self._static: dict[int, np.ndarray] = {}  # id(tensor) -> value known at import
        self._static_tensors: list = []  # keeps the keyed tensors alive
        self.control_depth = 0  # > 0 while building inside a cond or loop
        self._fold_session: Optional[Session] = None

    # -- values known when the model is imported -------------------------------------------------
    def static_value(self, tensor: Tensor) -> Optional[np.ndarray]:
        value = self._static.get(id(tensor))
        if value is None:
            value = numpy_value_or_none(tensor)
        return value

    def remember_static(self, tensor: Tensor, value: np.ndarray) -> None:
        self._static[id(tensor)] = value
        self._static_tensors.append(tensor)

    def _fold(self, op_type: str, domain: str, inputs: list, outputs: list) -> None:
        """Records the values of ``outputs`` as known at import when the node is a pure op of
        `FOLDABLE` whose inputs are all known and small (shape arithmetic, a predicate of
        static shapes): they are computed once now, by running the ops just built."""
        if domain != "" or op_type not in FOLDABLE or self.control_depth:
            return
        given = [t for t in inputs if t is not None]
        if not given or any(self.static_value(t) is None for t in given):
            return
        if any(np.asarray(self.static_value(t)).size > MAX_FOLDED_ELEMENTS for t in given):
            return
        wanted = [t for t in outputs if isinstance(t, Tensor) and self.static_value(t) is None]
        if not wanted or any(t.dtype.is_floating or t.dtype.is_complex for t in wanted):
            return  # shape arithmetic and predicates only: values of other types stay runs
        if self._fold_session is None:
            self._fold_session = Session(graph=wanted[0].graph)
        feeds = {t: self.static_value(t) for t in given}
        for tensor, value in zip(wanted, self._fold_session.run(wanted, feeds)):
            self.remember_static(tensor, np.asarray(value))

    def close(self) -> None:
        """Releases the Session that computed values at import, if one was made."""
        if self._fold_session is not None:
            self._fold_session.close()
            self._fold_session = None

    # -- checking before building ------------------------------------------------------------------
    def unsupported_nodes(self, graph_proto, depth: int = 0) -> list[str]:
        """One line per node of ``graph_proto`` (its subgraphs included) that cannot be built."""
        if depth > MAX_NESTING:
            raise OnnxImportError(f"{self.label}: subgraphs nest more than {MAX_NESTING} deep")
        onnx = _onnx()
        problems = []
        for node in graph_proto.node:
            if not self._can_build(node):
                where = f"node {node.name!r}" if node.name else "an unnamed node"
                domain = (
                    f" of domain {node.domain!r}" if node.domain not in _DEFAULT_DOMAINS else ""
                )
                problems.append(f"{node.op_type}{domain} ({where})")
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    problems += self.unsupported_nodes(attr.g, depth + 1)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        problems += self.unsupported_nodes(g, depth + 1)
        return problems

    def _can_build(self, node) -> bool:
        if (node.domain, node.op_type) in self.functions:
            return True
        if node.domain not in _DEFAULT_DOMAINS:
            return False
        return node.op_type in CONVERTERS or self._schema_function(node) is not None

    def _schema_function(self, node):
        """The ONNX schema of a default-domain node if it is defined as a function, else None."""
        onnx = _onnx()
        try:
            schema = onnx.defs.get_schema(node.op_type, self.opsets.get("", MIN_OPSET), "")
        except Exception:
            return None
        if schema.has_function or schema.has_context_dependent_function:
            return schema
        return None

    # -- building ----------------------------------------------------------------------------------
    def build_nodes(self, nodes, scope: _Scope, depth: int = 0) -> None:
        """Builds ``nodes`` in order, binding their outputs in ``scope``."""
        if depth > MAX_NESTING:
            raise OnnxImportError(f"{self.label}: functions nest more than {MAX_NESTING} deep")
        for node in nodes:
            self.build_node(node, scope, depth)

    def build_node(self, node, scope: _Scope, depth: int = 0) -> None:
        node_label = f"node {node.name!r}" if node.name else "an unnamed node"
        where = f"{self.label}: {node_label} ({node.op_type})"
        inputs = []
        for name in node.input:
            if not name:
                inputs.append(None)
                continue
            tensor = scope.lookup(name)
            if tensor is None:
                raise OnnxImportError(f"{where}: input {name!r} is not defined before the node")
            inputs.append(tensor)
        attrs = attribute_values(node, where)
        domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
        ctx = NodeContext(self, node, inputs, attrs, self.opsets.get(domain, MIN_OPSET), where)
        ctx.scope = scope
        ctx.depth = depth
        with name_scope(graph_name(node.name, node.op_type)):
            if (node.domain, node.op_type) in self.functions:
                outputs = self.expand_function(ctx, self.functions[(node.domain, node.op_type)])
            elif domain == "" and node.op_type in CONVERTERS:
                try:
                    outputs = CONVERTERS[node.op_type](ctx)
                except OnnxImportError:
                    raise
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    raise OnnxImportError(f"{where}: {e}") from e
            elif domain == "" and self._schema_function(node) is not None:
                outputs = self.expand_function(ctx, self._schema_body(ctx))
            else:
                raise OnnxImportError(f"{where}: no conversion for op type {node.op_type}")
        if isinstance(outputs, Tensor):
            outputs = [outputs]
        outputs = list(outputs)
        self._fold(node.op_type, domain, inputs, outputs)
        for index, name in enumerate(node.output):
            if not name:
                continue
            if index >= len(outputs) or outputs[index] is None:
                raise OnnxImportError(f"{where}: output {index} ({name!r}) is not supported")
            scope.values[name] = outputs[index]

    def _schema_body(self, ctx: NodeContext):
        """The FunctionProto that defines ``ctx``'s op in ONNX's schema, for its inputs' types."""
        onnx = _onnx()
        schema = self._schema_function(ctx.node)
        node = onnx.NodeProto()
        node.CopyFrom(ctx.node)
        for attr_name, attr in schema.attributes.items():
            if attr_name not in ctx.attrs and attr.default_value.type:
                node.attribute.append(attr.default_value)
        if schema.has_function and not schema.has_context_dependent_function:
            body = onnx.FunctionProto()
            body.ParseFromString(schema.function_body.SerializeToString())
        else:
            input_types = []
            for tensor in ctx.inputs:
                if tensor is None:
                    input_types.append(onnx.TypeProto())
                    continue
                dims = None if tensor.shape.ndims is None else tensor.shape.as_list()
                input_types.append(
                    onnx.helper.make_tensor_type_proto(onnx_elem_type(tensor.dtype), dims)
                )
            try:
                data = schema.get_context_dependent_function(
                    node.SerializeToString(), [t.SerializeToString() for t in input_types]
                )
            except Exception as e:
                raise ctx.error(f"ONNX's function for this op could not be made ({e})") from None
            body = onnx.FunctionProto()
            body.ParseFromString(data)
        ctx.node = node
        ctx.attrs = attribute_values(node, ctx.where)
        return body

    def expand_function(self, ctx: NodeContext, function) -> list:
        """Builds the body of ``function`` for the node of ``ctx``: the function's inputs bound
        to the node's, its attribute references replaced by the node's attributes."""
        onnx = _onnx()
        inner = _Scope(parent=None)
        for index, name in enumerate(function.input):
            tensor = ctx.input(index)
            if tensor is not None:
                inner.values[name] = tensor
        caller_attrs = {a.name: a for a in ctx.node.attribute}
        for attr in function.attribute_proto:
            if attr.name not in caller_attrs:
                caller_attrs[attr.name] = attr
        body_nodes = []
        for body_node in function.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(body_node)
            del copy.attribute[:]
            for attr in body_node.attribute:
                if attr.ref_attr_name:
                    given = caller_attrs.get(attr.ref_attr_name)
                    if given is None:
                        continue
                    replaced = onnx.AttributeProto()
                    replaced.CopyFrom(given)
                    replaced.name = attr.name
                    copy.attribute.append(replaced)
                else:
                    copy.attribute.append(attr)
            body_nodes.append(copy)
        saved = self.opsets
        function_opsets = {
            ("" if o.domain in _DEFAULT_DOMAINS else o.domain): o.version
            for o in function.opset_import
        }
        self.opsets = {**saved, **function_opsets}
        try:
            for body_node in body_nodes:
                if not self._can_build(body_node):
                    raise ctx.error(
                        f"its function body uses {body_node.op_type}, which cannot be built"
                    )
            self.build_nodes(body_nodes, inner, ctx.depth + 1)
        finally:
            self.opsets = saved
        outputs = []
        used = len(ctx.node.output)
        for index, name in enumerate(function.output):
            if index >= used or not ctx.node.output[index]:
                outputs.append(None)  # an optional output the node does not ask for
                continue
            tensor = inner.lookup(name)
            if tensor is None:
                raise ctx.error(f"its function body does not define its output {name!r}")
            outputs.append(tensor)
        return outputs

    def build_initializers(self, graph_proto, scope: _Scope, trainable: bool) -> list:
        """Binds the initializers of ``graph_proto`` as constants (variables when
        ``trainable``); returns the variables made."""
        variables = []
        for tensor_proto in graph_proto.initializer:
            value = tensor_value(tensor_proto, f"{self.label}: initializer")
            name = graph_name(tensor_proto.name, "initializer")
            if trainable and value.dtype.kind in "fc":
                variable = Variable(value, name=name)
                variables.append(variable)
                scope.values[tensor_proto.name] = variable.value()
            else:
                tensor = constant(value, name=name)
                self.remember_static(tensor, value)
                scope.values[tensor_proto.name] = tensor
        for sparse in graph_proto.sparse_initializer:
            raise OnnxImportError(
                f"{self.label}: sparse initializer {sparse.values.name!r} is not supported"
            )
        return variables

    def build_subgraph(self, graph_proto, parent: _Scope, inputs: list, where: str) -> list:
        """Builds a subgraph (an If branch, a Loop or Scan body) with its inputs bound to
        ``inputs``; returns its outputs.  Names of enclosing scopes stay visible."""
        if len(inputs) != len(graph_proto.input):
            raise OnnxImportError(
                f"{where}: the body takes {len(graph_proto.input)} inputs, the op gives it "
                f"{len(inputs)}"
            )
        scope = _Scope(parent)
        for value_info, tensor in zip(graph_proto.input, inputs):
            scope.values[value_info.name] = tensor
        self.build_initializers(graph_proto, scope, trainable=False)
        self.control_depth += 1
        try:
            self.build_nodes(graph_proto.node, scope)
        finally:
            self.control_depth -= 1
        outputs = []
        for value_info in graph_proto.output:
            tensor = scope.lookup(value_info.name)
            if tensor is None:
                raise OnnxImportError(
                    f"{where}: the body's output {value_info.name!r} is undefined"
                )
            outputs.append(tensor)
        return outputs


class ImportedModel:
    """An ONNX model built into a dataflow graph.

    ``inputs`` maps each ONNX graph input (not an initializer) to its placeholder, ``outputs``
    each ONNX graph output to its tensor; ``variables`` holds the initializers made trainable.
    `run` feeds and fetches by ONNX names."""

    def __init__(self, graph, inputs: dict, outputs: dict, variables: list, label: str):
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self.variables = variables
        self.label = label
        self._session: Optional[Session] = None

    def __repr__(self) -> str:
        return (
            f"<ImportedModel {self.label}: inputs {list(self.inputs)}, outputs "
            f"{list(self.outputs)}>"
        )

    def session(self) -> Session:
        """The Session `run` uses (made on first use; the variables initialized)."""
        if self._session is None:
            self._session = Session(graph=self.graph)
            if self.variables:
                with self.graph.as_default():
                    initializer = variables_initializer(self.variables)
                self._session.run(initializer)
        return self._session

    def run(self, feeds: dict, output_names: Optional[list] = None) -> dict:
        """Runs the model: ``feeds`` maps ONNX input names to values; returns a dict from the
        ONNX output names (``output_names``, all outputs by default) to their values."""
        feed_dict = {}
        for name, value in feeds.items():
            if name not in self.inputs:
                raise KeyError(
                    f"{self.label}: there is no model input named {name!r}; the inputs are "
                    f"{list(self.inputs)}"
                )
            feed_dict[self.inputs[name]] = value
        missing = [name for name in self.inputs if name not in feeds]
        if missing:
            raise ValueError(f"{self.label}: no value fed for the model inputs {missing}")
        names = list(self.outputs) if output_names is None else list(output_names)
        for name in names:
            if name not in self.outputs:
                raise KeyError(
                    f"{self.label}: there is no model output named {name!r}; the outputs are "
                    f"{list(self.outputs)}"
                )
        values = self.session().run([self.outputs[n] for n in names], feed_dict)
        return dict(zip(names, values))

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


def import_model(path_or_proto, trainable: bool = False) -> ImportedModel:
    """Builds the ONNX model ``path_or_proto`` (a path, bytes or an ``onnx.ModelProto``) into
    the default graph and returns an `ImportedModel`.

    ``trainable=True`` makes the floating-point initializers variables (collected as trainable),
    so ``df.gradients`` of a loss reaches them; otherwise they are constants."""
    model, label = load_model(path_or_proto)
    opsets = {}
    for entry in model.opset_import:
        domain = "" if entry.domain in _DEFAULT_DOMAINS else entry.domain
        opsets[domain] = int(entry.version)
    if "" not in opsets:  # no version named: read the ops as the installed onnx defines them
        opsets[""] = int(_onnx().defs.onnx_opset_version())
    if opsets[""] < MIN_OPSET:
        raise OnnxImportError(
            f"{label}: the model uses opset {opsets['']} of the default domain; opsets "
            f"{MIN_OPSET} and later are supported (onnx.version_converter.convert_version can "
            "upgrade it)"
        )
    functions = {(f.domain, f.name): f for f in model.functions}
    builder = GraphBuilder(label, opsets, functions)
    problems = builder.unsupported_nodes(model.graph)
    for function in model.functions:
        problems += builder.unsupported_nodes(function)
    if problems:
        raise OnnxImportError(
            f"{label}: {len(problems)} node(s) use op types dataflow cannot build: "
            + "; ".join(problems)
        )
    graph = get_default_graph()
    scope = _Scope()
    initializer_names = {t.name for t in model.graph.initializer}
    inputs = {}
    for value_info in model.graph.input:
        if value_info.name in initializer_names:
            continue
        where = f"{label}: input {value_info.name!r}"
        if not value_info.type.HasField("tensor_type"):
            raise OnnxImportError(f"{where}: only tensor inputs are supported")
        dtype = dtype_of(value_info.type.tensor_type.elem_type, where)
        ph = placeholder(
            dtype, shape=static_dims(value_info), name=graph_name(value_info.name, "input")
        )
        inputs[value_info.name] = ph
        scope.values[value_info.name] = ph
    variables = builder.build_initializers(model.graph, scope, trainable)
    try:
        builder.build_nodes(model.graph.node, scope)
    finally:
        builder.close()
    outputs = {}
    for value_info in model.graph.output:
        tensor = scope.lookup(value_info.name)
        if tensor is None:
            raise OnnxImportError(f"{label}: graph output {value_info.name!r} is not defined")
        outputs[value_info.name] = identity(tensor, name=graph_name(value_info.name, "output"))
    return ImportedModel(graph, inputs, outputs, variables, label)
