"""ONNX's conformance tests run through dataflow's ONNX backend, beside onnxruntime.

    python benchmarks/onnx_conformance.py                 # every node case and light model
    python benchmarks/onnx_conformance.py --op Conv --op Gemm --failures 20
    python benchmarks/onnx_conformance.py --no-light      # node cases only
    python benchmarks/onnx_conformance.py --light-only    # the nine real models only

The cases are the ones the ``onnx`` package ships: the node test cases its
``onnx/backend/test/case/node/`` modules generate (each a small model with its inputs and expected
outputs, ``onnx.backend.test.case.node.collect_testcases``) and the light real models of
``onnx/backend/test/data/light/`` (AlexNet, DenseNet-121, Inception v1 and v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), fed as ONNX's test runner feeds them (``arange``
over the input's size, divided by it) and compared with the ``light_*_output_0.pb`` stored beside
them, with the tolerances of ``onnx.backend.test.case.model``.

Each case runs through `dataflow.io.onnx.backend` and, when ``onnxruntime`` is installed,
through onnxruntime in the same process, compared with the same tolerances as ONNX's runner
(``assert_allclose`` with the case's rtol/atol; NaN equals NaN).  The script prints the count
passed per op type and in total beside onnxruntime's, the share of the cases onnxruntime passes
that dataflow passes too, and dataflow's failures grouped by cause:

- unsupported op: the import names op types dataflow cannot build (the whole list, honestly);
- import error: the model was refused or could not be built for another reason;
- run error: it was built but the run failed;
- wrong values: it ran and a value differs from the expected output.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import onnx  # noqa: E402
import onnx.backend.test.case.model as model_cases  # noqa: E402
import onnx.backend.test.case.node as node_cases  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from dataflow.io.onnx import OnnxImportError  # noqa: E402
from dataflow.io.onnx.backend import DataflowBackend  # noqa: E402

try:
    import onnxruntime
except ImportError:  # the comparison column is left out
    onnxruntime = None

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


# -- the cases -------------------------------------------------------------------------------------


class Case:
    """One model with its inputs, expected outputs and tolerances."""

    def __init__(self, name, op_type, model, data_sets, rtol, atol):
        self.name, self.op_type, self.model = name, op_type, model
        self.data_sets, self.rtol, self.atol = data_sets, rtol, atol


def _op_names():
    names = {schema.name for schema in onnx.defs.get_all_schemas_with_history()}
    return sorted(names, key=len, reverse=True)


def _op_type_of(test_name: str, model, op_names) -> str:
    """The op type a node case tests: the longest op name its test name starts with (ONNX names
    cases ``test_<op>_<variant>``, the op in lower case, with or without underscores)."""
    plain = test_name[len("test_") :].replace("_", "").lower()
    for name in op_names:
        if plain.startswith(name.lower()):
            return name
    return model.graph.node[-1].op_type if model.graph.node else "?"


def _array(value):
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value


def node_test_cases(only_ops):
    op_names = _op_names()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collected = node_cases.collect_testcases()
    cases = []
    for test in collected:
        op_type = _op_type_of(test.name, test.model, op_names)
        if only_ops and op_type not in only_ops:
            continue
        data_sets = [
            ([_array(v) for v in inputs], [_array(v) for v in outputs])
            for inputs, outputs in test.data_sets
        ]
        cases.append(Case(test.name, op_type, test.model, data_sets, test.rtol, test.atol))
    return cases


def light_model_cases():
    tolerances = {}
    for test in model_cases.collect_testcases():
        if test.url and test.url.startswith("onnx/backend/test/data/light/"):
            tolerances[test.model_name] = (test.name, test.rtol, test.atol)
    cases = []
    for model_name, (test_name, rtol, atol) in sorted(tolerances.items()):
        path = os.path.join(LIGHT_DIR, f"light_{model_name}.onnx")
        model = onnx.load(path)
        initializers = {t.name for t in model.graph.initializer}
        inputs = []
        for value_info in model.graph.input:
            if value_info.name in initializers:
                continue
            shape = tuple(
                d.dim_value if d.HasField("dim_value") else 1
                for d in value_info.type.tensor_type.shape.dim
            )
            count = int(np.prod(shape))
            inputs.append((np.arange(count).reshape(shape) / count).astype(np.float32))
        outputs = [
            numpy_helper.to_array(
                onnx.load_tensor(os.path.join(LIGHT_DIR, f"light_{model_name}_output_{i}.pb"))
            )
            for i in range(len(model.graph.output))
        ]
        cases.append(Case(test_name, f"light:{model_name}", model, [(inputs, outputs)], rtol, atol))
    return cases


# -- running and comparing -------------------------------------------------------------------------


def _same(expected, actual, rtol, atol) -> str:
    """ "" when ``actual`` matches ``expected`` as ONNX's runner requires, else why not."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype == object or actual.dtype == object:
        if expected.shape != actual.shape or not all(
            (e.decode() if isinstance(e, bytes) else e)
            == (a.decode() if isinstance(a, bytes) else a)
            for e, a in zip(expected.ravel(), actual.ravel())
        ):
            return "strings differ"
        return ""
    if expected.shape != actual.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype != actual.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    try:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError:
        if expected.dtype.kind in "fc":
            worst = np.nanmax(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
            return f"largest difference {worst:.3g}"
        return "values differ"
    return ""


def _check(case, run_one):
    """``(cause, message)`` of running every data set of ``case`` with ``run_one(inputs)``:
    cause None when it passes."""
    for inputs, expected in case.data_sets:
        outputs = run_one(inputs)
        if len(outputs) != len(expected):
            return "wrong values", f"{len(outputs)} outputs, expected {len(expected)}"
        for index, (e, a) in enumerate(zip(expected, outputs)):
            why = _same(e, a, case.rtol, case.atol)
            if why:
                return "wrong values", f"output {index}: {why}"
    return None, ""


def run_dataflow(case):
    try:
        rep = DataflowBackend.prepare(case.model)
    except OnnxImportError as e:
        cause = "unsupported op" if "cannot build" in str(e) else "import error"
        return cause, str(e)
    except Exception as e:
        return "import error", f"{type(e).__name__}: {e}"
    try:
        return _check(case, lambda inputs: list(rep.run(inputs)))
    except Exception as e:
        return "run error", f"{type(e).__name__}: {e}"
    finally:
        rep.close()


def run_onnxruntime(case):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    try:
        session = onnxruntime.InferenceSession(
            case.model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as e:
        return "import error", f"{type(e).__name__}: {e}"
    names = [i.name for i in session.get_inputs()]

    def run_one(inputs):
        return session.run(None, dict(zip(names, inputs)))

    try:
        return _check(case, run_one)
    except Exception as e:
        return "run error", f"{type(e).__name__}: {e}"


def softmax_inputs(case):
    """For a light model: the values its final Softmax normalizes, from dataflow and from
    onnxruntime (None without it), to tell a wrong value from a tie broken differently."""
    softmax = [n for n in case.model.graph.node if n.op_type == "Softmax"]
    if not softmax:
        return None, None
    name = softmax[-1].input[0]
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    inputs = case.data_sets[0][0]
    rep = DataflowBackend.prepare(model)
    try:
        ours = list(rep.run(inputs))[-1]
    finally:
        rep.close()
    theirs = None
    if onnxruntime is not None:
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        names = [i.name for i in session.get_inputs()]
        theirs = session.run(None, dict(zip(names, inputs)))[-1]
    return ours, theirs


def _unsupported_types(message: str) -> list:
    return re.findall(r"(?:: |; )([A-Za-z0-9]+)(?: of domain '[^']*')? \(", message)


# -- the report ------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", action="append", help="only the cases of this op type")
    parser.add_argument("--no-light", action="store_true", help="leave out the light models")
    parser.add_argument("--light-only", action="store_true", help="only the light models")
    parser.add_argument("--no-ort", action="store_true", help="leave out onnxruntime")
    parser.add_argument("--failures", type=int, default=5, help="cases listed per cause and op")
    parser.add_argument(
        "--ort-passed",
        action="store_true",
        help="list only the failures of cases onnxruntime passes",
    )
    args = parser.parse_args(argv)
    with_ort = onnxruntime is not None and not args.no_ort

    started = time.time()
    cases = [] if args.light_only else node_test_cases(set(args.op or []))
    if args.light_only or (not args.no_light and not args.op):
        cases += light_model_cases()
    print(
        f"onnx {onnx.__version__}; onnxruntime "
        f"{onnxruntime.__version__ if with_ort else 'not run'}; {len(cases)} cases"
    )

    results = []  # (case, dataflow (cause, message), onnxruntime (cause, message) or None)
    for number, case in enumerate(cases, 1):
        ours = run_dataflow(case)
        theirs = run_onnxruntime(case) if with_ort else None
        results.append((case, ours, theirs))
        if number % 200 == 0:
            print(f"  ... {number} cases, {time.time() - started:.0f} s", file=sys.stderr)

    by_op = collections.defaultdict(lambda: [0, 0, 0])
    for case, ours, theirs in results:
        row = by_op[case.op_type]
        row[0] += 1
        row[1] += ours[0] is None
        row[2] += theirs is not None and theirs[0] is None
    print(f"\n{'op type':32} {'cases':>5} {'dataflow':>8} {'onnxruntime':>11}")
    for op_type in sorted(by_op):
        total, ours, theirs = by_op[op_type]
        ort_text = f"{theirs:11d}" if with_ort else f"{'-':>11}"
        print(f"{op_type:32} {total:5d} {ours:8d} {ort_text}")

    total = len(results)
    passed = sum(ours[0] is None for _, ours, _ in results)
    print(
        f"\n{'total':32} {total:5d} {passed:8d} "
        + (f"{sum(t is not None and t[0] is None for *_, t in results):11d}" if with_ort else "")
    )
    node_results = [r for r in results if not r[0].op_type.startswith("light:")]
    light_results = [r for r in results if r[0].op_type.startswith("light:")]
    if with_ort:
        ort_passed = [r for r in node_results if r[2][0] is None]
        both = sum(r[1][0] is None for r in ort_passed)
        share = 100.0 * both / max(len(ort_passed), 1)
        print(
            f"node cases onnxruntime passes: {len(ort_passed)}; dataflow passes {both} of them "
            f"({share:.1f}%); dataflow passes {sum(r[1][0] is None for r in node_results)} "
            f"of all {len(node_results)} node cases"
        )
    if light_results:
        light_passed = sum(r[1][0] is None for r in light_results)
        print(
            f"light models matching their expected outputs: {light_passed} of {len(light_results)}"
        )
        for case, ours, _ in light_results:
            if ours[0] != "wrong values":
                continue
            # The light models hold constant weights, so their logits are all equal in exact
            # arithmetic; print how far the softmax's inputs are from onnxruntime's.
            mine, reference = softmax_inputs(case)
            if mine is None:
                continue
            line = f"  {case.op_type}: softmax input {np.abs(mine).max():.3g} in magnitude, "
            line += f"{np.unique(mine).size} distinct values"
            if reference is not None:
                relative = np.abs(mine - reference).max() / max(np.abs(reference).max(), 1e-30)
                line += (
                    f"; onnxruntime's has {np.unique(reference).size}, largest relative "
                    f"difference {relative:.2g}"
                )
            print(line)

    failures = collections.defaultdict(list)
    for case, ours, theirs in results:
        if args.ort_passed and (theirs is None or theirs[0] is not None):
            continue
        if ours[0] is not None:
            failures[ours[0]].append((case, ours[1]))
    which = " (of the cases onnxruntime passes)" if args.ort_passed else ""
    print(f"\ndataflow's failures by cause{which}:")
    for cause in ("unsupported op", "import error", "run error", "wrong values"):
        listed = failures.get(cause, [])
        print(f"\n{cause}: {len(listed)} cases")
        if cause == "unsupported op":
            counts = collections.Counter(t for _, m in listed for t in set(_unsupported_types(m)))
            print(
                "  op types without a conversion (cases): "
                + ", ".join(f"{t} ({n})" for t, n in counts.most_common())
            )
            continue
        per_op = collections.defaultdict(list)
        for case, message in listed:
            per_op[case.op_type].append((case, message))
        for op_type in sorted(per_op, key=lambda o: -len(per_op[o])):
            entries = per_op[op_type]
            print(f"  {op_type} ({len(entries)})")
            for case, message in entries[: args.failures]:
                first = message.strip().splitlines()[0] if message.strip() else ""
                print(f"    {case.name}: {first[:160]}")
    print(f"\n{time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(130)
