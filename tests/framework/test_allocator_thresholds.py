"""The allocator's thresholds (`dataflow.framework.memory`): set once at import on Linux, and
left alone when the environment says so."""

import os
import subprocess
import sys

import pytest

REPORT = "import dataflow, dataflow.framework.memory as m; print(m.applied)"


def applied_in_a_fresh_process(**environment) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "DATAFLOW_TUNE"))}
    env.update(environment)
    return subprocess.run(
        [sys.executable, "-c", REPORT], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_importing_dataflow_keeps_large_arrays_in_the_heap():
    assert applied_in_a_fresh_process() == (
        f"{{'mmap_threshold': {32 << 20}, 'trim_threshold': {128 << 20}}}"
    )


@pytest.mark.parametrize(
    "environment",
    [
        {"DATAFLOW_TUNE_MALLOC": "0"},
        {"MALLOC_TRIM_THRESHOLD_": "1000000"},
        {"MALLOC_MMAP_THRESHOLD_": "1000000"},
    ],
    ids=["turned off", "glibc's own trim setting", "glibc's own mmap setting"],
)
def test_the_environment_wins(environment):
    assert applied_in_a_fresh_process(**environment) == "None"
