"""TensorFlow's v1 control-flow tests, run on dataflow through the shim (see README.md here).

TensorFlow's test file is not part of the project: set ``DATAFLOW_UPSTREAM_TESTS`` to the path
of a copy of ``control_flow_ops_py_test.py`` to run it.  Every test listed in
``expected_to_pass_here.json`` must pass, so a regression fails the suite.  The runner itself is
checked on a small file of the same form, which needs no copy.
"""

import json
import os
import textwrap
from pathlib import Path

import pytest
import run_upstream

HERE = Path(__file__).resolve().parent
UPSTREAM_FILE = os.environ.get("DATAFLOW_UPSTREAM_TESTS", "")


@pytest.mark.skipif(
    not os.path.isfile(UPSTREAM_FILE),
    reason="DATAFLOW_UPSTREAM_TESTS does not name a copy of TensorFlow's "
    "control_flow_ops_py_test.py",
)
@pytest.mark.timeout(run_upstream.RUN_TIMEOUT_S + 300)  # the whole file in a child process
def test_tensorflow_control_flow_tests_that_passed_here_still_pass():
    expected = json.loads((HERE / "expected_to_pass_here.json").read_text())
    results = run_upstream.run(UPSTREAM_FILE)
    regressions = {
        test: results.causes.get(test, results.outcomes.get(test, "not run"))
        for test in expected
        if test not in results.passed
    }
    assert not regressions, json.dumps(regressions, indent=1)


def test_expected_passes_are_tests_that_pass_on_tensorflow():
    expected = json.loads((HERE / "expected_to_pass_here.json").read_text())
    counted = run_upstream.counted_tensorflow_passes(run_upstream.tensorflow_record())
    assert sorted(expected) == expected
    assert set(expected) <= set(counted)


TF_STYLE_FILE = textwrap.dedent(
    '''\
    """A test file in TensorFlow's form."""

    import numpy as np

    from tensorflow.python.framework import constant_op
    from tensorflow.python.ops import cond as tf_cond
    # pylint: disable=unused-import
    from tensorflow.python.ops import math_ops
    from tensorflow.python.platform import test


    class SmallTest(test.TestCase):

      def testCondTakesTrueBranch(self):
        with self.cached_session():
          x = constant_op.constant(10)
          r = tf_cond.cond(math_ops.less(1, 2), lambda: x + 1, lambda: x - 1)
          self.assertAllEqual(np.int32(11), self.evaluate(r))

      def testNameDataflowLacks(self):
        math_ops.no_such_op_anywhere(1)

      def testFailingAssertion(self):
        self.assertAllEqual(1, constant_op.constant(2))


    if __name__ == "__main__":
      test.main()
    '''
)


def test_runner_replaces_only_the_import_block_and_keeps_line_numbers():
    replaced = run_upstream.with_shim_imports(TF_STYLE_FILE)
    original_lines, new_lines = TF_STYLE_FILE.splitlines(), replaced.splitlines()
    assert len(new_lines) == len(original_lines)
    changed = [i for i, (a, b) in enumerate(zip(original_lines, new_lines)) if a != b]
    assert new_lines[changed[0]] == run_upstream.SHIM_IMPORT
    assert all(original_lines[i].startswith(("import", "from", "#")) for i in changed)
    assert all(new_lines[i] == "" for i in changed[1:])


def test_runner_reports_each_outcome_and_groups_failures_by_cause(tmp_path):
    path = tmp_path / "small_py_test.py"
    path.write_text(TF_STYLE_FILE)
    results = run_upstream.run(str(path))
    assert results.outcomes == {
        "SmallTest.testCondTakesTrueBranch": "passed",
        "SmallTest.testNameDataflowLacks": "failed",
        "SmallTest.testFailingAssertion": "failed",
    }
    missing = results.causes["SmallTest.testNameDataflowLacks"]
    assert missing == "missing math_ops.no_such_op_anywhere"
    assert results.causes["SmallTest.testFailingAssertion"].startswith("AssertionError")
