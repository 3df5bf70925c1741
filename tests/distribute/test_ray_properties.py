"""The property of issue 13 on Ray: random programs with loops and conds, their ops placed at
random on the tasks of a ps and two workers, give exactly the values of one device."""

import importlib.util
import os
import random

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dataflow as df


def _load_control_flow_programs():
    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "primitives",
        "test_control_flow_properties.py",
    )
    spec = importlib.util.spec_from_file_location("_control_flow_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


programs = _load_control_flow_programs()
TASKS = ["/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"]


# A step on Ray costs milliseconds per task and a new graph a registration with each task:
# a dozen examples keep the suite's share to seconds.
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(
    program=programs.programs,
    x=st.floats(-4.0, 4.0, allow_nan=False),
    n=st.integers(-3, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_programs_placed_randomly_on_tasks_give_the_one_device_values(
    cluster, program, x, n, seed
):
    start = {"f0": x, "f1": 1.0, "i0": n, "i1": 1}
    try:
        expected = programs.evaluate(program, start, {"x": x, "n": n})
    except programs.Overflow:
        assume(False)
    chooser = random.Random(seed)
    with df.Graph().as_default():
        with df.device(lambda op: chooser.choice(TASKS)):
            xp = df.placeholder(df.float64, shape=[], name="x")
            np_ = df.placeholder(df.int32, shape=[], name="n")
            env = {
                "f0": xp,
                "f1": df.constant(1.0, dtype=df.float64),
                "i0": np_,
                "i1": df.constant(1, dtype=df.int32),
            }
            final = programs.build(program, env, {"x": xp, "n": np_}, 10)
        with df.Session(cluster.target) as sess:
            result = sess.run(
                {k: final[k] for k in programs.NAMES},
                {xp: np.float64(x), np_: np.int32(n)},
                options=df.RunOptions(timeout_in_ms=60_000),
            )
    for name in programs.NAMES:
        assert result[name] == expected[name], (name, result, expected, program)
