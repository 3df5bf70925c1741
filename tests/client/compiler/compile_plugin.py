"""A pytest plugin that runs a suite with compilation forced on and checks every run against
the interpreter.

With ``-p compile_plugin`` (``tests/client/compiler`` on ``sys.path``), every plan compiles every
region it can on its first run (`dataflow.client.compiler`, mode ``"force"``), so the suite's own
assertions hold for compiled runs; and each ``Session.run`` of the suite is repeated in a
fresh Session on the same graph, with the state from before the run (`rerun.start_from`) and
compilation off.  Results must be equal bit for bit, with the same types; a run that raises
must raise the same error class, naming the same op, interpreted.  Graphs with Python
functions or prints to files, runs stopped by a deadline and runs with statistics (which never
compile) are not repeated.  How many runs were checked is written to the file named by
``DATAFLOW_COMPILE_REPORT``.

Where numba is installed, regions and loops that may run natively are compiled with it at once
(`dataflow.client.compiler.native`, mode ``"force"``), unless ``DATAFLOW_NATIVE`` names a mode.
"""

from __future__ import annotations

import atexit
import contextlib
import io
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
from dataflow.client import compiler
from dataflow.client.session import Session
from dataflow.framework import nest

compiler.set_mode("force")
if "DATAFLOW_NATIVE" not in os.environ:
    compiler.set_native("force")
_checked = {"compiled runs": 0}
_SKIPPED_TYPES = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc", "EagerPyFuncGrad"})


def _interpreted(session, before, fetches, feed_dict, options):
    timeout = getattr(options, "timeout_in_ms", 0)
    rewrite = getattr(options, "rewrite_options", None)
    previous = compiler.set_mode("off")
    try:
        with Session(graph=session.graph, config=session._config) as shadow:
            start_from(shadow, before)
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                try:
                    return _original_run(
                        shadow,
                        fetches,
                        feed_dict,
                        options=df.RunOptions(timeout_in_ms=timeout, rewrite_options=rewrite),
                    ), None
                except df.errors.OpError as e:
                    return None, e
    finally:
        compiler.set_mode(previous)  # "force", or the mode the test chose


if "DATAFLOW_NATIVE" not in os.environ:
    compiler.set_native("force")


def _check(session, before, fetches, feed_dict, options, results, error) -> None:
    if (
        isinstance(error, df.errors.DeadlineExceededError)
        or getattr(options, "debug_options", None) is not None
        or unrepeatable(session.graph, _SKIPPED_TYPES)
        or session._master is not None
    ):
        return
    reference, reference_error = _interpreted(session, before, fetches, feed_dict, options)
    if reference_error is not None or error is not None:
        if type(reference_error) is not type(error) or (
            getattr(reference_error, "op", None) is not getattr(error, "op", None)
        ):
            raise AssertionError(f"compiled: {error!r}, interpreted: {reference_error!r}")
    else:
        for a, b in zip(nest.flatten(reference), nest.flatten(results)):
            if not same_bits(a, b):
                raise AssertionError(f"compiled gave {b!r} where interpreted gave {a!r}")
    _checked["compiled runs"] += 1


_original_run = check_every_run(_check)
settings.register_profile("compiled", max_examples=5, deadline=None)
settings.load_profile("compiled")


@atexit.register
def _report() -> None:
    report = os.environ.get("DATAFLOW_COMPILE_REPORT")
    if report:
        with open(report, "w") as f:
            f.write(f"{_checked['compiled runs']}\n")
