"""``df.debug``: tools that take the pain out of debugging a static graph.

A static graph is built once and run many times, which is what lets the runtime analyse,
optimise and save it; the price is that a value exists only while the graph runs, so there is
nothing to ``print`` at the line that built it, and a failure happens far from that line.
These tools pay that price back, without rebuilding the graph:

- **Errors name your line.**  Every error of ``Session.run`` names the op, its type and the
  file:line that built it, and inside a loop the frame instance and iteration (nothing to
  call: it is how the Session reports errors).
- **Watching values.**  `watch_graph` / `add_debug_tensor_watch` (tfdbg's helpers) put
  watches into ``RunOptions.debug_options``; the run returns every watched value in
  ``run_metadata.debug_dump``, a `DebugDump` of `DebugTensorDatum` records, each labelled with
  its frame instance and iteration (`DebugDump.records` gives ``(frame, iteration, value)``).
- **The first nan or inf.**  `find_inf_or_nan` runs once and names the first op, in execution
  order, that produced a nan or an infinity, with its inputs; `has_inf_or_nan` is tfdbg's
  filter for `DebugDump.find`.
- **A timeline.**  `chrome_trace` (or TF1's ``Timeline(step_stats).
  generate_chrome_trace_format()``) turns ``RunMetadata`` into Trace Event JSON that
  ``chrome://tracing`` and Perfetto open: ops per thread, loop iterations per frame instance.
- **The picture of a run.**  ``df.render(fetches, path, run_metadata=metadata)`` draws the
  graph with what ran, what fired dead (untaken branches), each loop's iteration count and the
  time per op (`overlay`).

- **Compiled code.**  `compiled_source` shows the Python that the compiled regions of a plan
  run (`dataflow.client.compiler`), one line per op.  Runs that watch tensors or record statistics
  never use compiled regions, so each op has its own watch and record.

Watching and tracing cost nothing in runs that do not ask for them: the executor then keeps its
fast path (see ``executor.observe``).

Decisions (where TensorFlow 1.x offers a model, it is followed; these are the departures):

- Watched values come back in memory, in ``run_metadata.debug_dump``, instead of being written
  to ``debug_urls`` and read back with ``DebugDumpDir``: one run, one object, nothing on disk.
  A run that watches tensors therefore needs a ``run_metadata``.
- A value on an untaken branch is *absent* from the dump (its op did not run), not recorded as
  dead; the statistics (``run_metadata.dead_step_stats``) are where dead firings show.
- A run that watches tensors runs without graph passes (`dataflow.passes`) unless its
  ``RunOptions.rewrite_options`` choose some, so every tensor of the graph can be watched; the
  values are the same either way.  Statistics, traces and the overlay describe the run as it
  was: with the Session's passes on (the default), the ops a pass fused into one kernel or
  folded into a constant did not run under their own names (the kernel or the constant has the
  name of the last of them).  Each execution names the user's op it stands for
  (``NodeExecStats.original_op_name``), ``run_metadata.rewritten_ops`` says what happened to
  the others, and the overlay draws both; run with ``RewriterConfig(disable_meta_optimizer=
  True)`` to see every op run as written.
- A watched value is copied the moment its op produces it, before any consumer runs, so a
  kernel that later reuses the buffer in place cannot change what the dump holds.
- "First" nan or inf means first in execution order (see `numerics`).

Layer: debug, above render (it draws runs) and below compat; it may import every layer
below it.  The debug options a run carries and the dumps it returns belong to the client
(`dataflow.client.debug_options`, `debug_dump`, `debug_watcher`); this package offers them.
"""

from ..client.debug_dump import (
    DebugDump,
    DebugTensorDatum,
    TensorRecord,
    TensorSummary,
    has_inf_or_nan,
    summarize,
)
from ..client.debug_options import (
    DebugOptions,
    DebugTensorWatch,
    add_debug_tensor_watch,
    watch_graph,
)
from ..client.timeline import Timeline, chrome_trace
from ..render import overlay  # the run overlay lives with the pictures it paints on
from ..render.overlay import RunOverlay
from .compiled import compiled_source
from .numerics import InfOrNanReport, find_inf_or_nan, first_inf_or_nan

__all__ = [
    "compiled_source",
    "DebugDump",
    "DebugOptions",
    "DebugTensorDatum",
    "DebugTensorWatch",
    "InfOrNanReport",
    "RunOverlay",
    "TensorRecord",
    "TensorSummary",
    "Timeline",
    "add_debug_tensor_watch",
    "chrome_trace",
    "find_inf_or_nan",
    "first_inf_or_nan",
    "has_inf_or_nan",
    "summarize",
    "watch_graph",
]
