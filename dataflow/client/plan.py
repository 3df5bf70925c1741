"""The plan of a run: the lowered, analysed program for one graph version, set of fetches, set of
fed tensors and passes, with what the passes took out, where each op was placed, and its
compiled twin once it has one.  A Session keeps one per distinct run it was asked for."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Plan:
    """A lowered, analysed program for one (graph version, fetches, fed tensors, passes)."""

    executable: Any
    fetch_positions: list  # per flat fetch: index into the executor's results, or None for ops
    feed_tensors: tuple
    nodes: list
    # User's op name -> what the graph passes did to it, for the ops no node stands for.
    taken_out: dict
    # User's op name -> full device name, for every op the run needs (`distribute.placer`).
    placement: dict = field(default_factory=dict)
    # Compiled regions (`dataflow.client.compiler`): how often the plan ran interpreted, and its
    # compiled twin (None: not made yet; False: nothing to compile).  A twin has ``reference``,
    # the interpreted plan, and ``regions``.
    runs: int = 0
    compiled: Any = None
    reference: Any = None
    regions: list = field(default_factory=list)
    compile_lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)
