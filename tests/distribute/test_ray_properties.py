"""The property of issue 13 on Ray: random programs with loops and conds, their ops placed at
random on the tasks of a ps and two workers, give exactly the values of one device."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placed_programs import check_placed_program, partitioned_config, programs

import dataflow as df

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
    chooser = random.Random(seed)
    check_placed_program(
        program,
        x,
        n,
        lambda op: chooser.choice(TASKS),
        lambda: df.Session(cluster.target, config=partitioned_config()),
    )
