"""The lowered program: the only thing the executor knows how to run.

A `Program` is a flat list of `Node`s. Node ``i`` is referred to everywhere by its index ``i``.
An edge is a pair ``(producer_index, output_index)``; a control edge is just a producer index.
Nothing here knows about graphs, ops, dtypes or Sessions: any front end that can express its
computation as nodes with kernels can be run (the tests build programs by hand).

Node kinds (see ``docs/control-flow-semantics.md`` for their firing rules):

- ``OP``: an ordinary kernel.  Called as ``kernel(*input_values)``, or
  ``kernel(context, *input_values)`` when ``wants_context`` is set (``context`` is the opaque
  object given to `execute`).  Returns its single output when ``num_outputs == 1``, otherwise a
  sequence of exactly ``num_outputs`` values.
- ``ARG``: a run-time argument (a fed value).  Has no inputs and no kernel; its single output is
  ``args[k]`` where ``k`` is its position in `Program.arg_nodes`.
- ``SWITCH``: inputs ``(data, pred)``; outputs ``output_false`` (0) and ``output_true`` (1).
- ``MERGE``: any number of data inputs; outputs ``output`` (0) and ``value_index`` (1).
- ``ENTER``: one data input; moves it into the child frame ``frame_name``.
- ``EXIT``: one data input; moves it to the parent frame.
- ``NEXT_ITERATION``: one data input; moves it to the next iteration of its frame.

Every kind may also have control inputs.

Four flags of an ``OP`` node serve kernels that talk to other runs (a partition's ``_Send``
and ``_Recv``, which meet at a rendezvous):

- ``fires_on_dead``: the kernel runs even when an input arrived dead; it gets `DEAD` in place
  of each dead data input, and the node's outputs and control edges are dead afterwards.
- ``blocking``: the kernel may wait for another run; it runs on a waiting thread of its own
  (never the run's driving thread, never the inter-op pool), so that the run goes on firing
  other nodes meanwhile and a run of any number of blocked kernels cannot starve a pool.
- ``asynchronous``: the kernel never waits; it is called with a completion callback ``done``
  before its other arguments, and its result is what it passes to ``done(result)`` (or the
  exception of ``done(error=exc)``), exactly once.  It may call ``done`` before it returns (the
  value was there: the run goes on inline, no thread is involved) or later from any thread (the
  run goes on meanwhile, and the completing thread only hands the outputs over).  This is how a
  ``_Recv`` waits for its value without a thread of its own, as TF's ``RecvAsync`` does.
- ``wants_frame``: the kernel gets, after the context, ``(frame instance, iteration)`` of the
  firing: the frame instance's description (``"root"``, ``"loop[iter 2 of root]"``) and the
  iteration number, which are equal in two runs of programs with the same frames.

A kernel of a node with any of these flags may return `DEAD` for an output: every output and
control edge of the node is then dead.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional


class NodeKind(enum.IntEnum):
    OP = 0
    ARG = 1
    SWITCH = 2
    MERGE = 3
    ENTER = 4
    EXIT = 5
    NEXT_ITERATION = 6


@dataclass
class Node:
    """One node of a lowered program.

    ``inline`` tells the scheduler where the kernel should run: ``True`` always on the thread
    that made it ready (cheap ops: scalars, shape queries, identities), ``False`` on the inter-op
    pool when one is given and other work could run meanwhile, ``None`` decide at run time from
    the kernel's measured time (`costs`: only a kernel that takes much longer than a hand-off
    to a pool thread leaves the thread, and only beside another such kernel).  ``tag`` is
    opaque to the executor: the front end stores what it needs to explain errors and statistics
    (for ``dataflow`` the ``Operation``).
    """

    name: str
    kind: NodeKind = NodeKind.OP
    kernel: Optional[Callable[..., Any]] = None
    inputs: Sequence[tuple[int, int]] = ()
    control_inputs: Sequence[int] = ()
    num_outputs: int = 1
    wants_context: bool = False
    inline: Optional[bool] = None
    # ENTER only:
    frame_name: Optional[str] = None
    is_constant: bool = False
    parallel_iterations: int = 10
    tag: Any = None
    # OP only (see the module docstring):
    fires_on_dead: bool = False
    blocking: bool = False
    wants_frame: bool = False
    asynchronous: bool = False


@dataclass
class Program:
    """A list of nodes, which of them take run-time arguments, and which outputs to return."""

    nodes: list[Node]
    arg_nodes: Sequence[int] = ()
    fetches: Sequence[tuple[int, int]] = ()
    # Nodes that must run (their kernels have effects) but whose outputs are not returned.
    targets: Sequence[int] = field(default_factory=tuple)
