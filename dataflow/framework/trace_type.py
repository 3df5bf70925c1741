"""Trace types: what decides whether a call of a traced function reuses a trace.

``df.function`` keys each trace by the *trace type* of every argument
(``tf.types.experimental.TraceType``): a tensor's is its `TensorSpec`, a composite tensor's its
spec (`SparseTensorSpec`, `RaggedTensorSpec`, ...), a Python value's its value, and an object
that implements ``__tf_tracing_type__(context)`` (`SupportsTracingProtocol`) gives its own.  A
call reuses a trace whose types are *supertypes* of the call's (``is_subtype_of``), the most
specific one when several fit; ``reduce_retracing`` traces for the
``most_specific_common_supertype`` of the call's types and the earlier ones, so one trace
serves what follows.

A trace type says, besides:

- ``placeholder_value(context)``: the value the traced Python function receives for such an
  argument (a placeholder for a tensor; the object itself, or a stand-in, for others);
- ``to_tensors(value)``: the tensors of an argument of this type that a call feeds to the
  trace (none by default: the value is baked into the trace), and ``flatten()`` their specs;
- ``from_tensors(tensors)``: a value of this type made again from those tensors.

Invariants: a trace type is immutable; equal types hash alike; ``a.is_subtype_of(b)`` means a
trace made for ``b`` is right for every value of ``a``; ``to_tensors`` gives as many tensors
as ``flatten`` has specs, for every value of the type.

`TypeSpec` is a trace type (`type_spec`), as TensorFlow's is.  This module is the framework's
so that the specs can be; ``df.function``'s keying of whole calls is in
`dataflow.eager.tracing.signatures`.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from typing import Any, Optional, Protocol, runtime_checkable

__all__ = [
    "CastContext",
    "PlaceholderContext",
    "SupportsTracingProtocol",
    "TraceType",
    "TracingContext",
]


class TracingContext:
    """What ``__tf_tracing_type__`` is given while the trace types of one call's arguments are
    made.  It holds nothing a type needs today; TensorFlow reserves it the same way."""


class PlaceholderContext:
    """What ``placeholder_value`` is given: ``name``, the name for the placeholders of the
    argument being made (its parameter's name), or None."""

    def __init__(self, name: Optional[str] = None):
        self.name = name


class CastContext:
    """What ``cast`` is given; reserved, as in TensorFlow."""


class TraceType(abc.ABC):
    """The type of a traced function's argument, which decides when a call retraces (see the
    module docstring).  Subclasses implement ``is_subtype_of``,
    ``most_specific_common_supertype``, ``placeholder_value``, ``__eq__`` and ``__hash__``; a
    type whose values hold tensors to feed also implements ``to_tensors``, ``from_tensors`` and
    ``flatten``."""

    __slots__ = ()

    @abc.abstractmethod
    def is_subtype_of(self, other: TraceType) -> bool:
        """Whether every value of this type is a value of ``other`` (so a trace made for
        ``other`` serves it)."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Sequence[TraceType]) -> Optional[TraceType]:
        """The narrowest type that this one and each of ``others`` are subtypes of, or None
        when there is none."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context) -> Any:
        """The value a trace receives for an argument of this type."""

    def to_tensors(self, value) -> list:
        """The tensors of ``value`` (of this type) that a call feeds to the trace, as many as
        `flatten` gives specs; none by default."""
        del value
        return []

    def from_tensors(self, tensors: Iterator) -> Any:
        """A value of this type made from the tensors `to_tensors` gave (taken from the
        iterator ``tensors``); by default the placeholder value."""
        del tensors
        return self.placeholder_value(PlaceholderContext())

    def flatten(self) -> list:
        """The specs of the tensors `to_tensors` gives."""
        return []

    def cast(self, value, cast_context) -> Any:
        """``value`` as a value of this type; by default it must already be the placeholder
        value."""
        del cast_context
        if value != self.placeholder_value(PlaceholderContext()):
            raise AssertionError(f"Can not cast {value!r} to type {self!r}")
        return value

    @abc.abstractmethod
    def __eq__(self, other) -> bool:
        """Whether ``other`` is the same type."""

    @abc.abstractmethod
    def __hash__(self) -> int:
        """Equal types hash alike."""


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """An object that gives its own trace type, and so decides when a traced function that
    takes it as an argument retraces."""

    def __tf_tracing_type__(self, context: TracingContext) -> TraceType:
        """The trace type of this object (``context`` is a `TracingContext`)."""
