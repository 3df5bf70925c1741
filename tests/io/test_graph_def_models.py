"""Real models frozen by TensorFlow 2.21 import as GraphDefs, run, and give TensorFlow's outputs;
exported again, they import and give the same.

The ``.pb`` files and TensorFlow's outputs (``.npz``) are made by
``tests/io/graphdefs/make_graphdefs.py`` (run with TensorFlow; these tests never import it).

Tolerances: the models compute in float32 (machine epsilon 1.2e-7), and dataflow's kernels sum
in other orders than TensorFlow's (matrix products of up to 1280 terms, convolutions, batch-norm
folds), so each output may differ by a few units in the last place of its larger terms:
``rtol=1e-5, atol=1e-6`` (the largest difference measured is 2.4e-7).  The special functions of
``op_zoo`` (Digamma, Erfinv, Zeta, Polygamma, Betainc, ...) come from other algorithms than
TensorFlow's (Cephes in both, in double here): ``rtol=1e-5`` again (measured: 2.6e-7); integer,
bool and string outputs are equal exactly.
"""

import os
import subprocess

import numpy as np
import pytest

import dataflow as df

pytest.importorskip("tensorboardX")

DATA = os.path.join(os.path.dirname(__file__), "graphdefs")
MODELS = [
    "mlp",
    "lenet",
    "nested_cond",
    "resnet_block",
    "mobilenet_v2",
    "lstm",
    "embedding",
    "image_ops",
    "transformer_block",
    "op_zoo",
]
# The op types each model holds, as TensorFlow froze it (a change of the generator shows here).
MODEL_OP_TYPES = {
    "resnet_block": {"Conv2D", "FusedBatchNormV3", "Mean", "AddV2", "Relu"},
    "mobilenet_v2": {"DepthwiseConv2dNative", "FusedBatchNormV3", "Pad", "Relu6", "Softmax"},
    "lstm": {
        "Enter",
        "Exit",
        "LoopCond",
        "Merge",
        "NextIteration",
        "Switch",
        "Assert",
        "TensorArrayV3",
        "TensorArrayReadV3",
        "TensorArrayWriteV3",
        "TensorArrayScatterV3",
        "TensorArrayGatherV3",
        "Split",
    },
    "embedding": {"GatherV2", "GatherNd", "ScatterNd", "Assert"},
    "image_ops": {"ResizeBilinear", "ResizeNearestNeighbor", "Pad", "PadV2", "MirrorPad"},
    "transformer_block": {"Einsum", "BatchMatMulV2", "Erfc", "Softmax", "Rsqrt", "SplitV"},
    "op_zoo": {
        "FusedBatchNorm",
        "FusedBatchNormV2",
        "BatchMatMul",
        "BatchMatMulV3",
        "Erf",
        "Lgamma",
        "TopKV2",
        "OneHot",
        "TensorArraySplitV3",
        "TensorArrayConcatV3",
        "StringJoin",
        "IdentityN",
    },
}


def load(model: str):
    """``(GraphDef, TensorFlow's input and outputs)`` of a model, read the TF1 way."""
    graph_def = df.GraphDef()
    with df.gfile.GFile(os.path.join(DATA, f"{model}.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    return graph_def, np.load(os.path.join(DATA, f"{model}.npz"))


def run_imported(graph_def, data, **import_args):
    """TensorFlow's fetches of ``data`` computed by ``graph_def`` imported into a new graph."""
    names = [str(n) for n in data["output_names"]]
    with df.Graph().as_default() as graph:
        outputs = df.import_graph_def(graph_def, return_elements=names, **import_args)
        prefix = import_args.get("name", "import")
        input_name = str(data["input_name"])
        x = graph.get_tensor_by_name(f"{prefix}/{input_name}" if prefix else input_name)
        with df.Session() as sess:
            return sess.run(outputs, {x: data["input"]})


def assert_matches_tensorflow(results, data):
    for i, (key, got) in enumerate(zip(data["output_keys"], results)):
        expected = data[f"output_{i}"]
        got = np.asarray(got)
        if expected.dtype.kind == "S":  # strings: bytes here, saved as fixed-width by numpy
            assert got.astype(bytes).tolist() == expected.tolist(), key
            continue
        assert got.dtype == expected.dtype, key
        assert got.shape == expected.shape, key
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=str(key))
        else:
            np.testing.assert_array_equal(got, expected, err_msg=str(key))


@pytest.mark.parametrize("model", MODELS)
def test_a_frozen_model_imports_and_gives_tensorflows_outputs(model):
    graph_def, data = load(model)
    assert MODEL_OP_TYPES.get(model, set()) <= {node.op for node in graph_def.node}
    assert_matches_tensorflow(run_imported(graph_def, data, name="model"), data)


def test_keras_resnet50_frozen_by_tensorflow_imports_and_gives_its_outputs(tmp_path):
    """Keras' ResNet50 (random weights) is too large to keep here (a 95 MB frozen graph): with
    ``DATAFLOW_TENSORFLOW_PYTHON`` naming a Python with TensorFlow, the generator makes it and
    TensorFlow's output in a temporary directory, and the import must match them."""
    python = os.environ.get("DATAFLOW_TENSORFLOW_PYTHON")
    if not python:
        pytest.skip("DATAFLOW_TENSORFLOW_PYTHON does not name a Python with TensorFlow")
    generator = os.path.join(DATA, "make_graphdefs.py")
    made = subprocess.run(
        [python, generator, "--only", "resnet50", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_USE_LEGACY_KERAS": "1"},
    )
    assert made.returncode == 0, made.stderr[-2000:]
    graph_def = df.GraphDef()
    with df.gfile.GFile(str(tmp_path / "resnet50.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    data = np.load(str(tmp_path / "resnet50.npz"))
    op_types = {node.op for node in graph_def.node}
    assert {"Conv2D", "FusedBatchNormV3", "MaxPool", "Pad", "Mean"} <= op_types
    assert_matches_tensorflow(run_imported(graph_def, data, name="model"), data)


@pytest.mark.parametrize("model", ["lstm", "transformer_block", "op_zoo", "image_ops"])
def test_an_imported_model_exports_as_a_graph_def_that_imports_with_the_same_outputs(model):
    graph_def, data = load(model)
    with df.Graph().as_default() as graph:
        df.import_graph_def(graph_def, name="")
        exported = graph.as_graph_def()
    # TensorFlow 2.21 loads these exports and gives the outputs below (checked when they were
    # made); here the export's own import must.
    assert_matches_tensorflow(run_imported(exported, data, name="again"), data)


def test_the_old_spellings_export_as_the_current_ones():
    graph_def, _ = load("op_zoo")
    with df.Graph().as_default() as graph:
        df.import_graph_def(graph_def, name="")
        exported = {node.name: node for node in graph.as_graph_def().node}
    assert exported["FusedBatchNorm"].op == "FusedBatchNormV3"
    assert exported["FusedBatchNorm"].attr["epsilon"].f == pytest.approx(1e-4)  # TF's default
    assert exported["FusedBatchNormV2"].attr["epsilon"].f == pytest.approx(0.01)
    assert exported["FusedBatchNorm"].attr["is_training"].b is False
    split_v = exported["split_1"]
    assert split_v.op == "SplitV"
    assert split_v.attr["num_split"].i == 2
    input_types = [exported[i.split(":")[0]].op for i in split_v.input]
    assert input_types == ["Placeholder", "Const", "Const"]  # value, size_splits, split_dim


def test_the_lstm_loop_keeps_its_frame_and_tensor_arrays():
    graph_def, data = load("lstm")
    with df.Graph().as_default() as graph:
        df.import_graph_def(graph_def, name="")
        types = {op.type for op in graph.get_operations()}
        frames = {op.attrs["frame_name"] for op in graph.get_operations() if op.type == "Enter"}
    assert {"Enter", "Exit", "NextIteration", "TensorArrayWriteV3", "Assert"} <= types
    assert frames == {"rnn/while/while_context"}
