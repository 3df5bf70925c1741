"""Compiled regions on the programs of the op, control-flow and session suites."""

import os

from rerun import reruns_the_suite, run_suites

HERE = os.path.dirname(os.path.abspath(__file__))


@reruns_the_suite
def test_compiled_runs_give_the_interpreters_results_on_the_programs_of_the_suites(tmp_path):
    """Reruns a representative part of the suite with every region compiled, each run checked
    bit for bit (errors by class and op) against the same run interpreted (compile_plugin.py)."""
    reports = run_suites(
        os.path.join(HERE, "compile_plugin.py"),
        [
            ["ops/test_math_ops.py", "ops/test_array_ops.py", "client/test_session.py"],
            ["primitives", "debug/test_run_error_locations.py"],
        ],
        "DATAFLOW_COMPILE_REPORT",
        tmp_path,
        env={"DATAFLOW_NATIVE": "off"},  # the Python tier; test_native.py checks the native one
    )
    assert sum(int(report) for report in reports) > 500, reports
