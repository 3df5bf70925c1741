"""Shared by the plugins that check every ``Session.run`` of a test suite against a transformed
twin of its graph (``passes/passes_plugin.py``: graph passes; ``io/roundtrip_plugin.py``:
saving and loading), and by the tests that start the suites under them.

- `check_every_run` wraps ``Session.run`` so that a check sees each run a test makes, with the
  Session's state from before the run (`SessionState`), which `start_from` gives a twin;
- `unrepeatable` says which graphs cannot be run again with the same results;
- `run_suites` runs groups of test folders under a plugin, in parallel processes, and returns
  what the plugin reported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, Optional

import dataflow as df
from dataflow.session import Session

TESTS = os.path.dirname(os.path.abspath(__file__))
# Subprocesses run from here, where `executor` names the package and not a test folder.
REPOSITORY_ROOT = os.path.dirname(TESTS)


class SessionState(NamedTuple):
    """What a Session holds across runs: its variable values and its random streams."""

    variables: dict
    random_streams: tuple


def start_from(shadow: Session, state: SessionState) -> None:
    """Gives the fresh Session ``shadow`` the state another Session had before a run, so that
    the same run there computes the same values, random draws included."""
    shadow._variable_values.update(state.variables)
    shadow._random_streams.restore(state.random_streams)


def check_every_run(check: Callable) -> Callable:
    """Replaces ``Session.run`` so that after each run a test makes, ``check(session,
    before, fetches, feed_dict, options, results, error)`` is called: ``before`` is the
    Session's `SessionState` from before the run, ``results`` what it returned (None when it
    raised an `OpError`, which is ``error`` and is raised again after the check).  Runs made
    while a check runs, on its thread, are not checked.  Returns the original ``Session.run``,
    for the check's own runs."""
    original_run = Session.run
    state = threading.local()

    def checked(session, before, fetches, feed_dict, options, results, error) -> None:
        state.checking = True
        try:
            check(session, before, fetches, feed_dict, options, results, error)
        finally:
            state.checking = False

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        __tracebackhide__ = True  # errors name the test's line, not this wrapper's
        if getattr(state, "checking", False):
            return original_run(self, fetches, feed_dict, options, run_metadata)
        before = SessionState(dict(self._variable_values), self._random_streams.snapshot())
        try:
            results = original_run(self, fetches, feed_dict, options, run_metadata)
        except df.errors.OpError as error:
            checked(self, before, fetches, feed_dict, options, None, error)
            raise
        checked(self, before, fetches, feed_dict, options, results, None)
        return results

    Session.run = run
    return original_run


def unrepeatable(graph: df.Graph, op_types: frozenset = frozenset()) -> bool:
    """Whether runs of ``graph`` cannot be repeated in another Session with the same results:
    it holds an op of ``op_types`` or prints to a file.  (Random ops repeat: `start_from` gives
    the twin the Session's random streams.)"""
    for op in graph.get_operations():
        if op.type in op_types:
            return True
        stream = op.attrs.get("output_stream")
        if isinstance(stream, str) and stream.startswith("file://"):
            return True
    return False


def run_suites(
    plugin_file: str,
    groups: Sequence[Sequence[str]],
    report_variable: str,
    tmp_path,
    deselect: Sequence[str] = (),
    timeout: float = 600,
    env: Optional[dict] = None,
) -> list[str]:
    """Runs each group of test paths (relative to ``tests/``) in a pytest process of its own,
    all at once, with the plugin module ``plugin_file`` and without the tests ``deselect``
    names (node ids relative to ``tests/``); returns the report each process wrote to the file
    named by the environment variable ``report_variable``.  Fails with the end of a process's
    output when it fails.  ``env``: more environment variables for the processes."""
    plugin_folder, plugin_module = os.path.split(os.path.splitext(plugin_file)[0])
    path = os.pathsep.join([plugin_folder, TESTS, os.environ.get("PYTHONPATH", "")])
    jobs = []
    for i, group in enumerate(groups):
        report = tmp_path / f"report{i}.txt"
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", plugin_module]
        command += ["-p", "no:cacheprovider"]
        command += [os.path.join(TESTS, target) for target in group]
        for test in deselect:
            command += ["--deselect", "tests/" + test]
        process = subprocess.Popen(
            command,
            env=dict(os.environ, PYTHONPATH=path, **{report_variable: str(report)}, **(env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPOSITORY_ROOT,
        )
        jobs.append((report, process))
    reports = []
    for report, process in jobs:
        output, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0, output[-3000:]
        reports.append(report.read_text())
    return reports
