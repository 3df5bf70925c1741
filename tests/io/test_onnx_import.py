"""df.onnx.import_model: ONNX models built here with onnx.helper, imported and run, compared
with ONNX's own reference evaluator (onnx.reference), an implementation independent of ours."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import dataflow as df  # noqa: E402
from dataflow.__main__ import main  # noqa: E402
from dataflow.io.onnx import OnnxImportError, import_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(26)


def _model(nodes, inputs, outputs, initializers=(), opset=17, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _value(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def _reference(model, feeds):
    outputs = ReferenceEvaluator(model).run(None, feeds)
    return dict(zip([o.name for o in model.graph.output], outputs))


def _assert_matches_reference(model, feeds, rtol=1e-5, atol=1e-6, **kwargs):
    imported = import_model(model, **kwargs)
    got = imported.run(feeds)
    for name, expected in _reference(model, feeds).items():
        np.testing.assert_allclose(got[name], expected, rtol=rtol, atol=atol, err_msg=name)
    return imported


def _mlp(weights_seed=0):
    rng = np.random.default_rng(weights_seed)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((8, 3)).astype(np.float32)
    b2 = rng.standard_normal(3).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="dense1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("MatMul", ["a", "w2"], ["m"], name="dense2"),
        helper.make_node("Add", ["m", "b2"], ["logits"], name="bias2"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    initializers = [
        numpy_helper.from_array(v, n) for n, v in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))
    ]
    return _model(
        nodes,
        [_value("x", ["batch", 4])],
        [_value("logits", ["batch", 3]), _value("probs", ["batch", 3])],
        initializers,
    )


# -- the contract ----------------------------------------------------------------------------------


def test_an_mlp_imports_with_placeholders_constants_and_named_outputs(fresh_graph):
    model = _mlp()
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    imported = _assert_matches_reference(model, {"x": x})
    assert imported.graph is fresh_graph
    assert list(imported.inputs) == ["x"]  # initializers are not inputs
    placeholder = imported.inputs["x"]
    assert placeholder.op.type == "Placeholder" and placeholder.name == "x:0"
    assert placeholder.shape.as_list() == [None, 4]  # a symbolic dim is unknown
    assert list(imported.outputs) == ["logits", "probs"]
    assert imported.outputs["probs"].name == "probs:0"  # the ONNX name is the graph's name
    op_types = {op.type for op in fresh_graph.get_operations()}
    assert "Variable" not in op_types and "VariableV2" not in op_types
    assert imported.variables == []
    # Nodes are built under scopes named after them, which the picture collapses.
    assert any(op.name.startswith("dense1/") for op in fresh_graph.get_operations())


def test_run_checks_feed_and_output_names(fresh_graph):
    imported = import_model(_mlp())
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(KeyError, match="no model input named 'y'.*'x'"):
        imported.run({"x": x, "y": x})
    with pytest.raises(ValueError, match=r"no value fed for the model inputs \['x'\]"):
        imported.run({})
    with pytest.raises(KeyError, match="no model output named 'nope'"):
        imported.run({"x": x}, ["nope"])
    assert list(imported.run({"x": x}, ["probs"])) == ["probs"]


def test_a_model_loads_from_a_path_and_from_bytes(tmp_path, fresh_graph):
    model = _mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    from_path = import_model(str(path)).run({"x": x})
    from_bytes = import_model(model.SerializeToString()).run({"x": x})
    np.testing.assert_array_equal(from_path["probs"], from_bytes["probs"])


def test_a_conv_net_with_padding_groups_batch_norm_and_pooling_matches(fresh_graph):
    conv_w = RNG.standard_normal((6, 2, 3, 3)).astype(np.float32)
    conv_b = RNG.standard_normal(6).astype(np.float32)
    scale, offset = (
        RNG.random(6).astype(np.float32) + 0.5,
        RNG.standard_normal(6).astype(np.float32),
    )
    mean, var = RNG.standard_normal(6).astype(np.float32), RNG.random(6).astype(np.float32) + 0.1
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"], ["c"], pads=[1, 0, 2, 1], strides=[2, 1], group=2
        ),
        helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"], epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node(
            "MaxPool",
            ["r"],
            ["p"],
            kernel_shape=[3, 2],
            strides=[2, 2],
            pads=[1, 1, 1, 0],
            ceil_mode=1,
        ),
        helper.make_node("AveragePool", ["p"], ["q"], kernel_shape=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["q"], ["g"]),
        helper.make_node("Flatten", ["g"], ["y"]),
    ]
    initializers = [
        numpy_helper.from_array(v, n)
        for n, v in (
            ("w", conv_w),
            ("b", conv_b),
            ("s", scale),
            ("o", offset),
            ("m", mean),
            ("v", var),
        )
    ]
    model = _model(
        nodes, [_value("x", [2, 4, 9, 8])], [_value("y", None), _value("q", None)], initializers
    )
    x = RNG.standard_normal((2, 4, 9, 8)).astype(np.float32)
    _assert_matches_reference(model, {"x": x}, rtol=1e-4, atol=1e-5)


def test_opset_9_softmax_flattens_from_its_axis(fresh_graph):
    # Before opset 13 Softmax normalizes over all axes from `axis` on (default 1) at once, as
    # the operator's definition says and onnxruntime does (onnx.reference normalizes over the
    # last axis only, so the expected values are computed here).
    model = _model(
        [helper.make_node("Softmax", ["x"], ["y"])],
        [_value("x", [2, 3, 4])],
        [_value("y", [2, 3, 4])],
        opset=9,
    )
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    y = import_model(model).run({"x": x})["y"]
    flat = np.exp(x.reshape(2, -1).astype(np.float64))
    expected = (flat / flat.sum(axis=1, keepdims=True)).reshape(2, 3, 4)
    np.testing.assert_allclose(y, expected, rtol=1e-5)


def test_axes_fed_at_run_time_reduce_and_slice(fresh_graph):
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["t"]),
    ]
    model = _model(
        nodes,
        [
            _value("x", [3, 4, 5]),
            _value("axes", [2], TensorProto.INT64),
            _value("starts", [2], TensorProto.INT64),
            _value("ends", [2], TensorProto.INT64),
        ],
        [_value("s", None), _value("t", None)],
        opset=18,
    )
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    for axes in ([0, 2], [-1, 1]):
        feeds = {
            "x": x,
            "axes": np.array(axes, np.int64),
            "starts": np.array([1, -3], np.int64),
            "ends": np.array([2**62, 100], np.int64),
        }
        _assert_matches_reference(model, feeds)


# -- control flow ----------------------------------------------------------------------------------


def test_if_becomes_a_cond_whose_branches_see_outer_values(fresh_graph):
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["then_out"])], "then", [], [_value("then_out", None)]
    )
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"])], "else", [], [_value("else_out", None)]
    )
    node = helper.make_node("If", ["flag"], ["y"], then_branch=then_graph, else_branch=else_graph)
    model = _model(
        [node], [_value("flag", [], TensorProto.BOOL), _value("x", [3])], [_value("y", None)]
    )
    imported = import_model(model)
    x = np.array([1.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(imported.run({"flag": True, "x": x})["y"], 2 * x)
    np.testing.assert_array_equal(imported.run({"flag": False, "x": x})["y"], -x)
    assert fresh_graph.get_collection(df.GraphKeys.COND_CONTEXT)
    assert {"Switch", "Merge"} <= {op.type for op in fresh_graph.get_operations()}


def _loop_body():
    # (i, cond, total) -> (cond, total + x * i, the running total as a scan output)
    nodes = [
        helper.make_node("Cast", ["i"], ["i_float"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "i_float"], ["step"]),
        helper.make_node("Add", ["total_in", "step"], ["total_out"]),
        helper.make_node("Identity", ["total_out"], ["scanned"]),
        helper.make_node("ReduceSum", ["total_out"], ["sum"], keepdims=0),
        helper.make_node("Less", ["sum", "limit"], ["cond_out"]),
    ]
    return helper.make_graph(
        nodes,
        "body",
        [
            _value("i", [], TensorProto.INT64),
            _value("cond_in", [], TensorProto.BOOL),
            _value("total_in", [2]),
        ],
        [
            _value("cond_out", [], TensorProto.BOOL),
            _value("total_out", [2]),
            _value("scanned", [2]),
        ],
    )


@pytest.mark.parametrize("limit", [1000.0, 12.0])
def test_loop_becomes_a_while_loop_with_trip_count_condition_and_scan_outputs(fresh_graph, limit):
    node = helper.make_node(
        "Loop", ["trip", "go", "start"], ["total", "history"], body=_loop_body()
    )
    model = _model(
        [node],
        [
            _value("trip", [], TensorProto.INT64),
            _value("go", [], TensorProto.BOOL),
            _value("start", [2]),
            _value("x", [2]),
            _value("limit", []),
        ],
        [_value("total", None), _value("history", None)],
    )
    feeds = {
        "trip": np.array(6, np.int64),
        "go": np.array(True),
        "start": np.array([0.5, 1.0], np.float32),
        "x": np.array([1.0, 2.0], np.float32),
        "limit": np.array(limit, np.float32),
    }
    imported = _assert_matches_reference(model, feeds)
    history = imported.run(feeds)["history"]
    # With limit 12 the sums after iterations 0..3 are 1.5, 4.5, 10.5, 19.5: the condition
    # stops the loop after 4 iterations, before the trip count of 6.
    assert history.shape[0] == (6 if limit == 1000.0 else 4)
    assert fresh_graph.get_collection(df.GraphKeys.WHILE_CONTEXT)


def test_scan_runs_its_body_over_an_axis_in_either_direction(fresh_graph):
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
            helper.make_node("Mul", ["sum_out", "row"], ["product"]),
        ],
        "scan_body",
        [_value("sum_in", [3]), _value("row", [3])],
        [_value("sum_out", [3]), _value("product", [3])],
    )
    node = helper.make_node(
        "Scan",
        ["init", "xs"],
        ["final", "products"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    model = _model(
        [node],
        [_value("init", [3]), _value("xs", [3, 4])],
        [_value("final", None), _value("products", None)],
    )
    init = np.ones(3, np.float32)
    xs = RNG.standard_normal((3, 4)).astype(np.float32)
    got = import_model(model).run({"init": init, "xs": xs})
    # The columns of xs are read last to first; the products are stacked as columns in the
    # order they were made (onnx.reference implements only the forward direction).
    total, products = init.copy(), []
    for column in range(3, -1, -1):
        total = total + xs[:, column]
        products.append(total * xs[:, column])
    np.testing.assert_allclose(got["final"], total, rtol=1e-6)
    np.testing.assert_allclose(got["products"], np.stack(products, axis=1), rtol=1e-6)


# -- fine-tuning -----------------------------------------------------------------------------------


def test_trainable_initializers_become_variables_that_gradients_reach(fresh_graph):
    imported = import_model(_mlp(), trainable=True)
    assert len(imported.variables) == 4
    assert set(df.trainable_variables()) == set(imported.variables)
    labels = df.placeholder(df.float32, [None, 3])
    loss = df.reduce_mean(df.square(imported.outputs["logits"] - labels))
    gradients = df.gradients(loss, imported.variables)
    assert all(g is not None for g in gradients)
    step = df.train.GradientDescentOptimizer(0.05).minimize(loss)
    x = RNG.standard_normal((16, 4)).astype(np.float32)
    target = RNG.standard_normal((16, 3)).astype(np.float32)
    session = imported.session()  # the variables are initialized
    feeds = {imported.inputs["x"]: x, labels: target}
    before = session.run(loss, feeds)
    for _ in range(30):
        session.run(step, feeds)
    after = session.run(loss, feeds)
    assert after < 0.7 * before
    # The fine-tuned model now differs from the file's.
    with df.Graph().as_default():
        frozen = import_model(_mlp()).run({"x": x})["logits"]
    assert not np.allclose(imported.run({"x": x})["logits"], frozen)


# -- what is refused -------------------------------------------------------------------------------


def test_every_unsupported_op_is_named_with_its_node_in_one_error(fresh_graph):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="fine"),
        helper.make_node("TfIdfVectorizer", ["a"], ["b"], name="tfidf"),
        helper.make_node("Col2Im", ["b", "a", "a"], ["d"], name="col2im"),
        helper.make_node("MyOp", ["d"], ["y"], name="custom", domain="com.example"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [_value("x", [2])], [_value("y", None)]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )
    with pytest.raises(OnnxImportError) as error:
        import_model(model)
    message = str(error.value)
    assert "3 node(s)" in message
    assert "TfIdfVectorizer (node 'tfidf')" in message
    assert "Col2Im (node 'col2im')" in message
    assert "MyOp of domain 'com.example' (node 'custom')" in message
    assert fresh_graph.get_operations() == []  # nothing was built


def test_unsupported_ops_inside_subgraphs_are_found_before_building(fresh_graph):
    branch = helper.make_graph(
        [helper.make_node("TfIdfVectorizer", ["x"], ["u"], name="inner")],
        "b",
        [],
        [_value("u", None)],
    )
    node = helper.make_node("If", ["flag"], ["y"], then_branch=branch, else_branch=branch)
    model = _model(
        [node], [_value("flag", [], TensorProto.BOOL), _value("x", [3])], [_value("y", None)]
    )
    with pytest.raises(OnnxImportError, match=r"2 node\(s\).*TfIdfVectorizer \(node 'inner'\)"):
        import_model(model)


def test_opsets_before_7_are_refused(fresh_graph):
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])], [_value("x", [2])], [_value("y", [2])], opset=6
    )
    with pytest.raises(OnnxImportError, match="opset 6 .* opsets 7 and later"):
        import_model(model)


def test_node_errors_name_the_model_the_node_and_the_op(fresh_graph):
    model = _model(
        [helper.make_node("Unsqueeze", ["x"], ["y"], name="widen", axes=[5])],
        [_value("x", [2, 3])],
        [_value("y", None)],
        opset=11,
    )
    with pytest.raises(
        OnnxImportError, match="node 'widen' \\(Unsqueeze\\): axis 5 is out of range"
    ):
        import_model(model)
    undefined = _model(
        [helper.make_node("Relu", ["missing"], ["y"], name="r")],
        [_value("x", [2])],
        [_value("y", [2])],
    )
    with pytest.raises(OnnxImportError, match="input 'missing' is not defined before the node"):
        import_model(undefined)


# -- hostile and damaged files ---------------------------------------------------------------------


def _raw_tensor(name, dims, raw: bytes):
    """A float TensorProto whose raw_data is ``raw``, whatever its dims declare (onnx.helper
    refuses to make a damaged one)."""
    tensor = TensorProto()
    tensor.name, tensor.data_type = name, TensorProto.FLOAT
    tensor.dims.extend(dims)
    tensor.raw_data = raw
    return tensor


def _with_initializer(tensor):
    return _model(
        [helper.make_node("Add", ["x", tensor.name], ["y"])],
        [_value("x", [2])],
        [_value("y", None)],
        [tensor],
    )


def test_a_file_that_is_not_a_model_is_refused(tmp_path, fresh_graph):
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\xff\xfe not a protocol buffer \x00\x01")
    with pytest.raises(OnnxImportError, match="junk.onnx: not an ONNX model"):
        import_model(str(path))
    with pytest.raises(OnnxImportError, match="cannot read the ONNX file"):
        import_model(str(tmp_path / "absent.onnx"))
    with pytest.raises(TypeError, match="path, bytes or an onnx.ModelProto"):
        import_model(42)


def test_raw_data_must_hold_exactly_what_the_dims_declare(fresh_graph):
    tensor = _raw_tensor("w", [2], b"\x00" * 4)
    with pytest.raises(
        OnnxImportError, match=r"initializer 'w': shape \[2\] of FLOAT needs 8 bytes"
    ):
        import_model(_with_initializer(tensor))
    short = _raw_tensor("w", [3], b"")
    short.ClearField("raw_data")
    short.float_data.extend([1.0, 2.0])
    with pytest.raises(OnnxImportError, match="declares 3 values, its float_data holds 2"):
        import_model(_with_initializer(short))


def test_huge_or_negative_declared_sizes_are_refused_before_allocating(fresh_graph):
    huge = _raw_tensor("w", [2**20, 2**20], b"")
    with pytest.raises(OnnxImportError, match="initializer 'w'"):
        import_model(_with_initializer(huge))
    negative = _raw_tensor("w", [-1], b"")
    with pytest.raises(OnnxImportError, match="negative dimension"):
        import_model(_with_initializer(negative))
    deep = _raw_tensor("w", [1] * 40, b"\x00" * 4)
    with pytest.raises(OnnxImportError, match="rank 40"):
        import_model(_with_initializer(deep))


def test_a_constant_of_huge_declared_shape_is_refused_at_import(fresh_graph):
    shape = numpy_helper.from_array(np.array([2**20, 2**20, 2**10], np.int64), "shape")
    model = _model(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="huge")],
        [],
        [_value("y", None)],
        [shape],
    )
    with pytest.raises(OnnxImportError, match="node 'huge' \\(ConstantOfShape\\): .*too large"):
        import_model(model)


def test_external_data_is_never_read(tmp_path, fresh_graph):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"\x00" * 8)
    tensor = _raw_tensor("w", [2], b"")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", str(secret)
    with pytest.raises(OnnxImportError, match="stored in another file, which is not read"):
        import_model(_with_initializer(tensor))


def test_names_that_are_not_utf8_still_import(fresh_graph):
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"], name="zqzqzq")],
        [_value("x", [2])],
        [_value("y", [2])],
    )
    data = model.SerializeToString().replace(b"zqzqzq", b"\xff\xfe\xfd\xfc\xfb\xfa")
    imported = import_model(data)
    np.testing.assert_array_equal(imported.run({"x": np.float32([-1, 2])})["y"], [0, 2])


def test_randomly_damaged_models_are_refused_with_import_errors_only():
    # Bytes changed, cut off or inserted anywhere in a model with a loop and one with a conv
    # net: each either imports or raises OnnxImportError, never another exception.
    import random

    loop = helper.make_node(
        "Loop", ["trip", "go", "start"], ["total", "history"], body=_loop_body()
    )
    models = [
        _mlp().SerializeToString(),
        _model(
            [loop],
            [
                _value("trip", [], TensorProto.INT64),
                _value("go", [], TensorProto.BOOL),
                _value("start", [2]),
                _value("x", [2]),
                _value("limit", []),
            ],
            [_value("total", None), _value("history", None)],
        ).SerializeToString(),
    ]
    rng = random.Random(26)
    outcomes = set()
    for _ in range(150):
        data = bytearray(rng.choice(models))
        choice = rng.random()
        if choice < 0.6:
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif choice < 0.8:
            data = data[: rng.randrange(len(data))]
        else:
            at = rng.randrange(len(data))
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        with df.Graph().as_default():
            try:
                import_model(bytes(data))
                outcomes.add("imported")
            except OnnxImportError:
                outcomes.add("refused")
    assert outcomes == {"imported", "refused"}


def test_element_types_without_a_dtype_are_named(fresh_graph):
    model = _model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [_value("x", [2], TensorProto.BFLOAT16)],
        [_value("y", None)],
    )
    with pytest.raises(
        OnnxImportError, match="input 'x': element type BFLOAT16 has no dataflow dtype"
    ):
        import_model(model)


# -- the package and the command line --------------------------------------------------------------


def test_import_dataflow_does_not_import_onnx():
    code = "import sys, dataflow as df; assert 'onnx' not in sys.modules; df.onnx.import_model"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_the_command_line_inspects_and_runs_an_onnx_file(tmp_path, capsys):
    path = tmp_path / "mlp.onnx"
    onnx.save(_mlp(), str(path))
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert "x:0  float32[None, 4]" in text and "probs:0" in text
    assert main(["run", str(path), "--feed", "x=[[1,2,3,4]]", "--fetch", "probs"]) == 0
    printed = capsys.readouterr().out
    x = np.array([[1, 2, 3, 4]], np.float32)
    expected = _reference(_mlp(), {"x": x})["probs"]
    import json

    np.testing.assert_allclose(json.loads(printed)["probs"], expected, rtol=1e-5)
    # optimize writes the imported, optimized graph as a .dfg file whose names are the ONNX ones
    optimized = tmp_path / "mlp.dfg"
    assert main(["optimize", str(path), "-o", str(optimized)]) == 0
    capsys.readouterr()
    with df.Graph().as_default():
        graph = df.io.load_graph(str(optimized))
        with df.Session(graph=graph) as session:
            probs = session.run("probs:0", {"x:0": x})
    np.testing.assert_allclose(probs, expected, rtol=1e-5)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07\x12")
    assert main(["inspect", str(broken)]) == 1
    assert "error: " in capsys.readouterr().err
