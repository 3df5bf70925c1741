"""What to watch: `DebugOptions` and `DebugTensorWatch` (``RunOptions.debug_options``).

These mirror the ``tf.compat.v1.DebugOptions`` / ``DebugTensorWatch`` protos and the tfdbg
helpers ``add_debug_tensor_watch`` and ``watch_graph`` that fill them in, so TF1 debugging code
ports by changing its imports::

    options = df.RunOptions()
    df.debug.watch_graph(options, sess.graph, node_name_regex_allowlist=r"loop/.*")
    # or: options.debug_options.debug_tensor_watch_opts.add(node_name="loop/add", output_slot=0)
    metadata = df.RunMetadata()
    sess.run(result, options=options, run_metadata=metadata)
    metadata.debug_dump.get_tensors("loop/add", 0)

Differences from TensorFlow, on purpose:

- There are no ``debug_urls``: the values do not go to files or a gRPC server but come back
  in memory, in ``run_metadata.debug_dump`` (a `DebugDump`, the counterpart of tfdbg's
  ``DebugDumpDir``).  So a run that watches tensors needs a ``run_metadata``.
- Two debug ops exist: ``"DebugIdentity"`` (a copy of the value, taken the moment it is
  produced) and ``"DebugNumericSummary"`` (a `TensorSummary`: counts of nan and infinities,
  min, max, mean; cheap to keep for every tensor of a long loop).
- Watching never changes what a run computes: a watched tensor that the fetches do not need
  is not computed, and the dump lists it in ``watch_keys_not_run``.  A run that watches
  tensors runs no graph pass, so that every tensor of the graph exists to be watched, unless
  its ``RunOptions.rewrite_options`` choose passes: then a tensor that a pass folded or fused
  away is listed in ``watch_keys_not_run`` as well (as tfdbg cannot watch a node that Grappler
  constant-folded).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..framework.protos import Message

DEBUG_OPS = ("DebugIdentity", "DebugNumericSummary")


@dataclass
class DebugTensorWatch(Message):
    """Watch output ``output_slot`` of the op ``node_name`` with each of ``debug_ops``.

    A watch that names no op or output of the graph makes the run fail before anything runs,
    unless ``tolerate_debug_op_creation_failures`` is set: then it is skipped and listed in
    the dump's ``watch_keys_not_run``.
    """

    node_name: str = ""
    output_slot: int = 0
    debug_ops: list[str] = field(default_factory=lambda: ["DebugIdentity"])
    tolerate_debug_op_creation_failures: bool = False

    def watch_keys(self) -> list[str]:
        """``"node:slot:debug_op"`` for each debug op, as tfdbg names a watch."""
        return [f"{self.node_name}:{self.output_slot}:{op}" for op in self.debug_ops]


class _RepeatedWatches(list):
    """A list of `DebugTensorWatch` with the ``add(**fields)`` of a repeated proto field."""

    def add(self, **fields: Any) -> DebugTensorWatch:
        watch = DebugTensorWatch(**fields)
        self.append(watch)
        return watch


@dataclass
class DebugOptions(Message):
    """The tensors a run should watch (``RunOptions.debug_options``)."""

    debug_tensor_watch_opts: list[DebugTensorWatch] = field(default_factory=_RepeatedWatches)

    def __post_init__(self) -> None:
        if not isinstance(self.debug_tensor_watch_opts, _RepeatedWatches):
            self.debug_tensor_watch_opts = _RepeatedWatches(self.debug_tensor_watch_opts)


def _debug_options_of(run_options) -> DebugOptions:
    options = getattr(run_options, "debug_options", None)
    if options is None:
        options = DebugOptions()
        run_options.debug_options = options
    return options


def _as_debug_ops(debug_ops: Union[str, Iterable[str]]) -> list[str]:
    ops = [debug_ops] if isinstance(debug_ops, str) else list(debug_ops)
    for op in ops:
        if op not in DEBUG_OPS:
            raise ValueError(f"Unknown debug op {op!r}; use one of {', '.join(DEBUG_OPS)}.")
    return ops


def add_debug_tensor_watch(
    run_options,
    node_name: str,
    output_slot: int = 0,
    debug_ops: Union[str, Iterable[str]] = "DebugIdentity",
    tolerate_debug_op_creation_failures: bool = False,
) -> DebugTensorWatch:
    """Adds a watch on output ``output_slot`` of op ``node_name`` to ``run_options``."""
    options = _debug_options_of(run_options)
    return options.debug_tensor_watch_opts.add(
        node_name=node_name,
        output_slot=output_slot,
        debug_ops=_as_debug_ops(debug_ops),
        tolerate_debug_op_creation_failures=tolerate_debug_op_creation_failures,
    )


def watch_graph(
    run_options,
    graph,
    debug_ops: Union[str, Iterable[str]] = "DebugIdentity",
    node_name_regex_allowlist: Optional[str] = None,
    op_type_regex_allowlist: Optional[str] = None,
    tensor_dtype_regex_allowlist: Optional[str] = None,
    tolerate_debug_op_creation_failures: bool = False,
) -> None:
    """Watches every output of every op of ``graph`` that passes all the allowlists given.

    Each allowlist is a regular expression matched (``re.match``) against the op's name, the
    op's type, and the output's dtype name (``"float32"``); None lets everything through.
    Outputs of dtype ``resource`` (variable handles) are never watched: they hold no data.
    """
    options = _debug_options_of(run_options)
    ops = _as_debug_ops(debug_ops)
    name_pattern = re.compile(node_name_regex_allowlist) if node_name_regex_allowlist else None
    type_pattern = re.compile(op_type_regex_allowlist) if op_type_regex_allowlist else None
    dtype_pattern = (
        re.compile(tensor_dtype_regex_allowlist) if tensor_dtype_regex_allowlist else None
    )
    for op in graph.get_operations():
        if name_pattern is not None and not name_pattern.match(op.name):
            continue
        if type_pattern is not None and not type_pattern.match(op.type):
            continue
        for tensor in op.outputs:
            dtype_name = tensor.dtype.name
            if dtype_name == "resource":
                continue
            if dtype_pattern is not None and not dtype_pattern.match(dtype_name):
                continue
            options.debug_tensor_watch_opts.add(
                node_name=op.name,
                output_slot=tensor.value_index,
                debug_ops=list(ops),
                tolerate_debug_op_creation_failures=tolerate_debug_op_creation_failures,
            )
