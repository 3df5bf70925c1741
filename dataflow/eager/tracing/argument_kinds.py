"""Kinds of arguments that a trace takes as a tensor of their own, keyed by a spec.

A ``df.function`` keys a trace on each tensor argument's `TensorSpec` and on the value (or
identity) of any other.  A higher layer may register a class whose values are keyed by a spec
of their own instead and reach the trace as one tensor: ``df.data`` registers `Dataset`, keyed
by its element spec (`DatasetSpec`) and fed as a variant tensor holding its pipeline, so
datasets of one element spec share a trace, as in TensorFlow.  `tracing` asks this module
which leaves of a call are such arguments (`_is_fed`), what their signature leaf is
(`_argument_kind(value).spec_of`), how the trace takes one (``trace_input``) and what a call
feeds for one (`_as_fed_value`).

Layer: eager (``dataflow.eager.tracing``); the registration is how the data layer above
reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from ...framework.tensor_spec import TensorSpec

__all__ = ["TracedArgumentKind", "register_traced_argument_kind"]

# Kinds of arguments that a trace takes as one tensor of their own, keyed by a spec rather than
# by identity: `dataflow.data`, a higher layer, registers `Dataset` (keyed by its element spec,
# passed as a variant tensor that holds its pipeline).  The class of the values -> its kind.
_argument_kinds: dict[type, TracedArgumentKind] = {}


class TracedArgumentKind:
    """How a trace takes arguments of one class (see `register_traced_argument_kind`)."""

    def __init__(self, spec_type: type, spec_of: Callable, as_tensor: Callable, trace_input):
        self.spec_type = spec_type
        self.spec_of = spec_of
        self.as_tensor = as_tensor
        self.trace_input = trace_input


def register_traced_argument_kind(
    cls: type, spec_type: type, spec_of: Callable, as_tensor: Callable, trace_input: Callable
) -> None:
    """Lets an argument of class ``cls`` reach a trace as a tensor: calls whose arguments have
    equal specs (``spec_of(value)``, a hashable ``spec_type``, which may also be given where
    the value would) share a trace; the trace gets ``trace_input(spec)``, which makes the
    placeholder and returns ``(placeholder, what the function sees)``, and a call feeds the
    placeholder with ``as_tensor(value)``, an eager tensor."""
    _argument_kinds[cls] = TracedArgumentKind(spec_type, spec_of, as_tensor, trace_input)


def _argument_kind(value) -> Optional[TracedArgumentKind]:
    for cls, kind in _argument_kinds.items():
        if isinstance(value, cls) or type(value) is kind.spec_type:
            return kind
    return None


def _is_fed(leaf) -> bool:
    """Whether a signature leaf stands for an argument fed to a placeholder of the trace."""
    return isinstance(leaf, TensorSpec) or _argument_kind(leaf) is not None


def _as_fed_value(value):
    """A fed argument as what its placeholder is fed with."""
    kind = _argument_kind(value)
    return value if kind is None else kind.as_tensor(value)
