"""Runs a TensorFlow test file on dataflow, with only its import block changed, and counts.

Usage::

    python tests/upstream/run_upstream.py PATH/control_flow_ops_py_test.py [--json OUT] [-k EXPR]

The file's import block (the run of import statements at its top) is replaced by one line,
``from tf_shim import *``, padded with blank lines so that every other line keeps its number;
nothing else is changed.  The copy is run by pytest in a child process (with ``-k EXPR`` when
given), and the outcome of each test is compared with ``tensorflow_passes.json``, the tests that
pass on TensorFlow in TF1 graph mode with control flow v1.  It prints how many of those pass
here, and the failures grouped by their cause: the first name dataflow is missing
(``missing array_ops.foo``) or else the error's type and first line.  ``--json`` writes each
test's outcome and cause, which ``test_upstream_control_flow.py`` reads.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM_IMPORT = "from tf_shim import *  # noqa: F401, F403"
# A whole run of the control-flow file takes about a minute; a hang is stopped well after.
RUN_TIMEOUT_S = 1800


@dataclass
class Results:
    """Each test's outcome (``passed``/``failed``/``skipped``) and, for a failure, its cause."""

    outcomes: dict = field(default_factory=dict)
    causes: dict = field(default_factory=dict)

    @property
    def passed(self) -> set:
        return {test for test, outcome in self.outcomes.items() if outcome == "passed"}


def import_block_lines(source: str) -> tuple[int, int]:
    """The first and last line (1-based) of the run of imports at the top of ``source``."""
    body = ast.parse(source).body
    has_docstring = bool(body) and isinstance(body[0], ast.Expr)
    imports = []
    for statement in body[1 if has_docstring else 0 :]:
        if not isinstance(statement, (ast.Import, ast.ImportFrom)):
            break
        imports.append(statement)
    if not imports:
        raise ValueError("the file has no import block at its top")
    return imports[0].lineno, imports[-1].end_lineno


def with_shim_imports(source: str) -> str:
    """``source`` with its import block replaced by the shim's import, line numbers kept."""
    first, last = import_block_lines(source)
    lines = source.splitlines(keepends=True)
    replaced = [SHIM_IMPORT + "\n"] + ["\n"] * (last - first)
    return "".join(lines[: first - 1] + replaced + lines[last:])


_MISSING_ATTRIBUTE = re.compile(r"module '(?:[\w.]*\.)?(\w+)' has no attribute '(\w+)'")
_MISSING_NAME = re.compile(r"name '(\w+)' is not defined")


def cause_of(message: str) -> str:
    """A failure's cause, in a form shared by the tests that fail for the same reason."""
    missing = _MISSING_ATTRIBUTE.search(message)
    if missing:
        return f"missing {missing.group(1)}.{missing.group(2)}"
    missing = _MISSING_NAME.search(message)
    if missing:
        return f"missing {missing.group(1)}"
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    return first_line[:160]


def run(path: str, keyword: str = "") -> Results:
    """Runs the test file at ``path`` on dataflow through the shim; each test's outcome."""
    source = Path(path).read_text()
    with tempfile.TemporaryDirectory(prefix="dataflow-upstream-") as work:
        work = Path(work)
        (work / Path(path).name).write_text(with_shim_imports(source))
        (work / "pytest.ini").write_text("[pytest]\npython_files = *.py\n")
        report = work / "report.xml"
        command = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            f"--junitxml={report}", "-o", "junit_family=xunit1", Path(path).name,
        ]  # fmt: skip
        if keyword:
            command += ["-k", keyword]
        path_entries = [str(HERE), os.environ.get("PYTHONPATH", "")]
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(path_entries))
        completed = subprocess.run(
            command, cwd=work, env=environment, capture_output=True, text=True,
            timeout=RUN_TIMEOUT_S,
        )  # fmt: skip
        if not report.exists():
            raise RuntimeError(f"pytest wrote no report:\n{completed.stdout}\n{completed.stderr}")
        return _read_report(report)


def _read_report(report: Path) -> Results:
    results = Results()
    for case in ElementTree.parse(report).iter("testcase"):
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        if not case.get("classname"):
            raise RuntimeError(f"the test file could not be collected:\n{problem.text}")
        test = f"{case.get('classname').rsplit('.', 1)[-1]}.{case.get('name')}"
        if problem is not None:
            results.outcomes[test] = "failed"
            results.causes[test] = cause_of(problem.get("message") or problem.text or "")
        elif any(child.tag == "skipped" for child in case):
            results.outcomes[test] = "skipped"
        else:
            results.outcomes[test] = "passed"
    return results


def tensorflow_record() -> dict:
    return json.loads((HERE / "tensorflow_passes.json").read_text())


def counted_tensorflow_passes(record: dict) -> list:
    """The tests that pass on TensorFlow and are expected here: all but those needing XLA."""
    return sorted(set(record["passes"]) - set(record["needs_xla"]))


def summary(results: Results, record: dict, selected: bool = False) -> str:
    """The counts and the failures by cause; ``selected``: only the tests that ran count."""
    counted = counted_tensorflow_passes(record)
    if selected:
        counted = [test for test in counted if test in results.outcomes]
    passing_here = [test for test in counted if test in results.passed]
    lines = [
        f"TensorFlow passes {len(record['passes'])} tests in TF1 graph mode with control flow v1 "
        f"({len(record['needs_xla'])} of them need XLA and are not counted; "
        f"{len(record['needs_gpu'])} more need a GPU and were skipped there).",
        f"Here: {len(passing_here)} of {len(counted)} pass.",
    ]
    groups = collections.defaultdict(list)
    for test in counted:
        if test not in results.passed:
            cause = results.causes.get(test) or results.outcomes.get(test, "not run")
            groups[cause].append(test)
    if groups:
        lines.append("")
        lines.append("Failing, grouped by cause:")
        for cause, tests in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
            lines.append(f"  {len(tests):3d}  {cause}")
            lines.extend(f"         {test}" for test in tests)
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="TensorFlow's test file, e.g. control_flow_ops_py_test.py")
    parser.add_argument("--json", help="write each test's outcome and cause to this file")
    parser.add_argument("-k", dest="keyword", default="", help="run only tests matching EXPR")
    args = parser.parse_args(argv)
    results = run(args.path, args.keyword)
    print(summary(results, tensorflow_record(), selected=bool(args.keyword)))
    if args.json:
        record = {"outcomes": results.outcomes, "causes": results.causes}
        Path(args.json).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
