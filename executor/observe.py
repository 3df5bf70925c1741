"""`RunObserver`: a hook that sees the values nodes produce, for debugging tools.

``Plan.run(..., observer=observer)`` calls ``observer.node_fired`` once per *live* firing of
each node in ``observer.nodes`` (every node when it is None), with the node's live outputs, the
frame instance and the iteration it fired in.  A run without an observer pays nothing for this:
it keeps the runner's fast dispatch tables (see ``runner``); a run with one goes through the
same general firing methods that statistics use.

Contract:

- ``node_fired`` is called after the node's kernel returned (for a control-flow node, after it
  fired) and before any consumer can see the outputs, so the values are exactly what the node
  produced.  The observer must copy whatever it keeps: once it returns, consumers may read and
  (a kernel that reuses its input's buffer) overwrite them.
- Calls are serialised: with a pool they are made with the run's lock held, without one on
  the only thread.  An observer needs no lock of its own, and must not block or run the plan.
- Dead firings are not reported (there is no value); an untaken branch leaves no call.
- ``frame`` describes the frame instance like `NodeRecord.frame` (``"root"``,
  ``"loop[iter 2 of root]"``); ``iteration`` is the iteration the node fired in.  An Enter fires
  in the frame around its loop, an Exit inside the loop, as the statistics record them.
- An exception raised by ``node_fired`` propagates out of ``Plan.run`` like an executor bug: the
  run stops.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Optional


class RunObserver:
    """Base class (and documentation) of the observer protocol; override `node_fired`."""

    #: Indices of the nodes whose firings are reported; None reports every node.
    nodes: Optional[Collection[int]] = None

    def node_fired(
        self,
        node_index: int,
        outputs: Sequence[tuple[int, Any]],
        frame: str,
        iteration: int,
    ) -> None:
        """One live firing: ``outputs`` holds ``(output_index, value)`` for each live output
        (a Switch has one, a Merge two, a node without outputs none)."""
