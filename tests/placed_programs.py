"""Random control-flow programs placed on devices by a device function: the check that a
placed run gives exactly the values of the plain-Python reference.

The programs and their reference are those of `tests/primitives/test_control_flow_properties.py`
(``programs``, ``evaluate``, ``build``); the tests of partitioned runs, in process and on Ray,
place their ops at random with ``device_of`` and run them in a Session of their own.

Every run of a partitioned program in the tests (devices in one process, tasks on Ray) has a
deadline, `STEP_TIMEOUT_MS` (`partitioned_config`, or the run's own options): such a step takes
milliseconds, and one whose ``_Send`` and ``_Recv`` never meet (a rendezvous key that lost its
frame) then fails its test with ``DeadlineExceededError`` naming the ops still waiting,
instead of hanging the suite.
"""

import importlib.util
import os

import numpy as np
from hypothesis import assume

import dataflow as df

# Far above what a partitioned step of the tests takes on a loaded two-core machine (tens of
# milliseconds; forced compilation happens before a run's clock starts), and far below the
# suite's per-test timeout (setup.cfg), so that a step that hangs fails its test by itself.
STEP_TIMEOUT_MS = 30_000


def partitioned_config(**fields) -> df.ConfigProto:
    """A ``ConfigProto`` with ``fields`` whose every run has the deadline `STEP_TIMEOUT_MS`
    (``operation_timeout_in_ms``; a run's own ``RunOptions.timeout_in_ms`` overrides it)."""
    return df.ConfigProto(operation_timeout_in_ms=STEP_TIMEOUT_MS, **fields)


def _load_control_flow_programs():
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "primitives", "test_control_flow_properties.py"
    )
    spec = importlib.util.spec_from_file_location("_control_flow_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


programs = _load_control_flow_programs()


def build_fed(program, x: float, n: int, through=None) -> tuple[dict, dict]:
    """``program`` built in the default graph on placeholders ``x`` and ``n`` (``through`` as
    in ``programs.build``): its fetches (by variable name) and the feed of ``x`` and ``n``."""
    xp = df.placeholder(df.float64, shape=[], name="x")
    np_ = df.placeholder(df.int32, shape=[], name="n")
    env = {
        "f0": xp,
        "f1": df.constant(1.0, dtype=df.float64),
        "i0": np_,
        "i1": df.constant(1, dtype=df.int32),
    }
    final = programs.build(program, env, {"x": xp, "n": np_}, 10, through)
    return {k: final[k] for k in programs.NAMES}, {xp: np.float64(x), np_: np.int32(n)}


def check_placed_program(
    program, x: float, n: int, device_of, make_session, through=None, steps: int = 1
) -> None:
    """Builds ``program`` with every op placed by ``device_of`` (``through`` as in
    ``programs.build``), runs it ``steps`` times in ``make_session()`` and checks each result
    against the reference (an example that overflows is skipped)."""
    start = {"f0": x, "f1": 1.0, "i0": n, "i1": 1}
    try:
        expected = programs.evaluate(program, start, {"x": x, "n": n})
    except programs.Overflow:
        assume(False)
    with df.Graph().as_default():
        with df.device(device_of):
            fetches, feed = build_fed(program, x, n, through)
        with make_session() as sess:
            for step in range(steps):
                result = sess.run(
                    fetches, feed, options=df.RunOptions(timeout_in_ms=STEP_TIMEOUT_MS)
                )
                for name in programs.NAMES:
                    assert result[name] == expected[name], (step, name, result, expected, program)
