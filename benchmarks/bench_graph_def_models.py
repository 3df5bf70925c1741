"""TensorFlow's frozen models (tests/io/graphdefs) imported here: import time, one inference here
(interpreted, and with the graph passes) beside TensorFlow's on the same GraphDef, and the
largest difference from TensorFlow's output.

    python benchmarks/bench_graph_def_models.py
    python benchmarks/bench_graph_def_models.py --tensorflow-python /path/to/python
                                                # TensorFlow from another environment
    python benchmarks/bench_graph_def_models.py --repeats 50 --models lenet,lstm

Each model's ``.pb`` and its input come from ``tests/io/graphdefs/make_graphdefs.py``.
Printed per model: the import (``df.import_graph_def``) in ms, the median time of one run of
the batch the generator saved (batch 1 to 4) interpreted (``graph passes off``) and with the
Session's default passes, TensorFlow 1.x's median on the same GraphDef (``tf.compat.v1``,
default ``ConfigProto``), their ratio, and the largest absolute difference from TensorFlow's
saved output.  The three sides run in turn within every round (`harness.paired_median_times`),
so they see the same load; the machine may be shared: read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (
    Partner,
    describe_machine,
    paired_median_times,
    serve_partner,
    try_import_tensorflow,
)

# isort: split
import argparse
import os
import sys
import time

import numpy as np

# The frozen models, read and run in TensorFlow as the interchange benchmark does.
from bench_interchange import load_frozen as load  # noqa: E402
from bench_interchange import tensorflow_cases as _interchange_cases  # noqa: E402

MODELS = (
    "mlp lenet nested_cond resnet_block mobilenet_v2 lstm embedding image_ops transformer_block"
).split()


def tensorflow_cases(tf):
    """``{model: make}`` for `Partner`: ``make()`` imports the model in TensorFlow and returns
    a function running its saved input once."""
    cases = _interchange_cases(tf)
    return {model: cases[f"{model}@{len(load(model)[1]['input'])}"] for model in MODELS}


def dataflow_side(model: str, passes: bool):
    """``(import ms, run once, largest difference from TensorFlow's output)``."""
    import dataflow as df

    data, saved = load(model)
    graph = df.Graph()
    began = time.perf_counter()
    with graph.as_default():
        (y,) = df.import_graph_def(data, return_elements=[str(saved["output_names"][0])], name="")
    import_ms = (time.perf_counter() - began) * 1e3
    config = None
    if not passes:
        rewrite = df.RewriterConfig(disable_meta_optimizer=True)
        config = df.ConfigProto(graph_options=df.GraphOptions(rewrite_options=rewrite))
    sess = df.Session(graph=graph, config=config)
    feed = {graph.get_tensor_by_name(str(saved["input_name"])): saved["input"]}
    difference = float(np.max(np.abs(sess.run(y, feed) - saved["output_0"])))
    return import_ms, (lambda: sess.run(y, feed)), difference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, if not this one")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, tensorflow_cases)
        return
    print(describe_machine(args.repeats))
    partner = Partner.start(
        try_import_tensorflow,
        tensorflow_cases,
        os.path.abspath(__file__),
        "--tensorflow-partner",
        args.tensorflow_python,
    )
    header = f"{'model':18} {'import':>8} {'interp':>8} {'passes':>8} {'TF':>8} {'passes/TF':>9}"
    print(header + f" {'max |diff|':>10}")
    try:
        for model in args.models.split(","):
            import_ms, interpreted, difference = dataflow_side(model, passes=False)
            _, optimized, _ = dataflow_side(model, passes=True)
            sides = [interpreted, optimized]
            if partner is not None:
                sides.append(partner.timer(model))
            times = paired_median_times(*sides, repeats=args.repeats)
            tf_ms = f"{times[2] * 1e3:8.2f}" if partner is not None else f"{'-':>8}"
            ratio = f"{times[1] / times[2]:9.2f}" if partner is not None else f"{'-':>9}"
            print(
                f"{model:18} {import_ms:8.1f} {times[0] * 1e3:8.2f} {times[1] * 1e3:8.2f} "
                f"{tf_ms} {ratio} {difference:10.2e}"
            )
    finally:
        if partner is not None:
            partner.close()
    print("(times in ms; import is one df.import_graph_def of the .pb's bytes)")


if __name__ == "__main__":
    sys.exit(main())
