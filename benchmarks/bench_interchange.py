"""Models from elsewhere, one inference each: dataflow beside onnxruntime and TensorFlow.

    python benchmarks/bench_interchange.py
    python benchmarks/bench_interchange.py --tensorflow-python /work/tfvenv/bin/python
    python benchmarks/bench_interchange.py --models squeezenet,shufflenet --batches 1 --repeats 9
    python benchmarks/bench_interchange.py --quick --models mlp        # the test's run

The models: ONNX's nine light models (``onnx/backend/test/data/light/``: AlexNet, DenseNet-121,
Inception v1 and v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), fed as
``benchmarks/onnx_conformance.py`` feeds them (``arange`` over the input's size, divided by
it), and TensorFlow's frozen models of ``tests/io/graphdefs/`` (their saved input, its first
row for batch 1 and its rows repeated for batch 8).

Each model runs at batch 1 and batch 8.  The light models are declared with batch 1; their
batch-8 form is a copy of the proto whose input declares 8 and whose ``Reshape`` targets copy
the batch dim (a leading ``1`` in a constant shape becomes ``0``, ONNX's "copy this dim");
a model whose copy onnxruntime does not run at batch 8 is reported batch 1 only.

The columns, all timed in the same rounds (`harness.paired_median_times`, medians in ms):

- ``interp``: dataflow with the graph passes off and compilation off (the interpreter);
- ``passes``: dataflow with the Session's defaults (passes on, compilation ``auto``);
- ``ort1`` / ``ort``: onnxruntime with one intra-op thread / with its default threads (told
  not to spin between runs, which would take the cores from the other columns), on the
  ONNX model (a frozen model goes through ``df.onnx.export`` first; ``-`` when that fails,
  the reason printed below the table);
- ``TF``: TensorFlow 1.x on the frozen GraphDef, with ``--tensorflow-python`` (or when it
  imports here), run in that Python as ``bench_graph_def_models.py`` does (`harness.Partner`);
- ``p/ort1`` and ``i/ort1``: dataflow's times over onnxruntime's one-thread time (the issue's
  aim: every light model within 2x, ``p/ort1 <= 2``);
- ``|d| ort``: the largest absolute difference of dataflow's output from onnxruntime's on
  the same input; ``|d| ref``: from the reference output: ONNX's stored expected output
  (light models, batch 1), TensorFlow's output (frozen models, when TensorFlow runs), else
  from TensorFlow's saved output on the saved input (``saved`` after the figure).

The machine may be shared and loaded: read the ratios, measured in the same rounds.
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
import dataclasses
import os
import sys
from typing import Optional

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHDEFS = os.path.join(HERE, "..", "tests", "io", "graphdefs")
LIGHT_MODELS = (
    "bvlc_alexnet densenet121 inception_v1 inception_v2 resnet50 shufflenet squeezenet vgg19 "
    "zfnet512"
).split()
FROZEN_MODELS = (
    "mlp lenet nested_cond resnet_block mobilenet_v2 lstm embedding image_ops transformer_block"
).split()


# -- the inputs ------------------------------------------------------------------------------------


def light_dir() -> str:
    import onnx

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _declared_shape(value_info) -> tuple:
    return tuple(
        d.dim_value if d.HasField("dim_value") else 1 for d in value_info.type.tensor_type.shape.dim
    )


def conformance_input(shape: tuple) -> np.ndarray:
    """The input ONNX's test runner feeds a light model: ``arange`` over its size, divided."""
    count = int(np.prod(shape))
    return (np.arange(count).reshape(shape) / count).astype(np.float32)


def light_model(name: str, batch: int):
    """``(model proto, {input name: value}, expected output or None)`` of light model ``name``
    at ``batch``: the file as shipped for batch 1, a copy with batch ``batch`` otherwise."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(os.path.join(light_dir(), f"light_{name}.onnx"))
    initializers = {t.name: t for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in initializers]
    expected = None
    if batch == 1:
        expected = numpy_helper.to_array(
            onnx.load_tensor(os.path.join(light_dir(), f"light_{name}_output_0.pb"))
        )
    else:
        for value_info in inputs:
            value_info.type.tensor_type.shape.dim[0].dim_value = batch
        for output in model.graph.output:
            dims = output.type.tensor_type.shape.dim
            if dims and dims[0].HasField("dim_value"):
                dims[0].dim_value = batch
        for node in model.graph.node:
            target = initializers.get(node.input[1]) if node.op_type == "Reshape" else None
            if target is None:
                continue
            shape = numpy_helper.to_array(target).copy()
            if shape.size and shape[0] == 1:
                shape[0] = 0  # ONNX's Reshape: 0 copies the input's dim, here the batch
                target.CopyFrom(numpy_helper.from_array(shape, target.name))
    feeds = {v.name: conformance_input(_declared_shape(v)) for v in inputs}
    return model, feeds, expected


def frozen_input(saved, batch: int) -> np.ndarray:
    """The saved input of a frozen model with ``batch`` rows (its rows repeated in order)."""
    value = saved["input"]
    return np.resize(value, (batch, *value.shape[1:])).astype(value.dtype)


def load_frozen(model: str):
    with open(os.path.join(GRAPHDEFS, f"{model}.pb"), "rb") as f:
        data = f.read()
    return data, np.load(os.path.join(GRAPHDEFS, f"{model}.npz"))


# -- TensorFlow, in its own Python -----------------------------------------------------------------


def tensorflow_cases(tf):
    """`Partner` cases: ``"model@batch"`` makes a run of the frozen model at that batch,
    ``"model@batch/output"`` returns its output (as nested lists) for the differences."""

    def session_of(model: str, batch: int):
        data, saved = load_frozen(model)
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(data)
        graph = tf.Graph()
        with graph.as_default():
            (y,) = tf.import_graph_def(
                graph_def, return_elements=[str(saved["output_names"][0])], name=""
            )
        sess = tf.Session(graph=graph)
        feed = {str(saved["input_name"]): frozen_input(saved, batch)}
        return lambda: sess.run(y, feed)

    class Cases(dict):
        """Made on demand, for any model and batch the benchmark asks for."""

        def __missing__(self, key: str):
            model, batch = key.split("/")[0].split("@")
            if key.endswith("/output"):
                return lambda: np.asarray(session_of(model, int(batch))(), np.float64).tolist()
            return lambda: session_of(model, int(batch))

    return Cases()


# -- one model at one batch ------------------------------------------------------------------------


@dataclasses.dataclass
class Sides:
    """The runs of one model at one batch, and what their outputs showed.

    ``runs`` maps a column (``interp``, ``passes``, ``ort1``, ``ort``, ``TF``) to a function
    running one inference; a column left out was not possible (``notes`` says why)."""

    runs: dict
    output: np.ndarray
    ort_output: Optional[np.ndarray] = None
    reference_difference: Optional[float] = None
    reference_is_saved: bool = False
    closers: list = dataclasses.field(default_factory=list)

    def close(self) -> None:
        for close in self.closers:
            close()


def _dataflow_sessions(df, graph):
    """``(interpreted session, default session)`` of ``graph``: the first with the graph
    passes off, the second with the Session's defaults."""
    rewrite = df.RewriterConfig(disable_meta_optimizer=True)
    config = df.ConfigProto(graph_options=df.GraphOptions(rewrite_options=rewrite))
    return df.Session(graph=graph, config=config), df.Session(graph=graph)


def _dataflow_runs(df, graph, fetch, feed_dict) -> tuple[dict, list]:
    """The ``interp`` and ``passes`` columns: each run sets the compilation mode it needs
    (a plan not compiled yet follows the mode of the run that reaches it)."""
    from dataflow.client import compiler

    default_mode = compiler.mode()
    interpreted, optimized = _dataflow_sessions(df, graph)

    def run_interpreted():
        compiler.set_mode("off")
        try:
            return interpreted.run(fetch, feed_dict)
        finally:
            compiler.set_mode(default_mode)

    def run_optimized():
        return optimized.run(fetch, feed_dict)

    runs = {"interp": run_interpreted, "passes": run_optimized}
    return runs, [interpreted.close, optimized.close]


def warm_up(runs: dict):
    """Runs dataflow's columns until their plans are built and, where the mode compiles, compiled
    (``auto`` compiles on a plan's third run), so the timings see the steady state; returns the
    output of the default column."""
    from dataflow.client import compiler

    for _ in range(compiler.AUTO_AFTER_RUNS + 1):
        runs["interp"]()
        output = runs["passes"]()
    return output


def _onnxruntime_runs(model_bytes: bytes, feeds: dict) -> dict:
    """The ``ort1`` and ``ort`` columns (one intra-op thread, and onnxruntime's default)."""
    import onnxruntime

    runs = {}
    for column, threads in (("ort1", 1), ("ort", 0)):
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        options.intra_op_num_threads = threads
        # Its threads would spin after each run, taking the cores from the next column's run.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(
            model_bytes, options, providers=["CPUExecutionProvider"]
        )
        runs[column] = lambda s=session: s.run(None, feeds)[0]
    return runs


def _largest_difference(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def light_sides(name: str, batch: int, notes: list) -> Optional[Sides]:
    import dataflow as df

    model, feeds, expected = light_model(name, batch)
    model_bytes = model.SerializeToString()
    try:
        ort_runs = _onnxruntime_runs(model_bytes, feeds)
        ort_output = ort_runs["ort"]()
    except Exception as e:  # noqa: BLE001 - reported, the row is left out
        notes.append(f"{name} batch {batch}: onnxruntime refuses the copy ({type(e).__name__})")
        return None
    if batch != 1 and ort_output.shape[:1] != (batch,):
        notes.append(f"{name}: batch 1 only (its batch-{batch} copy gives {ort_output.shape})")
        return None
    graph = df.Graph()
    with graph.as_default():
        imported = df.onnx.import_model(model_bytes)
    feed_dict = {imported.inputs[n]: v for n, v in feeds.items()}
    fetch = next(iter(imported.outputs.values()))
    runs, closers = _dataflow_runs(df, graph, fetch, feed_dict)
    output = warm_up(runs)
    runs.update(ort_runs)
    sides = Sides(runs, output, ort_output=ort_output, closers=closers)
    if expected is not None:
        sides.reference_difference = _largest_difference(output, expected)
    return sides


def frozen_sides(model: str, batch: int, partner, notes: list) -> Sides:
    import dataflow as df

    data, saved = load_frozen(model)
    graph = df.Graph()
    with graph.as_default():
        (y,) = df.import_graph_def(data, return_elements=[str(saved["output_names"][0])], name="")
    placeholder = graph.get_tensor_by_name(str(saved["input_name"]))
    value = frozen_input(saved, batch)
    runs, closers = _dataflow_runs(df, graph, y, {placeholder: value})
    output = warm_up(runs)
    sides = Sides(runs, output, closers=closers)
    try:
        with graph.as_default():
            proto = df.onnx.export({"y": y}, {"x": placeholder})
        ort_runs = _onnxruntime_runs(proto.SerializeToString(), {"x": value})
        sides.ort_output = ort_runs["ort"]()
        runs.update(ort_runs)
    except Exception as e:  # noqa: BLE001 - reported, the column is left empty
        last = str(e).strip().splitlines()[-1].strip()
        notes.append(f"{model}: no onnxruntime column: {last[:160]}")
    if partner is not None:
        key = f"{model}@{batch}"
        runs["TF"] = partner.timer(key)
        reference = np.asarray(partner.call(f"{key}/output"))
        sides.reference_difference = _largest_difference(output, reference)
    elif batch == 1:
        # Without TensorFlow: the difference from its saved output, on the saved input.
        saved_feed = {placeholder: saved["input"]}
        _, optimized = _dataflow_sessions(df, graph)
        try:
            ours = optimized.run(y, saved_feed)
        finally:
            optimized.close()
        sides.reference_difference = _largest_difference(ours, saved["output_0"])
        sides.reference_is_saved = True
    return sides


def frozen_sides_at(model: str, batch: int, done: set, partner, notes: list):
    """``(sides, batch)`` of a frozen model at ``batch``, or at its saved batch when the graph
    does not run at ``batch`` (an LSTM's sequence lengths are constants of the saved batch's
    size); ``(None, batch)`` when that row was printed already."""
    from dataflow.framework.errors import InvalidArgumentError

    try:
        return frozen_sides(model, batch, partner, notes), batch
    except InvalidArgumentError as e:
        saved_batch = int(load_frozen(model)[1]["input"].shape[0])
        if (model, saved_batch) in done:
            return None, batch
        why = str(e).strip().splitlines()[-1].split(": ", 2)[-1][:90]
        notes.append(f"{model}: batch {batch} fails here ({why}); run at its saved batch")
        return frozen_sides(model, saved_batch, partner, notes), saved_batch


# -- the table -------------------------------------------------------------------------------------

COLUMNS = ("interp", "passes", "ort1", "ort", "TF")


def _cell(value: Optional[float], width: int, form: str) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:{width}{form}}"


def print_header() -> None:
    print(
        f"{'model':18} {'batch':>5} "
        + " ".join(f"{c:>8}" for c in COLUMNS)
        + f" {'p/ort1':>7} {'i/ort1':>7} {'|d| ort':>9} {'|d| ref':>9}"
    )


def print_row(model: str, batch: int, sides: Sides, times: dict) -> dict:
    """Prints one row; returns its figures (ms and ratios) for the caller."""
    ms = {c: (times[c] * 1e3 if c in times else None) for c in COLUMNS}
    ort1 = ms["ort1"]
    ratio_passes = ms["passes"] / ort1 if ort1 else None
    ratio_interp = ms["interp"] / ort1 if ort1 else None
    ort_difference = (
        _largest_difference(sides.output, sides.ort_output)
        if sides.ort_output is not None
        else None
    )
    reference = _cell(sides.reference_difference, 9, ".2e")
    print(
        f"{model:18} {batch:5d} "
        + " ".join(_cell(ms[c], 8, ".2f") for c in COLUMNS)
        + f" {_cell(ratio_passes, 7, '.2f')} {_cell(ratio_interp, 7, '.2f')}"
        + f" {_cell(ort_difference, 9, '.2e')} {reference}"
        + (" saved" if sides.reference_is_saved else ""),
        flush=True,
    )
    return {"ms": ms, "passes_over_ort1": ratio_passes, "interp_over_ort1": ratio_interp}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--models",
        default=",".join(LIGHT_MODELS + FROZEN_MODELS),
        help="comma-separated names among the light and the frozen models",
    )
    parser.add_argument("--batches", default="1,8", help="comma-separated batch sizes")
    parser.add_argument("--quick", action="store_true", help="two repeats: the test's run")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, if not this one")
    parser.add_argument("--no-tensorflow", action="store_true", help="leave TensorFlow out")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, tensorflow_cases)
        return 0
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in LIGHT_MODELS and m not in FROZEN_MODELS]
    if unknown:
        parser.error(
            f"unknown models {unknown}; the light models are {LIGHT_MODELS}, the frozen "
            f"models {FROZEN_MODELS}"
        )
    batches = [int(b) for b in args.batches.split(",")]
    repeats = 2 if args.quick else args.repeats
    print(describe_machine(repeats))
    partner = None
    if not args.no_tensorflow and any(m in FROZEN_MODELS for m in models):
        partner = Partner.start(
            try_import_tensorflow,
            tensorflow_cases,
            os.path.abspath(__file__),
            "--tensorflow-partner",
            args.tensorflow_python,
        )
    print_header()
    notes: list[str] = []
    done: set = set()  # (model, batch) rows printed
    try:
        for model in models:
            for batch in batches:
                if model in LIGHT_MODELS:
                    sides = light_sides(model, batch, notes)
                else:
                    sides, batch = frozen_sides_at(model, batch, done, partner, notes)
                if sides is None:
                    continue
                done.add((model, batch))
                try:
                    columns = [c for c in COLUMNS if c in sides.runs]
                    medians = paired_median_times(
                        *(sides.runs[c] for c in columns), repeats=repeats
                    )
                    print_row(model, batch, sides, dict(zip(columns, medians)))
                finally:
                    sides.close()
    finally:
        if partner is not None:
            partner.close()
    for note in dict.fromkeys(notes):  # each once, in order
        print(f"  {note}")
    print("(medians in ms; p/ort1 and i/ort1: dataflow with passes / interpreted over")
    print(" onnxruntime with one intra-op thread, timed in the same rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
