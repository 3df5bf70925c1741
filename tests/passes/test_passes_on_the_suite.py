"""Every pass, on every program of the op, control-flow, session and gradient suites."""

import os

from rerun import reruns_the_suite, run_suites

from dataflow.passes import registered_passes

HERE = os.path.dirname(os.path.abspath(__file__))


@reruns_the_suite
def test_every_pass_gives_bitwise_identical_results_on_the_programs_of_the_suites(tmp_path):
    """Reruns the suites with each Session.run repeated with every pass off, and with one pass
    alone (the passes taking turns), and compares with the default pipeline bit for bit (see
    passes_plugin.py)."""
    reports = run_suites(
        os.path.join(HERE, "passes_plugin.py"),
        # Two processes of about equal length, one per core.
        [["ops", "autodiff"], ["primitives", "client/test_session.py", "framework/test_graph.py"]],
        "DATAFLOW_PASSES_REPORT",
        tmp_path,
        # It runs every pass alone on its own programs already: under the plugin, again per run.
        deselect=(
            "autodiff/test_gradients_under_passes.py::"
            "test_every_pass_alone_all_passes_and_none_give_the_same_gradients",
        ),
    )
    checked: dict[str, int] = {}
    for report in reports:
        for line in report.splitlines():
            name, count = line.rsplit(" ", 1)
            checked[name] = checked.get(name, 0) + int(count)
    assert checked["default pipeline"] > 1000, checked
    for name in registered_passes():
        assert checked.get(name, 0) > 100, f"pass {name} was checked on too few runs: {checked}"
