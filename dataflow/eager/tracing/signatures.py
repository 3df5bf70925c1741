"""The signature of a call of a ``df.function``: which trace serves it, and what it feeds.

A call's arguments ``(args, kwargs)`` (bound to the function's parameters) become a
`Signature`: the nesting of the arguments (lists, tuples, namedtuples, dicts) and one trace
type (`dataflow.framework.trace_type.TraceType`) per leaf, as TensorFlow 2 keys its traces:

- a tensor, numpy array or `TensorSpec` (given to ``get_concrete_function``): its `TensorSpec`
  (dtype and shape; the name left out);
- a SparseTensor, RaggedTensor or IndexedSlices, or its spec: that spec (the dense shape, not
  the number of stored values, so a new sparsity pattern does not retrace);
- an object with ``__tf_tracing_type__(context)`` (`SupportsTracingProtocol`): the type it
  gives;
- a variable: the variable itself (`VariableIdentity`; the trace captures it);
- ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes`` or None: the value
  (`Literal`); a trace bakes it in.  Unlike TensorFlow's, ``1``, ``1.0`` and ``True`` are three
  literals, not one, so a trace never gives an int argument the float's result;
- any other object: the object itself, held weakly (`Weakref`: equal values that are
  distinct objects are distinct), or, if it cannot be weakly referenced, its value when it
  can be hashed; else a TypeError, as TensorFlow's.

Which trace serves a call (`choose`): the one traced for an equal signature; else the most
specific earlier trace whose signature is a supertype of the call's (every leaf
``is_subtype_of`` the trace's), so a trace for ``TensorSpec([None])`` serves shape ``[3]``;
else a new trace, for the call's signature or, with ``reduce_retracing``, for the
``most_specific_common_supertype`` of it and each earlier signature that has one (TensorFlow's
``try_generalizing_function_type``): shapes ``[1]``, ``[2]``, ``[3]`` trace ``(1,)``, then
``(None,)``, which serves the third.

A trace receives each leaf's placeholder value (`placeholder_arguments`): placeholders for a
tensor or a composite's parts, the value itself for a literal, ``placeholder_value`` of a
custom type; a call feeds the ``to_tensors`` of each leaf (`tensor_feeder`).

Invariants: a `Signature` is immutable and hashable; ``a.is_subtype_of(b)`` implies the trace
for ``b`` gives every call of ``a`` the right result; the tensors a call feeds are, in order,
the trace's argument placeholders.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, Optional

import numpy as np

from ...framework import nest
from ...framework.graph import Tensor, is_valid_op_name
from ...framework.indexed_slices import IndexedSlices
from ...framework.ragged_tensor import RaggedTensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_spec import TensorSpec
from ...framework.trace_type import PlaceholderContext, TraceType, TracingContext
from ...framework.type_spec import TypeSpec, type_spec_from_value

__all__ = [
    "Literal",
    "Signature",
    "VariableIdentity",
    "Weakref",
    "choose",
    "describe_arguments",
    "flat_placeholder_names",
    "is_tensor_value",
    "named_arguments",
    "output_tensors",
    "placeholder_arguments",
    "tensor_feeder",
    "trace_type_of",
    "with_output_values",
]

# The Python values a trace bakes in by value.
_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None))


# What a float nan is keyed by: one object, so that two nans are one literal.
_NAN = object()


# -- the trace types of Python values --------------------------------------------------------------
class Literal(TraceType):
    """A Python value baked into a trace: only an equal value of the same type is one of
    it (a float nan is one of another nan, as in TensorFlow, though Python's nan is not equal
    to itself)."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        is_nan = isinstance(value, float) and value != value
        self._key = (type(value), _NAN if is_nan else value)

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others) -> Optional[Literal]:
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.value

    def __eq__(self, other) -> bool:
        return type(other) is Literal and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Literal[{self.value!r}]"


class Weakref(TraceType):
    """An object passed to a trace as itself, compared by identity and held weakly (a trace
    does not keep it alive; once it is gone, no call matches it)."""

    __slots__ = ("ref", "_id")

    def __init__(self, value):
        self.ref = weakref.ref(value)
        self._id = id(value)

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others) -> Optional[Weakref]:
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.ref()

    def __eq__(self, other) -> bool:
        if type(other) is not Weakref or self._id != other._id:
            return False
        value = self.ref()
        return value is not None and value is other.ref()

    def __hash__(self) -> int:
        return self._id

    def __repr__(self) -> str:
        return f"Weakref[{self.ref!r}]"


class VariableIdentity(TraceType):
    """A variable argument: a trace captures the variable itself, so only that variable is
    one of it (TensorFlow traces a variable's handle as an input and keys it by its spec)."""

    __slots__ = ("variable", "_id")

    def __init__(self, variable):
        self.variable = variable
        self._id = id(variable)

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others) -> Optional[VariableIdentity]:
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.variable

    def __eq__(self, other) -> bool:
        return type(other) is VariableIdentity and other.variable is self.variable

    def __hash__(self) -> int:
        return self._id

    def __repr__(self) -> str:
        variable = self.variable
        dtype = getattr(variable.dtype, "base_dtype", variable.dtype)
        trainable = getattr(variable, "trainable", True)
        return f"VariableSpec(shape={variable.shape}, dtype=df.{dtype.name}, trainable={trainable})"


def _is_variable(value) -> bool:
    return hasattr(value, "_as_graph_element") and hasattr(value, "handle")


def is_tensor_value(value) -> bool:
    """Whether an argument is passed to the trace as a tensor (a placeholder stands for it).
    A variable is not: the trace gets the variable itself, and captures it."""
    return isinstance(value, (Tensor, np.ndarray, np.generic)) or (
        hasattr(value, "dtype")
        and hasattr(value, "shape")
        and hasattr(value, "numpy")
        and not _is_variable(value)
    )


_COMPOSITES = (SparseTensor, RaggedTensor, IndexedSlices)


def trace_type_of(value, context: Optional[TracingContext] = None) -> TraceType:
    """The trace type of one argument leaf (see the module docstring)."""
    kind = type(value)
    if kind in _LITERAL_TYPES:
        return Literal(value)
    tracing_type = getattr(value, "__tf_tracing_type__", None)
    if tracing_type is not None and not isinstance(value, type):
        made = tracing_type(context if context is not None else TracingContext())
        if not isinstance(made, TraceType):
            raise TypeError(
                f"{kind.__name__}.__tf_tracing_type__ returned {made!r}; it must return a "
                "df.types.experimental.TraceType"
            )
        return made
    if isinstance(value, TensorSpec):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, TypeSpec):
        return value
    if isinstance(value, _COMPOSITES):
        return type_spec_from_value(value)
    if is_tensor_value(value):
        return TensorSpec.from_value(value)
    if _is_variable(value):
        return VariableIdentity(value)
    try:
        return Weakref(value)
    except TypeError:
        pass
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"Could not generate a generic TraceType for {value!r}.  Please verify that it is "
            "immutable/hashable.  Otherwise, consider implementing the Tracing Protocol for it "
            "(__tf_tracing_type__, df.types.experimental.SupportsTracingProtocol)."
        ) from None
    return Literal(value)


# -- signatures ------------------------------------------------------------------------------------
def _structure_key(structure) -> Any:
    """A hashable description of the nesting of ``structure`` (leaves left out)."""
    if isinstance(structure, dict):
        return (
            "dict",
            tuple((k, _structure_key(structure[k])) for k in nest._sorted_keys(structure)),
        )
    if isinstance(structure, (list, tuple)):
        return (type(structure), tuple(_structure_key(s) for s in structure))
    return None


class Signature:
    """The key of one trace: the nesting of the arguments and one `TraceType` per flat
    argument (see the module docstring)."""

    __slots__ = ("structure", "leaves", "_hash")

    def __init__(self, structure, leaves: tuple):
        self.structure = structure
        self.leaves = leaves
        self._hash = hash((structure, leaves))

    @classmethod
    def of(cls, arguments) -> Signature:
        """The signature of ``arguments`` (``(args, kwargs)``, or any nest of values)."""
        context = TracingContext()
        return cls(
            _structure_key(arguments),
            tuple(trace_type_of(leaf, context) for leaf in nest.flatten(arguments)),
        )

    def __eq__(self, other) -> bool:
        return (
            type(other) is Signature
            and self._hash == other._hash
            and self.structure == other.structure
            and self.leaves == other.leaves
        )

    def __hash__(self) -> int:
        return self._hash

    def is_subtype_of(self, other: Signature) -> bool:
        """Whether the trace for ``other`` serves a call of this signature: the same nesting,
        and each leaf a subtype of ``other``'s."""
        if self.structure != other.structure or len(self.leaves) != len(other.leaves):
            return False
        return all(mine.is_subtype_of(theirs) for mine, theirs in zip(self.leaves, other.leaves))

    def most_specific_common_supertype(self, other: Signature) -> Optional[Signature]:
        """The narrowest signature of which this and ``other`` are subtypes, or None when
        they are nested differently or a leaf has no common supertype."""
        if self.structure != other.structure or len(self.leaves) != len(other.leaves):
            return None
        leaves = []
        for mine, theirs in zip(self.leaves, other.leaves):
            common = mine.most_specific_common_supertype([theirs])
            if common is None:
                return None
            leaves.append(common)
        return Signature(self.structure, tuple(leaves))

    def difference(self, other: Signature, names: list[str]) -> str:
        """Why a call of this signature did not reuse ``other``'s trace, in words."""
        if self.structure != other.structure:
            return "the arguments are nested differently"
        for name, mine, theirs in zip(names, self.leaves, other.leaves):
            if mine != theirs:
                if isinstance(mine, TensorSpec) and isinstance(theirs, TensorSpec):
                    if mine.dtype != theirs.dtype:
                        return f"{name} is {mine.dtype.name}, was {theirs.dtype.name}"
                    return f"{name} has shape {mine.shape}, was {theirs.shape}"
                if isinstance(mine, Literal) and isinstance(theirs, Literal):
                    return f"{name} is the Python value {mine.value!r}, was {theirs.value!r}"
                return f"{name} is {mine!r}, was {theirs!r}"
        return "the arguments differ"

    def __repr__(self) -> str:
        return f"Signature({list(self.leaves)})"


def choose(signature: Signature, known: Sequence[Signature], reduce_retracing: bool) -> Signature:
    """The signature whose trace serves a call of ``signature``, among the ``known`` ones (in
    trace order), or the one to trace for it (see the module docstring)."""
    if signature in known:
        return signature
    most_specific = None
    for candidate in known:
        if signature.is_subtype_of(candidate) and (
            most_specific is None or candidate.is_subtype_of(most_specific)
        ):
            most_specific = candidate
    if most_specific is not None:
        return most_specific
    if not reduce_retracing:
        return signature
    relaxed = signature
    for candidate in known:
        common = relaxed.most_specific_common_supertype(candidate)
        if common is not None:
            relaxed = common
    return relaxed


# -- a trace's arguments, and what a call feeds ----------------------------------------------------
def _op_name(text: str) -> str:
    """The name of an argument's placeholders: ``text`` when it is a valid op name, else the
    default ``Placeholder`` (TensorFlow's rule: ``_private`` gives ``Placeholder``)."""
    return text if is_valid_op_name(text) else "Placeholder"


def named_arguments(arguments, parameters) -> list[tuple[str, Any]]:
    """``(name, value)`` for each argument of ``arguments`` (``(args, kwargs)``), in the order
    they flatten: a positional one by its parameter's name (``args_<i>`` under ``*args``, as
    TensorFlow names them), a keyword one by its keyword."""
    args, kwargs = arguments
    positional: list[str] = []
    varargs = "args"
    if parameters is not None:
        for parameter in parameters.parameters.values():
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                positional.append(parameter.name)
            elif parameter.kind is parameter.VAR_POSITIONAL:
                varargs = parameter.name
    named = [
        (positional[i] if i < len(positional) else f"{varargs}_{i - len(positional)}", value)
        for i, value in enumerate(args)
    ]
    return named + [(str(key), kwargs[key]) for key in nest._sorted_keys(kwargs)]


def flat_placeholder_names(arguments, parameters, input_signature=None) -> list[str]:
    """The name of each flat argument's placeholders, as TensorFlow names them: the name of
    its spec in ``input_signature`` (or of a `TensorSpec` given as the argument) when it has
    one, else its argument's (`named_arguments`)."""
    names: list[str] = []
    for name, value in named_arguments(arguments, parameters):
        names.extend([_op_name(name)] * len(nest.flatten(value)))
    given = nest.flatten(arguments)
    if input_signature is not None:
        given = nest.flatten(tuple(input_signature))
    for i, spec in enumerate(given[: len(names)]):
        if isinstance(spec, TypeSpec) and getattr(spec, "name", None):
            names[i] = _op_name(spec.name)
    return names


def placeholder_arguments(signature: Signature, flat_arguments: list, names: list[str]):
    """What a trace for ``signature`` receives for each flat argument, and the placeholders
    it makes (the trace's argument inputs, in feed order): ``(traced, placeholders)``.

    A tensor leaf is a placeholder named ``names[i]`` (`flat_placeholder_names`); a literal,
    object or variable leaf is the call's value; any other trace type's value is its
    ``placeholder_value``, and its tensors (``to_tensors``) are inputs."""
    traced: list = []
    placeholders: list = []
    for value, leaf, name in zip(flat_arguments, signature.leaves, names):
        if isinstance(leaf, (Literal, Weakref, VariableIdentity)):
            traced.append(value)
            continue
        made = leaf.placeholder_value(PlaceholderContext(name))
        tensors = leaf.to_tensors(made)
        if any(not isinstance(t, Tensor) for t in tensors):
            raise TypeError(
                f"{leaf!r}.to_tensors gave {tensors!r} for its placeholder value; it must give "
                "the tensors of the value (placeholders made by placeholder_value)"
            )
        traced.append(made)
        placeholders.extend(tensors)
    return traced, placeholders


def tensor_feeder(leaves: tuple) -> Callable[[Sequence], list]:
    """A function from a call's flat arguments to the tensors it feeds a trace of ``leaves``:
    the tensor arguments themselves when all fed leaves are `TensorSpec` (the common case,
    by position), else each leaf's ``to_tensors`` of its argument."""
    fed = [
        (i, leaf)
        for i, leaf in enumerate(leaves)
        if not isinstance(leaf, (Literal, Weakref, VariableIdentity))
    ]
    if all(isinstance(leaf, TensorSpec) for _, leaf in fed):
        positions = tuple(i for i, _ in fed)
        return lambda flat: [flat[i] for i in positions]

    def feed(flat: Sequence) -> list:
        tensors: list = []
        for i, leaf in fed:
            tensors.extend(leaf.to_tensors(flat[i]))
        return tensors

    return feed


def _leaf_path_names(arguments, parameters) -> list[str]:
    """A name per flat argument, as TensorFlow names the specs of ``structured_input_signature``:
    its argument's name (`named_arguments`), followed by the position of the leaf inside a
    nested argument (``x_1_0``)."""

    def walk(value, name: str, names: list) -> None:
        if not nest.is_nested(value):
            names.append(name)
            return
        children = (
            [value[k] for k in nest._sorted_keys(value)] if isinstance(value, dict) else value
        )
        for i, child in enumerate(children):
            walk(child, f"{name}_{i}", names)

    names: list[str] = []
    for name, value in named_arguments(arguments, parameters):
        walk(value, name, names)
    return names


def describe_arguments(signature: Signature, arguments, parameters, input_signature=None):
    """How a trace for ``signature`` describes its ``arguments`` (``(args, kwargs)``):
    ``(types, structured_input_signature)``, both nested as the arguments.

    ``types`` holds each leaf's trace type (what ``pretty_printed_signature`` prints): the
    signature's, so a relaxed trace shows its relaxed shapes, a `TensorSpec` keeping the name
    the caller gave it (in ``input_signature`` or as the argument).  The
    ``structured_input_signature`` holds a spec per tensor or composite (a `TensorSpec` named
    as its caller named it, else after its parameter and place, as TensorFlow's: ``x``,
    ``x_1_0``, ``args_0``), a custom trace type for an object that gave one, and the value
    itself for anything else."""
    if input_signature is not None:
        arguments = (tuple(input_signature), {})
    path_names = _leaf_path_names(arguments, parameters)
    types, shown = [], []
    for given, leaf, name in zip(nest.flatten(arguments), signature.leaves, path_names):
        if isinstance(leaf, (Literal, Weakref, VariableIdentity)):
            types.append(leaf)
            shown.append(given)
        elif isinstance(leaf, TensorSpec):
            named = given.name if isinstance(given, TensorSpec) else None
            types.append(TensorSpec(leaf.shape, leaf.dtype, named))
            shown.append(TensorSpec(leaf.shape, leaf.dtype, named or name))
        else:
            types.append(leaf)
            shown.append(leaf)
    return nest.pack_sequence_as(arguments, types), nest.pack_sequence_as(arguments, shown)


# -- a call's outputs ------------------------------------------------------------------------------
def output_tensors(structured_outputs) -> list[Tensor]:
    """The tensors a trace's outputs are: the returned tensors and the parts of returned
    composite tensors (SparseTensor, RaggedTensor, IndexedSlices), in `nest` order."""
    return [
        t for t in nest.flatten(structured_outputs, expand_composites=True) if isinstance(t, Tensor)
    ]


def with_output_values(structured_outputs, values) -> Any:
    """``structured_outputs`` with its `output_tensors` replaced, in order, by ``values``;
    its composite tensors are made again from their parts' values."""
    remaining = iter(values)
    flat = [
        next(remaining) if isinstance(leaf, Tensor) else leaf
        for leaf in nest.flatten(structured_outputs, expand_composites=True)
    ]
    return nest.pack_sequence_as(structured_outputs, flat, expand_composites=True)
