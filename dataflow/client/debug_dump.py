"""What a watching run gives back: `DebugDump`, its `DebugTensorDatum` records, `TensorSummary`.

A `DebugDump` (``run_metadata.debug_dump``) is the in-memory counterpart of tfdbg's
``DebugDumpDir``: one `DebugTensorDatum` per watched tensor, per debug op, per time the tensor
was produced, in execution order.  Inside a loop a tensor is produced once per iteration, so it
has one datum per iteration, each labelled with the frame instance (``"loop[iter 0 of root]"``;
a nested loop's instance names the outer iteration it runs in) and the iteration number.

Dead values are absent.  A tensor on the untaken branch of a cond, or in the last iteration of
a loop (the one whose predicate is false), is not computed: it has no datum there.  So
``dump.records("loop/body/add:0")`` of a loop whose body ran n times lists n values.

Invariants: ``dumped_tensor_data[k].order == k``; a datum's value is a copy taken the moment the
value was produced (``"DebugIdentity"``) or a `TensorSummary` of it (``"DebugNumericSummary"``),
so nothing the run does afterwards (a kernel writing into its input's buffer) changes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Optional

import numpy as np

from executor.program import NodeKind


class TensorSummary(NamedTuple):
    """Counts and range of a value (the ``"DebugNumericSummary"`` debug op).

    ``min``, ``max`` and ``mean`` are over the finite elements (None when there are none, or
    for values that are not real numbers); ``dtype`` is numpy's name, or the Python type's name
    for a value that is not an array.
    """

    dtype: str
    shape: tuple
    element_count: int
    nan_count: int = 0
    neg_inf_count: int = 0
    pos_inf_count: int = 0
    min: Optional[float] = None
    max: Optional[float] = None
    mean: Optional[float] = None

    @property
    def has_inf_or_nan(self) -> bool:
        return bool(self.nan_count or self.neg_inf_count or self.pos_inf_count)

    def __str__(self) -> str:
        shape = "(" + ", ".join(str(d) for d in self.shape) + ")"
        parts = [f"{self.dtype}{shape}"]
        if self.min is not None:
            parts.append(f"min={_number(self.min)} max={_number(self.max)}")
            if self.element_count > 1:
                parts.append(f"mean={_number(self.mean)}")
        for label, count in (
            ("nan", self.nan_count),
            ("-inf", self.neg_inf_count),
            ("+inf", self.pos_inf_count),
        ):
            if count:
                parts.append(f"{label}×{count}")
        return " ".join(parts)


def _number(x: Optional[float]) -> str:
    return "?" if x is None else f"{x:.6g}"


def summarize(value: Any) -> TensorSummary:
    """The `TensorSummary` of a value a node produced."""
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return _summarize_real_scalar(value)
    if isinstance(value, (bool, int, float, complex)):
        value = np.asarray(value)
    if not isinstance(value, (np.ndarray, np.generic)):
        return TensorSummary(type(value).__name__, (), 0)
    array = np.asarray(value)
    kind = array.dtype.kind
    base = (_dtype_name(array.dtype), tuple(array.shape), int(array.size))
    if kind in "fc":
        nan = np.isnan(array)
        inf = np.isinf(array)
        if kind == "f":
            pos_inf = int(np.count_nonzero(inf & (array > 0)))
            neg_inf = int(np.count_nonzero(inf)) - pos_inf
        else:
            pos_inf, neg_inf = int(np.count_nonzero(inf)), 0
        nan_count = int(np.count_nonzero(nan))
        if kind == "c":
            return TensorSummary(*base, nan_count, neg_inf, pos_inf)
        finite = array[~(nan | inf)] if (nan_count or pos_inf or neg_inf) else array
        if not finite.size:
            return TensorSummary(*base, nan_count, neg_inf, pos_inf)
        return TensorSummary(
            *base,
            nan_count,
            neg_inf,
            pos_inf,
            float(finite.min()),
            float(finite.max()),
            float(finite.mean(dtype=np.float64)),
        )
    if kind in "biu" and array.size:
        numbers = array.astype(np.int64) if kind == "b" else array
        return TensorSummary(
            *base,
            min=float(numbers.min()),
            max=float(numbers.max()),
            mean=float(numbers.mean(dtype=np.float64)),
        )
    return TensorSummary(*base)


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype: np.dtype) -> str:
    """``dtype.name``, cached: numpy computes it in Python, slower than the rest of a summary."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _summarize_real_scalar(value) -> TensorSummary:
    """`summarize` of a numpy real or bool scalar, without building arrays (the common case
    inside loops, and a few times faster)."""
    dtype = _dtype_name(value.dtype)
    x = float(value)
    if x != x:
        return TensorSummary(dtype, (), 1, nan_count=1)
    if x == math.inf:
        return TensorSummary(dtype, (), 1, pos_inf_count=1)
    if x == -math.inf:
        return TensorSummary(dtype, (), 1, neg_inf_count=1)
    return TensorSummary(dtype, (), 1, 0, 0, 0, x, x, x)


def has_inf_or_nan(datum: DebugTensorDatum, tensor: Any) -> bool:
    """tfdbg's filter: whether a dumped value holds a nan or an infinity.

    Works on ``"DebugIdentity"`` values (arrays) and ``"DebugNumericSummary"`` summaries; any
    other value (integers, strings, handles) never does.  Use it with `DebugDump.find`.
    """
    if isinstance(tensor, TensorSummary):
        return tensor.has_inf_or_nan
    if isinstance(tensor, float):
        return not np.isfinite(tensor)
    if isinstance(tensor, (np.ndarray, np.generic)) and tensor.dtype.kind in "fc":
        return not bool(np.all(np.isfinite(tensor)))
    return False


class TensorRecord(NamedTuple):
    """One value of a watched tensor: where it was produced, and the value."""

    frame: str
    iteration: int
    value: Any


class DebugTensorDatum:
    """One watched value: which tensor, which debug op, where and when it was produced.

    Mirrors tfdbg's ``DebugTensorDatum`` (``node_name``, ``output_slot``, ``debug_op``,
    ``tensor_name``, ``watch_key``, ``timestamp`` in microseconds since the epoch,
    ``get_tensor()``, ``dump_size_bytes``) and adds what a dataflow graph with loops needs:
    ``frame`` (the frame instance), ``frame_name`` (the static frame, ``"root"`` outside
    loops), ``iteration``, ``op_type``, ``location`` (the user's file:line that built the op),
    ``fed`` (the value was fed, not computed) and ``order`` (position in execution order).
    """

    __slots__ = (
        "node_name",
        "output_slot",
        "debug_op",
        "op_type",
        "location",
        "frame",
        "iteration",
        "timestamp",
        "order",
        "fed",
        "node_index",
        "_value",
    )

    def __init__(
        self,
        node_name: str,
        output_slot: int,
        debug_op: str,
        op_type: str,
        location: str,
        frame: str,
        iteration: int,
        timestamp: int,
        order: int,
        fed: bool,
        node_index: int,
        value: Any,
    ):
        self.node_name = node_name
        self.output_slot = output_slot
        self.debug_op = debug_op
        self.op_type = op_type
        self.location = location
        self.frame = frame
        self.iteration = iteration
        self.timestamp = timestamp
        self.order = order
        self.fed = fed
        self.node_index = node_index
        self._value = value

    @property
    def tensor_name(self) -> str:
        return f"{self.node_name}:{self.output_slot}"

    @property
    def watch_key(self) -> str:
        return f"{self.node_name}:{self.output_slot}:{self.debug_op}"

    @property
    def frame_name(self) -> str:
        return self.frame.split("[", 1)[0]

    @property
    def dump_size_bytes(self) -> int:
        return int(getattr(self._value, "nbytes", 0))

    def get_tensor(self) -> Any:
        return self._value

    def __repr__(self) -> str:
        return (
            f"DebugTensorDatum({self.watch_key}, frame={self.frame!r}, "
            f"iteration={self.iteration}, order={self.order})"
        )


class DebugDump:
    """The watched values of one run (``run_metadata.debug_dump``); see the module docstring.

    ``nodes`` are the executor nodes of the run's program (their ``tag`` is the op), so that a
    datum's inputs can be found (`input_data`).
    """

    def __init__(
        self,
        data: Sequence[DebugTensorDatum],
        nodes: Sequence[Any],
        watch_keys_not_run: Sequence[str] = (),
    ):
        self._data = list(data)
        self._nodes = nodes
        self._by_key: dict[str, list[DebugTensorDatum]] = {}
        self._by_output: dict[tuple[int, int], list[DebugTensorDatum]] = {}
        for datum in self._data:
            self._by_key.setdefault(datum.watch_key, []).append(datum)
            self._by_output.setdefault((datum.node_index, datum.output_slot), []).append(datum)
        self.watch_keys_not_run = list(watch_keys_not_run)

    # -- tfdbg's DebugDumpDir interface ---------------------------------------------------------
    @property
    def dumped_tensor_data(self) -> list[DebugTensorDatum]:
        return list(self._data)

    @property
    def size(self) -> int:
        return len(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        return iter(self._data)

    def watch_key_to_data(self, debug_watch_key: str) -> list[DebugTensorDatum]:
        """The data of ``"node:slot:debug_op"``, in execution order ([] if none)."""
        return list(self._by_key.get(debug_watch_key, ()))

    def get_tensors(
        self, node_name: str, output_slot: int = 0, debug_op: str = "DebugIdentity"
    ) -> list[Any]:
        """Every value the tensor took in the run, in execution order.

        Raises ``ValueError`` when nothing of that tensor and debug op was dumped (it was not
        watched, the fetches did not need it, or it lies only on untaken branches).
        """
        data = self._by_key.get(f"{node_name}:{output_slot}:{debug_op}")
        if not data:
            raise ValueError(
                f"No dumped values of '{node_name}:{output_slot}' with {debug_op}: "
                f"watched with {self._debug_ops_of(node_name, output_slot) or 'nothing'}"
                f"{'; the run did not compute it' if self._not_run(node_name) else ''}."
            )
        return [datum.get_tensor() for datum in data]

    def find(
        self,
        predicate: Callable[[DebugTensorDatum, Any], bool],
        first_n: int = 0,
        exclude_node_names: Optional[str] = None,
    ) -> list[DebugTensorDatum]:
        """The data for which ``predicate(datum, value)`` holds, in execution order; at most
        ``first_n`` of them (0: all).  ``exclude_node_names`` is a regular expression of op
        names to skip.  ``dump.find(df.debug.has_inf_or_nan, first_n=1)`` finds the first
        value that holds a nan or an infinity."""
        import re

        exclude = re.compile(exclude_node_names) if exclude_node_names else None
        found = []
        for datum in self._data:
            if exclude is not None and exclude.match(datum.node_name):
                continue
            if predicate(datum, datum.get_tensor()):
                found.append(datum)
                if first_n and len(found) >= first_n:
                    break
        return found

    def nodes(self) -> list[str]:
        """Names of the ops that have dumped data, in the order they first produced it."""
        return list(dict.fromkeys(datum.node_name for datum in self._data))

    # -- loops and inputs --------------------------------------------------------------------------
    def records(self, tensor_name: str, debug_op: str = "DebugIdentity") -> list[TensorRecord]:
        """``(frame, iteration, value)`` of every value of a tensor (``"op:0"``; ``"op"`` means
        output 0), in execution order.  Empty when nothing was dumped."""
        node_name, _, slot = tensor_name.rpartition(":")
        if not node_name or not slot.isdigit():
            node_name, slot = tensor_name, "0"
        return [
            TensorRecord(datum.frame, datum.iteration, datum.get_tensor())
            for datum in self._by_key.get(f"{node_name}:{slot}:{debug_op}", ())
        ]

    def input_data(self, datum: DebugTensorDatum) -> list[tuple[str, Optional[DebugTensorDatum]]]:
        """The inputs the op of ``datum`` consumed when it produced ``datum``'s value.

        One ``(tensor_name, input_datum)`` per data input, ``input_datum`` None when that input
        was not watched.  The input is the value of the producer that reached the same frame
        instance and iteration: a loop invariant is the value its Enter took in from the frame
        around the loop, a loop's result the value its Exit brought out of the child instance
        started in this iteration, a Merge's back edge the value of the previous iteration.
        """
        node = self._nodes[datum.node_index]
        if node.kind == NodeKind.ARG:
            return []
        found = []
        for producer, output in node.inputs:
            candidates = [
                d
                for d in self._by_output.get((producer, output), ())
                if d.order < datum.order and self._reaches(d, datum)
            ]
            same_op = [d for d in candidates if d.debug_op == datum.debug_op]
            chosen = (same_op or candidates or [None])[-1]
            found.append((self._tensor_name(producer, output), chosen))
        return found

    # -- helpers -----------------------------------------------------------------------------------
    def _reaches(self, produced: DebugTensorDatum, consumer: DebugTensorDatum) -> bool:
        """Whether the value of ``produced`` was delivered where ``consumer`` fired."""
        kind = self._nodes[produced.node_index].kind
        frame, iteration = consumer.frame, consumer.iteration
        if kind == NodeKind.ENTER:
            enter = self._nodes[produced.node_index]
            if not enter.is_constant and iteration != 0:
                return False  # a loop variable enters iteration 0 only
            return f"{enter.frame_name}[iter {produced.iteration} of {produced.frame}]" == frame
        if kind == NodeKind.EXIT:
            suffix = f"[iter {iteration} of {frame}]"
            head = produced.frame[: -len(suffix)] if produced.frame.endswith(suffix) else ""
            return bool(head) and "[" not in head
        if kind == NodeKind.NEXT_ITERATION:
            return produced.frame == frame and produced.iteration == iteration - 1
        return produced.frame == frame and produced.iteration == iteration

    def _tensor_name(self, node_index: int, output: int) -> str:
        node = self._nodes[node_index]
        if node.kind == NodeKind.ARG:
            return node.name  # the fed tensor
        return f"{node.tag.name}:{output}"

    def _debug_ops_of(self, node_name: str, output_slot: int) -> str:
        prefix = f"{node_name}:{output_slot}:"
        return ", ".join(key[len(prefix) :] for key in self._by_key if key.startswith(prefix))

    def _not_run(self, node_name: str) -> bool:
        return any(key.split(":", 1)[0] == node_name for key in self.watch_keys_not_run)

    def __repr__(self) -> str:
        return f"DebugDump({len(self._data)} values of {len(self._by_key)} watch keys)"


def _as_dump(dump_or_metadata: Any) -> DebugDump:
    if isinstance(dump_or_metadata, DebugDump):
        return dump_or_metadata
    dump = getattr(dump_or_metadata, "debug_dump", None)
    if isinstance(dump, DebugDump):
        return dump
    raise TypeError(
        f"Expected a DebugDump or a RunMetadata from a run that watched tensors, got "
        f"{dump_or_metadata!r}; pass options with debug_options (df.debug.watch_graph) and a "
        "run_metadata to Session.run."
    )
