"""AutoGraph: converts a Python function's control flow into graph control flow.

``df.autograph.to_graph(fn)`` rewrites ``fn``'s source with Python's `ast` module (no parser of
our own) so that ``if``/``elif``/``else``, ``while``, ``for`` (over ``range`` of a tensor, a
tensor's first dimension, a `TensorArray`, and what a higher layer registers as read in the
graph: a ``df.data.Dataset`` and its iterators), ``break``, ``continue``, ``return`` inside them,
``and``/``or``/``not``, ``print``, ``assert`` and ``list.append`` in loops become calls of the
runtime operators (``ag__.if_stmt``, ``ag__.while_stmt``, ...); ``df.autograph.to_code(fn)``
shows the result.  The pieces: `transforms` (the AST passes), `operators` (what ``ag__`` is),
`conversion` (source in, function out).

Invariants:

- Conversion never changes what a function does on Python values: each operator decides at run
  time, staging `cond`/`while_loop` only for a condition that is a graph `Tensor`.
- Converted code is compiled under the user's file name and line numbers, so tracebacks, error
  messages and the locations ops record name the user's lines, never generated ones.
- It produces no new IR: what it stages is what `cond` and `while_loop` build.
- Library code (dataflow, numpy, the standard library, installed packages) is never converted.

Layer: eager (``dataflow.eager``); it may import the client and the layers below it.
"""

from . import experimental
from .ag_logging import set_verbosity, trace
from .conversion import do_not_convert, to_code, to_graph
from .errors import AutoGraphError, StagingError
from .operators import Undefined, set_loop_options
from .transforms import ConversionError

__all__ = [
    "AutoGraphError",
    "ConversionError",
    "StagingError",
    "Undefined",
    "do_not_convert",
    "experimental",
    "set_loop_options",
    "set_verbosity",
    "stack",
    "to_code",
    "to_graph",
    "trace",
]


def stack(values, name=None):
    """The elements of a list built by appends in a loop, stacked into one tensor: a
    `TensorArray`'s ``stack()`` when the loop was staged, `df.stack` of a Python list when it
    ran as Python (AutoGraph's ``ag.stack``)."""
    from dataflow.ops.tensor_array_ops import TensorArray

    if isinstance(values, TensorArray):
        return values.stack(name=name)
    from dataflow.ops.array_ops import stack as stack_tensors

    return stack_tensors(list(values), name=name or "stack")
