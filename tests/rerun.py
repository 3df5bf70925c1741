"""Shared by the plugins that check every ``Session.run`` of a test suite against a transformed
twin of its graph (``passes/passes_plugin.py``: graph passes; ``io/roundtrip_plugin.py``:
saving and loading), and by the tests that start the suites under them.

- `check_every_run` wraps ``Session.run`` so that a check sees each run a test makes, with the
  Session's state from before the run (`SessionState`), which `start_from` gives a twin; runs
  of a test marked ``measures_its_runs`` are not checked, since the check's extra runs would
  add to what it counts or measures (a plugin imports `pytest_runtest_call` to know the test);
- `unrepeatable` says which graphs cannot be run again with the same results;
- `run_suites` runs groups of test folders under a plugin, in parallel processes, and returns
  what the plugin reported; a test that calls it is marked `reruns_the_suite`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple, Optional

import pytest

import dataflow as df
from dataflow.client.session import Session

TESTS = os.path.dirname(os.path.abspath(__file__))
# Subprocesses run from here, where `executor` names the package and not a test folder.
REPOSITORY_ROOT = os.path.dirname(TESTS)

# The time limit (pytest-timeout) of a test that calls `run_suites`, in place of the suite's
# limit per test (setup.cfg): its processes run hundreds of tests each (the passes' rerun took
# 260 s on a loaded two-core machine) and are stopped by `run_suites` after ``timeout``; each
# test inside them has the suite's limit.
reruns_the_suite = pytest.mark.timeout(1200)


class SessionState(NamedTuple):
    """What a Session holds across runs: its variable values and its random streams."""

    variables: dict
    random_streams: tuple


def start_from(shadow: Session, state: SessionState) -> None:
    """Gives the fresh Session ``shadow`` the state another Session had before a run, so that
    the same run there computes the same values, random draws included."""
    shadow._variable_values.update(state.variables)
    shadow._random_streams.restore(state.random_streams)


_current_test = {"measures_its_runs": False}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Notes whether the test about to run measures its runs (see the module docstring)."""
    _current_test["measures_its_runs"] = item.get_closest_marker("measures_its_runs") is not None
    try:
        yield
    finally:
        _current_test["measures_its_runs"] = False


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
        if getattr(state, "checking", False) or _current_test["measures_its_runs"]:
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


# Ops whose state lives in the Session beside the variables (a queue's elements, an
# iterator's or a reader's position), which `start_from` cannot give a twin: a twin's dequeue
# would wait on an empty queue, and its iterator would start again from the first element.
SESSION_STATE_TYPES = frozenset(
    {
        "FIFOQueueV2",
        "RandomShuffleQueueV2",
        "PaddingFIFOQueueV2",
        "PriorityQueueV2",
        "QueueEnqueueV2",
        "QueueDequeueV2",
        "QueueCloseV2",
        "QueueSizeV2",
        "QueueIsClosedV2",
        "IteratorV2",
        "MakeIterator",
        "IteratorGetNext",
        "IteratorGetNextAsOptional",
        "OneShotIteratorGetNext",
        "ReaderHandle",
        "ReaderReadV2",
        "ReaderReadUpToV2",
        "ReaderCountV2",
        "ReaderResetV2",
        "LearnedUnigramCandidateSampler",  # the class counts it has learned
        "HashTableV2",
        "MutableHashTableV2",
        "MutableDenseHashTableV2",
        "LookupTableFindV2",
        "LookupTableInsertV2",
        "LookupTableImportV2",
        "LookupTableRemoveV2",
        "LookupTableSizeV2",
        "LookupTableExportV2",
        "InitializeTableFromTextFileV2",
        "ResourceConditionalAccumulator",
        "ResourceSparseConditionalAccumulator",
        "ResourceAccumulatorApplyGradient",
        "SparseAccumulatorApplyGradient",
        "ResourceAccumulatorTakeGradient",
        "SparseAccumulatorTakeGradient",
        "ResourceAccumulatorNumAccumulated",
        "ResourceAccumulatorSetGlobalStep",
        "GetSessionHandle",
        "GetSessionTensor",
        "DeleteSessionTensor",
        "MutexV2",
        "MutexLock",
        "ConsumeMutexLock",
    }
)


# Ops whose value differs from run to run by nature (the time of the run).
NONDETERMINISTIC_TYPES = frozenset({"Timestamp"})


def unrepeatable(graph: df.Graph, op_types: frozenset = frozenset()) -> bool:
    """Whether runs of ``graph`` cannot be repeated in another Session with the same results:
    it holds an op of ``op_types`` or of `SESSION_STATE_TYPES`, or prints anywhere but to the
    standard streams (a file, or a stream object the test reads).  (Random ops repeat:
    `start_from` gives the twin the Session's random streams.)"""
    for op in graph.get_operations():
        if op.type in op_types or op.type in SESSION_STATE_TYPES:
            return True
        if op.type in NONDETERMINISTIC_TYPES:
            return True
        stream = op.attrs.get("output_stream")
        if stream is not None and not (
            isinstance(stream, str) and not stream.startswith("file://")
        ):
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
