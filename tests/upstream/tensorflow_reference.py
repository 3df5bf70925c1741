"""Runs TensorFlow's control-flow test file on TensorFlow, in TF1 graph mode with control flow v1.

Usage (with a Python that has TensorFlow 2.x installed, never the project's)::

    python tests/upstream/tensorflow_reference.py PATH/control_flow_ops_py_test.py OUT.json

The file is imported unchanged. Before it is imported, TensorFlow's v2 behaviour is switched off
(``v2_compat.disable_v2_behavior``: graph mode, TF1 variables, control flow v1), which is what
``test_util``'s decorators read: ``with_control_flow_v2`` then adds a ``...WithControlFlowV2``
copy beside each test (left out here: those run control flow v2), ``run_v1_only`` and
``run_deprecated_v1`` run the test, and an undecorated test builds a TF1 graph. Each test of the
file's ``TestCase`` classes runs under ``unittest``; the outcome of each (pass, fail, error,
skip) is written to OUT.json with the reason of a failure or skip, and the tests
that need a GPU (``run_gpu_only``, skipped on a CPU build) or XLA (they build in an
``XLAControlFlowContext``) are listed apart, since they are not expected to pass on dataflow.

This script is the record of how ``tensorflow_passes.json`` was made; the suite never runs it.
"""

import importlib.util
import inspect
import json
import os
import re
import sys
import unittest


def _load_in_tf1_mode(path):
    from tensorflow.python.compat import v2_compat

    v2_compat.disable_v2_behavior()
    spec = importlib.util.spec_from_file_location("control_flow_ops_py_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _needs_xla(test_method):
    try:
        source = inspect.getsource(test_method)
    except (OSError, TypeError):
        return False
    return "XLAControlFlowContext" in source


class _Outcomes(unittest.TestResult):
    """Keeps one outcome per test id: pass, fail, error or skip (with its reason)."""

    def __init__(self):
        super().__init__()
        self.outcomes = {}

    def addSuccess(self, test):
        self.outcomes[test.id()] = ("pass", "")

    def addFailure(self, test, err):
        self.outcomes[test.id()] = ("fail", self._exc_info_to_string(err, test)[-400:])

    def addError(self, test, err):
        self.outcomes[test.id()] = ("error", self._exc_info_to_string(err, test)[-400:])

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = ("skip", reason)

    def addExpectedFailure(self, test, err):
        self.outcomes[test.id()] = ("fail", "expected failure")

    def addUnexpectedSuccess(self, test):
        self.outcomes[test.id()] = ("pass", "")


def main(path, out_path):
    module = _load_in_tf1_mode(path)
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    xla = []
    for name, cls in vars(module).items():
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        for method in loader.getTestCaseNames(cls):
            if method.endswith("WithControlFlowV2") or method == "test_session":
                continue
            suite.addTest(cls(method))
            if _needs_xla(getattr(cls, method)):
                xla.append(f"{name}.{method}")
    result = _Outcomes()
    suite.run(result)
    # Ids as pytest names the tests: Class.method, without absl's "(parameters)" suffix.
    outcomes = {
        re.sub(r" \(.*\)$", "", key.split(".", 1)[1]): value
        for key, value in result.outcomes.items()
    }
    gpu = sorted(
        test for test, (outcome, why) in outcomes.items() if outcome == "skip" and "GPU" in why
    )
    import tensorflow as tf

    record = {
        "made_with": f"TensorFlow {tf.__version__}: python tensorflow_reference.py "
        + " ".join(os.path.basename(arg) for arg in sys.argv[1:]),
        "passes": sorted(test for test, (outcome, _) in outcomes.items() if outcome == "pass"),
        "needs_gpu": gpu,
        "needs_xla": sorted(xla),
        "not_passing": {
            test: f"{outcome}: {reason.strip().splitlines()[-1] if reason.strip() else ''}"
            for test, (outcome, reason) in sorted(outcomes.items())
            if outcome != "pass"
        },
    }
    with open(out_path, "w") as out:
        json.dump(record, out, indent=1, sort_keys=True)
        out.write("\n")
    print(f"{len(record['passes'])} of {len(outcomes)} pass on TensorFlow; written to {out_path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
