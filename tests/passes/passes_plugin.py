"""A pytest plugin that checks every graph pass on every program a test suite runs.

With ``-p passes_plugin`` (``tests/passes`` on ``sys.path``), each ``Session.run`` of the suite
(which runs the Session's default pipeline) is repeated in fresh Sessions on the same graph,
holding the variable values and random streams from before the run (`rerun.start_from`), with:

- every pass off (``disable_meta_optimizer``): the reference;
- one pass alone (``optimizers=[name]``), taking the registered passes in turn from one run to
  the next, or all of them on every run with ``DATAFLOW_PASSES_PLUGIN=all``.

Results must be equal bit for bit, with the same types; a run that raises must raise the same
error class with the pipeline off.  Graphs with Python functions (a test may count their
calls) or prints to files are skipped, and so are runs stopped by a deadline and runs whose
options choose the passes.  How many runs each
pass was checked on is written to the file named by ``DATAFLOW_PASSES_REPORT``.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import itertools
import os

from bitwise import same_bits
from hypothesis import settings
from rerun import (
    check_every_run,
    pytest_runtest_call,  # noqa: F401 - the hook that sees marked tests
    start_from,
    unrepeatable,
)

import dataflow as df
from dataflow.client.session import Session
from dataflow.framework import nest
from dataflow.passes import RewriterConfig, registered_passes

_checked: dict[str, int] = {}
_turn = itertools.count()
_ALL = os.environ.get("DATAFLOW_PASSES_PLUGIN") == "all"
# Python functions are skipped too: a test may count their calls.
_SKIPPED_TYPES = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc", "EagerPyFuncGrad"})


def _run_with(session, before, rewrite, fetches, feed_dict, options):
    # The Session's own options (its devices, placement, threads), with the passes replaced.
    config = dataclasses.replace(
        session._config, graph_options=df.passes.GraphOptions(rewrite_options=rewrite)
    )
    timeout = getattr(options, "timeout_in_ms", 0)
    with Session(graph=session.graph, config=config) as shadow:
        start_from(shadow, before)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                return _original_run(
                    shadow, fetches, feed_dict, options=df.RunOptions(timeout_in_ms=timeout)
                ), None
            except df.errors.OpError as e:
                return None, e


def _check(session, before, fetches, feed_dict, options, results, error) -> None:
    if (
        getattr(options, "rewrite_options", None) is not None  # the test chose the passes
        or isinstance(error, df.errors.DeadlineExceededError)
        or unrepeatable(session.graph, _SKIPPED_TYPES)
        or session.sess_str  # a cluster's state lives on its tasks, shared with any twin
    ):
        return
    reference, reference_error = _run_with(
        session, before, RewriterConfig(disable_meta_optimizer=True), fetches, feed_dict, options
    )
    passes = registered_passes()
    names = passes if _ALL else [passes[next(_turn) % len(passes)]]
    candidates = [("default pipeline", results, error)]
    for name in names:
        candidates.append(
            (
                name,
                *_run_with(
                    session,
                    before,
                    RewriterConfig(optimizers=[name]),
                    fetches,
                    feed_dict,
                    options,
                ),
            )
        )
    for name, got, got_error in candidates:
        if reference_error is not None or got_error is not None:
            if type(reference_error) is not type(got_error):
                raise AssertionError(
                    f"with {name}: error {got_error!r} instead of {reference_error!r}"
                )
            continue
        for a, b in zip(nest.flatten(reference), nest.flatten(got)):
            if not same_bits(a, b):
                raise AssertionError(f"with {name}: got {b!r} instead of {a!r}")
        _checked[name] = _checked.get(name, 0) + 1


_original_run = check_every_run(_check)
# The programs matter here, not many random inputs to each.
settings.register_profile("passes", max_examples=5, deadline=None)
settings.load_profile("passes")


@atexit.register
def _report() -> None:
    report = os.environ.get("DATAFLOW_PASSES_REPORT")
    if report:
        with open(report, "w") as f:
            f.write("".join(f"{name} {count}\n" for name, count in sorted(_checked.items())))
