"""Every pass, on every program of the op, control-flow, session and gradient suites."""

import os
import subprocess
import sys

from dataflow.passes import registered_passes

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPOSITORY_ROOT = os.path.dirname(TESTS)
# Tests that count kernel calls, which the plugin's extra runs multiply.
COUNTING_KERNEL_CALLS = [
    "autodiff/test_loop_gradients.py::test_a_thousand_iterations_save_only_what_the_backward_ops_read"
]


def test_every_pass_gives_bitwise_identical_results_on_the_programs_of_the_suites(tmp_path):
    """Reruns the suites with each Session.run repeated with every pass off, and with one pass
    alone (the passes taking turns), and compares with the default pipeline bit for bit (see
    passes_plugin.py)."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([HERE, TESTS, os.environ.get("PYTHONPATH", "")])
    )
    jobs = []
    for i, targets in enumerate(
        [["ops"], ["primitives", "autodiff", "test_session.py", "test_graph.py"]]
    ):
        report = tmp_path / f"report{i}.txt"
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "passes_plugin"]
        command += ["-p", "no:cacheprovider", *[os.path.join(TESTS, t) for t in targets]]
        for test in COUNTING_KERNEL_CALLS:
            command += ["--deselect", "tests/" + test]
        process = subprocess.Popen(
            command,
            env=dict(env, DATAFLOW_PASSES_REPORT=str(report)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPOSITORY_ROOT,
        )
        jobs.append((report, process))
    checked: dict[str, int] = {}
    for report, process in jobs:
        output, _ = process.communicate(timeout=600)
        assert process.returncode == 0, output[-3000:]
        for line in report.read_text().splitlines():
            name, count = line.rsplit(" ", 1)
            checked[name] = checked.get(name, 0) + int(count)
    assert checked["default pipeline"] > 1000, checked
    for name in registered_passes():
        assert checked.get(name, 0) > 100, f"pass {name} was checked on too few runs: {checked}"
