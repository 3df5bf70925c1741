"""What a ``df.function`` and its traces say about themselves, as TensorFlow 2's do.

`FunctionIntrospection` (mixed into `Function`) and `ConcreteFunctionIntrospection` (mixed
into `ConcreteFunction`) describe a function without changing how it traces or runs:

- `FunctionType`: a trace's parameters, each with its kind and trace type (a `TensorSpec`, a
  composite's spec, ``Literal[1]`` for a Python value, ``Tuple[...]``/``List[...]``/
  ``Dict[...]`` for a nest), the output's type and the captures' types.  Its ``repr`` is
  TensorFlow's ``pretty_printed_signature()`` text, its ``str`` the one-line form;
- ``ConcreteFunction``: ``function_type``, ``pretty_printed_signature(verbose=True)``,
  ``captured_inputs``, ``variables``, ``trainable_variables``, ``output_shapes``,
  ``output_dtypes``, and a ``repr`` made of its one-line signature;
- ``Function``: ``function_spec`` (a `FunctionSpec`: ``fullargspec``, ``input_signature``,
  ``arg_names``, ``default_values``, ...), ``function_type`` (its parameters before any trace),
  ``pretty_printed_concrete_signatures()`` (every trace so far, in trace order) and ``name``.

Specs print with ``df.`` where TensorFlow prints ``tf.`` (``dtype=df.float32``), and shapes as
the shape switch says: ``(?,)`` by default (TensorFlow 1.x, whose v1 mode TensorFlow 2 also
prints so), ``(None,)`` after ``df.enable_v2_tensorshape()``.

A trace's graph (``graph.as_graph_def()``) holds its argument placeholders and ops but no
``Identity`` per output, unlike TensorFlow's: a call fetches the returned tensors themselves
(a returned argument is fed and fetched as it is), so no op stands between the body and the
results.

Invariants: nothing here builds or runs an op; a printed type is the type that keys the
trace (`signatures`), except that a `TensorSpec` the caller named keeps its name.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from typing import Any, Optional

from ...framework import nest
from ...framework.graph import Operation, Tensor
from ...framework.indexed_slices import IndexedSlices
from ...framework.ragged_tensor import RaggedTensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_spec import TensorSpec
from ...framework.trace_type import TraceType
from ...framework.type_spec import type_spec_from_value
from .signatures import Literal, trace_type_of

__all__ = [
    "BoundFunction",
    "ConcreteFunctionIntrospection",
    "FunctionIntrospection",
    "FunctionSpec",
    "FunctionType",
    "Parameter",
]


# -- the trace types of nests ----------------------------------------------------------------------
class _Sequence(TraceType):
    """The type of a tuple or list of values (``Tuple[...]``, ``List[...]``): a subtype of
    another of the same kind and length whose components are supertypes of its own."""

    __slots__ = ("kind", "components")

    def __init__(self, kind: str, components: tuple):
        self.kind = kind
        self.components = tuple(components)

    def is_subtype_of(self, other) -> bool:
        return (
            type(other) is type(self)
            and other.kind == self.kind
            and len(other.components) == len(self.components)
            and all(a.is_subtype_of(b) for a, b in zip(self.components, other.components))
        )

    def most_specific_common_supertype(self, others):
        if not all(
            type(o) is type(self)
            and o.kind == self.kind
            and len(o.components) == len(self.components)
            for o in others
        ):
            return None
        common = []
        for i, mine in enumerate(self.components):
            found = mine.most_specific_common_supertype([o.components[i] for o in others])
            if found is None:
                return None
            common.append(found)
        return type(self)(self.kind, tuple(common))

    def placeholder_value(self, placeholder_context=None):
        values = [c.placeholder_value(placeholder_context) for c in self.components]
        return list(values) if self.kind == "List" else tuple(values)

    def __eq__(self, other) -> bool:
        return (
            type(other) is type(self)
            and other.kind == self.kind
            and other.components == self.components
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.components))

    def __repr__(self) -> str:
        return f"{self.kind}[{', '.join(repr(c) for c in self.components)}]"


class _Mapping(_Sequence):
    """The type of a dict or namedtuple (``Dict[['a', ...], ...]``, ``Point[['x', ...], ...]``):
    its keys (fields) and the type of each value."""

    __slots__ = ("keys",)

    def __init__(self, kind: str, components: tuple, keys: tuple = ()):
        super().__init__(kind, components)
        self.keys = tuple(keys)

    def is_subtype_of(self, other) -> bool:
        return super().is_subtype_of(other) and other.keys == self.keys

    def most_specific_common_supertype(self, others):
        if any(type(o) is not _Mapping or o.keys != self.keys for o in others):
            return None
        common = super().most_specific_common_supertype(others)
        return None if common is None else _Mapping(self.kind, common.components, self.keys)

    def placeholder_value(self, placeholder_context=None):
        values = [c.placeholder_value(placeholder_context) for c in self.components]
        return dict(zip(self.keys, values))

    def __eq__(self, other) -> bool:
        return super().__eq__(other) and other.keys == self.keys

    def __hash__(self) -> int:
        return hash((self.kind, self.keys, self.components))

    def __repr__(self) -> str:
        items = ", ".join(f"[{k!r}, {c!r}]" for k, c in zip(self.keys, self.components))
        return f"{self.kind}[{items}]"


def _nest_type(structure, leaf_type) -> TraceType:
    """The trace type of ``structure``: containers as `_Sequence`/`_Mapping`, each leaf
    ``leaf_type(leaf)``."""
    if isinstance(structure, dict):
        keys = nest._sorted_keys(structure)
        components = tuple(_nest_type(structure[k], leaf_type) for k in keys)
        return _Mapping("Dict", components, tuple(keys))
    if isinstance(structure, tuple) and hasattr(type(structure), "_fields"):
        fields = type(structure)._fields
        components = tuple(_nest_type(v, leaf_type) for v in structure)
        return _Mapping(type(structure).__name__, components, tuple(fields))
    if isinstance(structure, (list, tuple)):
        kind = "List" if isinstance(structure, list) else "Tuple"
        return _Sequence(kind, tuple(_nest_type(v, leaf_type) for v in structure))
    return leaf_type(structure)


def _output_leaf_type(value) -> TraceType:
    """The trace type of one leaf of a function's outputs; an op (what a function that
    returns nothing gives back after its effects are ordered) is None, as in TensorFlow."""
    if isinstance(value, Operation):
        return Literal(None)
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, (SparseTensor, RaggedTensor, IndexedSlices)):
        return type_spec_from_value(value)
    try:
        return trace_type_of(value)
    except TypeError:
        return Literal(repr(value))


# -- function types --------------------------------------------------------------------------------
class _CapturedDefault:
    """Stands for a parameter's default value in a `FunctionType` (the value itself is in
    ``FunctionSpec.default_values``), as TensorFlow prints it."""

    def __repr__(self) -> str:
        return "<captured_default_value>"


CAPTURED_DEFAULT_VALUE = _CapturedDefault()


class Parameter(inspect.Parameter):
    """One parameter of a `FunctionType`: its name, kind, whether a call may leave it out
    (``optional``) and its trace type (``type_constraint``, None before a trace)."""

    __slots__ = ()

    def __init__(self, name: str, kind, optional: bool, type_constraint: Optional[TraceType]):
        super().__init__(
            name,
            kind,
            default=CAPTURED_DEFAULT_VALUE if optional else inspect.Parameter.empty,
            annotation=inspect.Parameter.empty if type_constraint is None else type_constraint,
        )

    @property
    def optional(self) -> bool:
        return self.default is not inspect.Parameter.empty

    @property
    def type_constraint(self) -> Optional[TraceType]:
        return None if self.annotation is inspect.Parameter.empty else self.annotation

    def __repr__(self) -> str:
        return (
            f"Parameter(name={self.name}, kind={self.kind}, optional={self.optional!r}, "
            f"type_constraint={self.type_constraint!r})"
        )


class FunctionType(inspect.Signature):
    """The type of a function or of one trace (``tf.types.experimental.FunctionType``): its
    `Parameter`s, ``output`` (the type of what it returns, None before a trace) and
    ``captures`` (id of a captured outer value -> its type).  ``str`` gives the one-line form
    ``(x: TensorSpec(...)) -> TensorSpec(...)``; ``repr`` the multi-line one of
    ``pretty_printed_signature()``."""

    __slots__ = ("_captures",)

    def __init__(self, parameters, output: Optional[TraceType] = None, captures=None):
        super().__init__(
            parameters,
            return_annotation=inspect.Signature.empty if output is None else output,
            __validate_parameters__=False,
        )
        self._captures = OrderedDict(captures or ())

    @property
    def output(self) -> Optional[TraceType]:
        empty = self.return_annotation is inspect.Signature.empty
        return None if empty else self.return_annotation

    @property
    def captures(self) -> OrderedDict:
        return self._captures

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, FunctionType)
            and super().__eq__(other)
            and self._captures == other._captures
        )

    def __hash__(self) -> int:
        return hash((tuple(self.parameters.items()), tuple(self._captures.items())))

    def __repr__(self) -> str:
        lines = ["Input Parameters:"]
        for parameter in self.parameters.values():
            lines.append(f"  {parameter.name} ({parameter.kind}): {parameter.type_constraint}")
        lines.append("Output Type:")
        lines.append(f"  {self.output}")
        lines.append("Captures:")
        if self._captures:
            lines.extend(f"  {key}: {kind}" for key, kind in self._captures.items())
        else:
            lines.append("  None")
        return "\n".join(lines)


def _parameters_before_tracing(python_function, input_signature, skip_first: bool) -> list:
    """The parameters of ``python_function``, typed by ``input_signature`` when it has one."""
    try:
        signature = inspect.signature(python_function)
    except (TypeError, ValueError):
        return []
    found = list(signature.parameters.values())[1 if skip_first else 0 :]
    specs = list(input_signature) if input_signature is not None else []
    parameters = []
    for i, p in enumerate(found):
        spec = _nest_type(specs[i], lambda s: s) if i < len(specs) else None
        parameters.append(Parameter(p.name, p.kind, p.default is not p.empty, spec))
    return parameters


# -- Function.function_spec ------------------------------------------------------------------------
class FunctionSpec:
    """The Python signature of a ``df.function`` as TensorFlow's ``FunctionSpec`` gives it:
    ``fullargspec``, ``input_signature``, ``flat_input_signature``, ``arg_names`` (the
    positional parameters), ``default_values``, ``function_type``, ``is_pure``,
    ``jit_compile`` and ``signature_summary()``.  A method's ``self`` is left out once bound."""

    def __init__(self, function, skip_first: bool = False):
        python_function = function.python_function
        self._python_function = python_function
        self._input_signature = function.input_signature
        self._jit_compile = function.jit_compile
        self._skip_first = skip_first
        self._function_type = FunctionType(
            _parameters_before_tracing(python_function, self._input_signature, skip_first)
        )

    @property
    def fullargspec(self) -> inspect.FullArgSpec:
        spec = inspect.getfullargspec(self._python_function)
        if self._skip_first and spec.args:
            spec = spec._replace(args=spec.args[1:])
        return spec

    @property
    def input_signature(self):
        return self._input_signature

    @property
    def flat_input_signature(self) -> tuple:
        return tuple(nest.flatten(self._input_signature, expand_composites=True))

    @property
    def function_type(self) -> FunctionType:
        return self._function_type

    @property
    def arg_names(self) -> list[str]:
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [p.name for p in self._function_type.parameters.values() if p.kind in positional]

    @property
    def default_values(self) -> dict:
        try:
            found = inspect.signature(self._python_function).parameters.values()
        except (TypeError, ValueError):
            return {}
        return {p.name: p.default for p in found if p.default is not p.empty}

    @property
    def is_pure(self) -> bool:
        """Whether the function was declared free of effects: never, here (TensorFlow sets
        it only for functions it makes itself)."""
        return False

    @property
    def jit_compile(self):
        return self._jit_compile

    def signature_summary(self, default_values: bool = False) -> str:
        """The multi-line form of `function_type`, and the default values when asked."""
        summary = repr(self._function_type)
        if default_values:
            summary += "\nDefaults:"
            if self.default_values:
                for name, value in self.default_values.items():
                    summary += f"\n  {name}: {value!r}"
            else:
                summary += "\n  None"
        return summary

    def __repr__(self) -> str:
        return f"<FunctionSpec of {getattr(self._python_function, '__name__', 'function')}>"


# -- the mixins ------------------------------------------------------------------------------------
class ConcreteFunctionIntrospection:
    """The description of one trace (see the module docstring).  Reads ``graph``,
    ``structured_outputs``, ``_input_types`` (`signatures.describe_arguments`) and ``_function``
    of the `ConcreteFunction` it is mixed into."""

    @property
    def function_type(self) -> FunctionType:
        """The parameters and their types, the output's type and the captures' types."""
        found = self.__dict__.get("_function_type")
        if found is None:
            found = self.__dict__["_function_type"] = FunctionType(
                self._typed_parameters(), self._output_type(), self._capture_types()
            )
        return found

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """TensorFlow's summary of this trace: ``Input Parameters``, ``Output Type`` and
        ``Captures``, one per line (``verbose``), or the one-line form."""
        return repr(self.function_type) if verbose else str(self.function_type)

    def __repr__(self) -> str:
        return (
            f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at 0x{id(self):X}>"
        )

    def __str__(self) -> str:
        return f"ConcreteFunction {self.pretty_printed_signature(verbose=True)}"

    @property
    def captured_inputs(self) -> list:
        """The outer values the trace reads, in the order it captured them (as its
        ``Captures`` list them): tensors of an outer graph, eager values, and the handles of
        eager variables (which the trace reads through handles of its own, not placeholders,
        so they have no place in ``inputs``)."""
        return [outer for outer, _ in self._captures()]

    @property
    def variables(self) -> tuple:
        """The variables the trace uses: the eager ones it captured, then those of its own
        graph (made by a trace in graph mode)."""
        found = {id(v): v for v in self.captured_variables}
        for v in _graph_variables(self.graph):
            found.setdefault(id(v), v)
        return tuple(found.values())

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if getattr(v, "trainable", True))

    @property
    def output_shapes(self):
        """The static shape of each output, nested as the outputs are; a composite's as the
        list of its parts', a Python value's ``TensorShape(None)``."""
        return _map_components(self.structured_outputs, lambda t: t.shape, TensorShape(None))

    @property
    def output_dtypes(self):
        """The dtype of each output, nested as `output_shapes`; None for a Python value."""
        return _map_components(self.structured_outputs, lambda t: t.dtype, None)

    # -- the parts of the function type -------------------------------------------------------
    def _typed_parameters(self) -> list:
        typed_args, typed_kwargs = self._input_types
        function = self._function
        skip_first = getattr(function, "_is_method", False) and len(typed_args) > 0
        if skip_first:
            typed_args = typed_args[1:]
        names, kinds, varargs = _positional_parameters(function, skip_first)
        parameters = []
        for i, value in enumerate(typed_args):
            if i < len(names):
                name, kind = names[i], kinds[i]
                if len(typed_args) > len(names):
                    kind = inspect.Parameter.POSITIONAL_ONLY
            else:
                name, kind = f"{varargs}_{i - len(names)}", inspect.Parameter.POSITIONAL_ONLY
            parameters.append(Parameter(name, kind, False, _nest_type(value, lambda t: t)))
        for key in typed_kwargs:
            parameters.append(
                Parameter(
                    str(key),
                    inspect.Parameter.KEYWORD_ONLY,
                    False,
                    _nest_type(typed_kwargs[key], lambda t: t),
                )
            )
        return parameters

    def _output_type(self) -> TraceType:
        return _nest_type(self.structured_outputs, _output_leaf_type)

    def _capture_types(self) -> list:
        """``(id of the outer value, its type)`` per capture, in the order of `_captures`."""
        return [(id(outer), kind) for outer, kind in self._captures()]

    def _captures(self) -> list:
        """``(outer value, its type)`` per capture, in the order the trace made them."""
        graph = self.graph
        order = {op: i for i, op in enumerate(graph.get_operations())}
        found = []
        for outer, inner in graph.captures.items():
            found.append((order.get(inner.op, 0), outer, TensorSpec(inner.shape, inner.dtype)))
        for outer, inner in graph.eager_captures.values():
            found.append((order.get(inner.op, 0), outer, TensorSpec(inner.shape, inner.dtype)))
        for handle, inner in graph.captured_variables.values():
            found.append((order.get(inner.op, 0), handle, TensorSpec([], handle.dtype)))
        return [(outer, kind) for _, outer, kind in sorted(found, key=lambda item: item[0])]


def _positional_parameters(function, skip_first: bool):
    """The names and kinds of ``function``'s positional parameters, and its ``*args``'s
    name (``args`` when it has none)."""
    parameters = getattr(function, "_parameters", None)
    names, kinds, varargs = [], [], "args"
    if parameters is not None:
        for p in list(parameters.parameters.values())[1 if skip_first else 0 :]:
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
                kinds.append(p.kind)
            elif p.kind is p.VAR_POSITIONAL:
                varargs = p.name
    return names, kinds, varargs


def _graph_variables(graph) -> list:
    from ...framework.graph_keys import GraphKeys

    seen: dict = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(key):
            seen.setdefault(id(v), v)
    return list(seen.values())


def _map_components(structured, of_tensor, otherwise) -> Any:
    """``structured`` with each tensor replaced by ``of_tensor(tensor)``, each composite by
    the list of that of its parts, and anything else by ``otherwise``."""

    def leaf(value):
        if isinstance(value, Tensor):
            return of_tensor(value)
        if isinstance(value, (SparseTensor, RaggedTensor, IndexedSlices)):
            return [of_tensor(t) for t in nest.flatten(value, expand_composites=True)]
        return otherwise

    if not nest.is_nested(structured):
        return leaf(structured)
    return nest.map_structure(leaf, structured)


class FunctionIntrospection:
    """The description of a ``df.function`` (see the module docstring).  Reads
    ``python_function``, ``input_signature``, ``jit_compile`` and ``_concrete_functions`` of the
    `Function` it is mixed into."""

    # Whether the function was reached as a method (``instance.method``): its traces take the
    # instance as their first argument, which their descriptions leave out, as TensorFlow's.
    _is_method = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def function_spec(self) -> FunctionSpec:
        return FunctionSpec(self)

    @property
    def function_type(self) -> FunctionType:
        """The function's parameters, typed by its ``input_signature`` when it has one."""
        return self.function_spec.function_type

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """The `pretty_printed_signature` of every trace so far, in trace order (a blank line
        between them when ``verbose``)."""
        if self.input_signature is not None or _takes_no_arguments(self._parameters):
            self.get_concrete_function()  # its one trace, made now if it is not yet
        joiner = "\n\n" if verbose else "\n"
        return joiner.join(
            c.pretty_printed_signature(verbose=verbose) for c in self._concrete_functions.values()
        )


def _takes_no_arguments(parameters) -> bool:
    return parameters is not None and not parameters.parameters


class BoundFunction:
    """``instance.method`` for a method decorated with ``df.function``: calls and traces with
    ``instance`` as the first argument, and describes the method without it, as TensorFlow's
    bound functions do.  Its traces are the function's (shared by every instance: each
    instance's calls trace apart, since the instance is part of the signature)."""

    def __init__(self, function, instance):
        self._function = function
        self._instance = instance
        self.__wrapped__ = getattr(function, "__wrapped__", None)
        self.__name__ = getattr(function, "__name__", "function")
        self.__doc__ = getattr(function, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._function(self._instance, *args, **kwargs)

    def get_concrete_function(self, *args, **kwargs):
        return self._function.get_concrete_function(self._instance, *args, **kwargs)

    @property
    def python_function(self):
        return self._function.python_function.__get__(self._instance, type(self._instance))

    @property
    def input_signature(self):
        return self._function.input_signature

    @property
    def name(self) -> str:
        return self._function.name

    def experimental_get_tracing_count(self) -> int:
        return self._function.experimental_get_tracing_count()

    @property
    def function_spec(self) -> FunctionSpec:
        return FunctionSpec(self._function, skip_first=True)

    @property
    def function_type(self) -> FunctionType:
        return self.function_spec.function_type

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """The traces made for this instance (see `FunctionIntrospection`)."""
        joiner = "\n\n" if verbose else "\n"
        mine = [
            c
            for c in self._function._concrete_functions.values()
            if c.structured_input_signature[0][:1]
            and c.structured_input_signature[0][0] is self._instance
        ]
        return joiner.join(c.pretty_printed_signature(verbose=verbose) for c in mine)

    def __repr__(self) -> str:
        return f"<bound df.function {self.__name__} of {self._instance!r}>"
