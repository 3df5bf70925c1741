"""Finding where a nan or an infinity was born: `find_inf_or_nan` and `first_inf_or_nan`.

A nan spreads: once one op produces it, everything downstream holds it too, and the fetched
result says nothing about where it came from.  The op to look at is the *first* one, in
execution order, whose output holds a nan or an infinity: its inputs were still finite (or it
is a constant, a variable read or a feed), so the problem is that op applied to those inputs.

`find_inf_or_nan` runs the fetches once, watching every tensor with ``"DebugNumericSummary"``
(a few numbers per value, so even a long loop stays cheap), and reports that op: its name,
type, the user's line that built it, the frame instance and iteration it ran in, and summaries
of its output and of the inputs it consumed.  `first_inf_or_nan` does the same on the dump of a
run you made yourself.

"First" is execution order: the order in which outputs were handed on.  Two independent ops
running at the same time on a thread pool are ordered by which finished first, and the
iterations of a loop with ``parallel_iterations > 1`` may run out of program order (a later
iteration's work can run before an earlier one's); build the loop with
``parallel_iterations=1`` to have "first" follow the program's order of iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..client.debug_dump import (
    DebugDump,
    DebugTensorDatum,
    TensorSummary,
    _as_dump,
    has_inf_or_nan,
    summarize,
)
from ..client.debug_options import watch_graph


@dataclass
class InfOrNanReport:
    """The first op of a run that produced a nan or an infinity (see the module docstring)."""

    op_name: str
    op_type: str
    output_slot: int
    location: str
    frame: str
    iteration: int
    output: TensorSummary
    inputs: list = field(default_factory=list)  # [(tensor name, TensorSummary or None)]
    fed: bool = False
    datum: Optional[DebugTensorDatum] = None
    run_error: Optional[BaseException] = None

    @property
    def tensor_name(self) -> str:
        return f"{self.op_name}:{self.output_slot}"

    @property
    def frame_name(self) -> str:
        return self.frame.split("[", 1)[0]

    def __str__(self) -> str:
        source = "fed to" if self.fed else "produced by"
        lines = [
            f"The first nan/inf of the run was {source} op '{self.op_name}' ({self.op_type}) "
            f"created at {self.location}",
        ]
        if self.frame != "root":
            lines.append(f"  in iteration {self.iteration} of frame instance {self.frame}")
        lines.append(f"  output {self.tensor_name}: {self.output}")
        if self.inputs:
            lines.append("  inputs:")
            width = max(len(name) for name, _ in self.inputs)
            for name, summary in self.inputs:
                text = "not watched" if summary is None else str(summary)
                lines.append(f"    {name.ljust(width)}  {text}")
        if self.run_error is not None:
            first_line = str(self.run_error).splitlines()[0] if str(self.run_error) else ""
            lines.append(f"  the run then failed: {type(self.run_error).__name__}: {first_line}")
        return "\n".join(lines)


def first_inf_or_nan(dump_or_run_metadata: Any) -> Optional[InfOrNanReport]:
    """The first value in a dump (or ``run_metadata.debug_dump``) that holds a nan or an
    infinity, as an `InfOrNanReport`; None when every watched value is finite."""
    dump = _as_dump(dump_or_run_metadata)
    found = dump.find(has_inf_or_nan, first_n=1)
    if not found:
        return None
    return _report(dump, found[0])


def find_inf_or_nan(session, fetches, feed_dict=None, options=None) -> Optional[InfOrNanReport]:
    """Runs ``fetches`` once, watching every tensor, and reports the first nan or infinity.

    ``options`` (a ``RunOptions``) may set a timeout; its own watches are kept and every
    tensor of the graph is added with ``"DebugNumericSummary"``.  Returns None when the run
    produced no nan or infinity.  When the run fails after producing one (a kernel that
    rejects nan, an ``Assert``), the report is returned with the error in ``run_error``; a
    run that fails before producing one raises its error.
    """
    from ..client.session import RunMetadata, RunOptions

    run_options = RunOptions(timeout_in_ms=getattr(options, "timeout_in_ms", 0))
    if options is not None and getattr(options, "debug_options", None) is not None:
        run_options.debug_options.debug_tensor_watch_opts.extend(
            options.debug_options.debug_tensor_watch_opts
        )
    watch_graph(run_options, session.graph, debug_ops="DebugNumericSummary")
    metadata = RunMetadata()
    try:
        session.run(fetches, feed_dict=feed_dict, options=run_options, run_metadata=metadata)
    except Exception as error:
        dump = getattr(metadata, "debug_dump", None)
        report = first_inf_or_nan(dump) if isinstance(dump, DebugDump) else None
        if report is None:
            raise
        report.run_error = error
        return report
    return first_inf_or_nan(metadata)


def _report(dump: DebugDump, datum: DebugTensorDatum) -> InfOrNanReport:
    value = datum.get_tensor()
    inputs = [
        (name, None if source is None else _summary_of(source))
        for name, source in dump.input_data(datum)
    ]
    return InfOrNanReport(
        op_name=datum.node_name,
        op_type=datum.op_type,
        output_slot=datum.output_slot,
        location=datum.location,
        frame=datum.frame,
        iteration=datum.iteration,
        output=value if isinstance(value, TensorSummary) else summarize(value),
        inputs=inputs,
        fed=datum.fed,
        datum=datum,
    )


def _summary_of(datum: DebugTensorDatum) -> TensorSummary:
    value = datum.get_tensor()
    return value if isinstance(value, TensorSummary) else summarize(value)
