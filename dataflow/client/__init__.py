"""The client: `Session` and the pipeline one ``Session.run`` goes through.

A run prunes the graph to what the fetches need, runs the graph passes, places each op on a
device (`placer`), lowers the graph into the executor's program, compiles the regions it can
(`compiler`), and executes the plan, feeding and fetching as asked (``docs/architecture.md``
follows one run from ``feed_dict`` to the executor and back).  Beside it: run options and
metadata (`step_stats`, `timeline`, `debug_options`, `debug_watcher`, `debug_dump`), the
device list (`device_lib`), ``df.config`` (`config`), and the random streams of a run
(`random_streams`).

Layer: client, above `passes`; it may import `executor`, the framework, ops, `primitives`,
`linalg`, autodiff and passes, never the front ends above it (eager, tracing, io, distribute,
training, render).  Those that need to run a graph do so through `Session`'s methods.

Invariants: a failed run leaves the Session usable and the variables' values as they were (a
run's writes are committed only when it succeeds); the interpreter is the reference, and a
compiled region gives the same values, deadness and errors.
"""
