"""load_graph rejects malformed and hostile files with a GraphFormatError naming the fault."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

import dataflow as df
from dataflow.io.dfg import GraphFormatError


@pytest.fixture
def saved(tmp_path, fresh_graph):
    """A small saved graph, as (graph.json document, {member: bytes}) to tamper with."""
    x = df.placeholder(df.float32, [2], name="x")
    c = df.constant(np.float32([1.0, 2.0]), name="c")
    df.identity(x + c, name="y")
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    path = tmp_path / "good.dfg"
    df.io.save_graph(fresh_graph, path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    return json.loads(members.pop("graph.json")), members


def write(tmp_path, document, members, raw_json=None):
    path = tmp_path / "bad.dfg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("graph.json", raw_json if raw_json is not None else json.dumps(document))
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def op(document, name):
    return next(o for o in document["ops"] if o["name"] == name)


def load_fails(tmp_path, document, members, match, raw_json=None):
    path = write(tmp_path, document, members, raw_json)
    with pytest.raises(GraphFormatError, match=match):
        df.io.load_graph(path)


def test_the_untampered_file_loads_the_ops_it_lists_and_computes_what_was_saved(tmp_path, saved):
    document, members = saved
    loaded = df.io.load_graph(write(tmp_path, document, members))
    listed = [(record["name"], record["type"]) for record in document["ops"]]
    assert [(op.name, op.type) for op in loaded.get_operations()] == listed
    with df.Session(graph=loaded) as sess:
        assert sess.run("y:0", {"x:0": [0.5, -1.0]}).tolist() == [1.5, 1.0]
        assert sess.run("while/Exit:0") == 3


def test_graph_format_error_is_a_value_error():
    assert issubclass(GraphFormatError, ValueError)


def test_a_file_that_is_not_a_zip_archive(tmp_path):
    path = tmp_path / "bad.dfg"
    path.write_text("{}")
    with pytest.raises(GraphFormatError, match="zip archive"):
        df.io.load_graph(path)


def test_bad_json(tmp_path, saved):
    load_fails(tmp_path, *saved, "not valid JSON", raw_json="{ops: [")


def test_non_standard_json_constants(tmp_path, saved):
    load_fails(tmp_path, *saved, "NaN", raw_json='{"format": NaN}')


def test_wrong_format_name_and_version(tmp_path, saved):
    document, members = saved
    load_fails(tmp_path, dict(document, version=2), members, "version 2 is not supported")
    load_fails(tmp_path, dict(document, version=True), members, "version True is not supported")
    load_fails(tmp_path, dict(document, version=1.0), members, "version 1.0 is not supported")
    load_fails(tmp_path, dict(document, format="other"), members, "format is 'other'")


def test_unknown_op_type(tmp_path, saved):
    document, members = saved
    op(document, "y")["type"] = "LaunchMissiles"
    load_fails(tmp_path, document, members, "op 'y': unknown op type 'LaunchMissiles'")


def test_a_py_func_op_with_a_function_attribute_is_refused(tmp_path, saved):
    document, members = saved
    record = op(document, "y")
    record["type"] = "PyFunc"
    record["attrs"] = {"func": {"str": "os.system"}, "Tout": {"tuple": [{"dtype": "float32"}]}}
    load_fails(tmp_path, document, members, "attribute 'func' must be nothing")


@pytest.mark.parametrize(
    "attr, value, match",
    [
        ("dtype", {"str": "float32"}, "attribute 'dtype' must be a dtype"),
        ("dtype", {"dtype": "complex1024"}, "unknown dtype"),
        ("shape", {"int": 2}, "attribute 'shape' must be a shape"),
        ("shape", {"shape": [2, -1]}, ">= 0"),
        ("shape", {"shape": "2"}, "a shape is a list"),
        ("shape", {"weird": 1}, "unknown value type 'weird'"),
        ("shape", [2], "a typed value is an object with one key"),
        (
            "output_stream",
            {"array": {"key": "a0", "dtype": "float32", "shape": [2], "scalar": False}},
            "attribute 'output_stream' must be 'stdout', 'stderr' or 'file://<path>'",
        ),
    ],
)
def test_wrong_attribute_types(tmp_path, saved, attr, value, match):
    document, members = saved
    op(document, "x")["attrs"][attr] = value
    load_fails(tmp_path, document, members, match)


def test_huge_declared_shape(tmp_path, saved):
    document, members = saved
    op(document, "x")["attrs"]["shape"] = {"shape": [2**30, 2**30, 2**30]}
    load_fails(tmp_path, document, members, "too large")
    op(document, "x")["attrs"]["shape"] = {"shape": [1] * 100}
    load_fails(tmp_path, document, members, "rank 100 is too large")


def test_huge_declared_array_is_refused_before_reading_it(tmp_path, saved):
    document, members = saved
    spec = op(document, "c")["attrs"]["value"]["array"]
    spec["shape"] = [2**20, 2**20]
    load_fails(tmp_path, document, members, "larger than")


def test_an_array_of_unknown_shape_is_refused(tmp_path, saved):
    document, members = saved
    op(document, "c")["attrs"]["value"]["array"]["shape"] = [None]
    load_fails(tmp_path, document, members, "an array has a known shape")


def test_a_bool_array_holding_other_bytes_than_0_and_1_is_refused(tmp_path, saved):
    document, members = saved
    record = op(document, "c")
    record["attrs"]["value"]["array"]["dtype"] = "bool"
    record["attrs"]["dtype"] = {"dtype": "bool"}
    buffer = io.BytesIO()
    np.save(buffer, np.array([True, False]))
    data = buffer.getvalue()
    members["arrays/" + record["attrs"]["value"]["array"]["key"] + ".npy"] = data[:-1] + b"\x02"
    load_fails(tmp_path, document, members, "holds a byte other than 0 and 1")


def test_array_header_disagreeing_with_the_graph(tmp_path, saved):
    document, members = saved
    key = op(document, "c")["attrs"]["value"]["array"]["key"]
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3, np.float32))
    members["arrays/" + key + ".npy"] = buffer.getvalue()
    load_fails(tmp_path, document, members, "holds float32")


@pytest.mark.parametrize(
    "npy, match",
    [
        (b"\x93NUMPZ\x01\x00", "not a valid NPY file \\(no NPY magic string\\)"),
        (b"\x93NUMPY\x03\x00\x10\x00\x00\x00{}", "in NPY version 3, not 1 or 2"),
        (b"\x93NUMPY\x01\x00\xff\xff" + b" " * 65535, "an NPY header of 65535B"),
        (b"\x93NUMPY\x02\x00\x00\x00\x00\x01", "an NPY header of 16777216B"),
        (b"\x93NUMPY\x01\x00\x40\x00{'descr'", "truncated in its NPY header"),
        (b"\x93NUMPY\x01\x00\x03\x00{}\n", "not a valid NPY file \\(Header does not contain"),
    ],
    ids=["magic", "version", "long-header", "long-header-v2", "cut-header", "bad-header"],
)
def test_a_malformed_npy_header_is_refused(tmp_path, saved, npy, match):
    document, members = saved
    key = op(document, "c")["attrs"]["value"]["array"]["key"]
    members["arrays/" + key + ".npy"] = npy
    load_fails(tmp_path, document, members, f"array 'arrays/{key}.npy' .*{match}")


def test_array_needing_pickle_is_refused(tmp_path, saved):
    document, members = saved
    spec = op(document, "c")["attrs"]["value"]["array"]
    spec["dtype"] = "object"
    load_fails(tmp_path, document, members, "not allowed")


def test_missing_array(tmp_path, saved):
    document, members = saved
    load_fails(tmp_path, document, {}, "has no array")


def test_const_value_of_another_dtype(tmp_path, saved):
    document, members = saved
    op(document, "c")["attrs"]["dtype"] = {"dtype": "int32"}
    load_fails(tmp_path, document, members, "does not match dtype int32")


def test_dangling_input(tmp_path, saved):
    document, members = saved
    op(document, "y")["inputs"][0] = ["ghost", 0]
    load_fails(tmp_path, document, members, "op 'ghost', which is not in the file")


def test_input_from_an_output_that_does_not_exist(tmp_path, saved):
    document, members = saved
    op(document, "y")["inputs"][0] = ["add", 5]
    load_fails(tmp_path, document, members, "has 1 outputs, not output 5")


def test_input_defined_later_outside_a_loop_back_edge(tmp_path, saved):
    document, members = saved
    op(document, "add")["inputs"][0] = ["y", 0]
    load_fails(tmp_path, document, members, "defined later")


def test_dangling_control_input(tmp_path, saved):
    document, members = saved
    op(document, "y")["control_inputs"] = ["ghost"]
    load_fails(tmp_path, document, members, "control input 'ghost' is not in the file")


def test_duplicate_names(tmp_path, saved):
    document, members = saved
    op(document, "y")["name"] = "x"
    load_fails(tmp_path, document, members, "op 'x': duplicate op name")


def test_invalid_op_name(tmp_path, saved):
    document, members = saved
    op(document, "y")["name"] = "bad name!"
    load_fails(tmp_path, document, members, "not a valid op name")


def test_an_op_whose_inputs_do_not_type_check(tmp_path, saved):
    document, members = saved
    op(document, "while/Less")["inputs"][1] = ["c", 0]
    load_fails(tmp_path, document, members, "op 'while/Less': invalid op")


def test_recorded_output_dtype_disagreeing_with_inference(tmp_path, saved):
    document, members = saved
    op(document, "y")["outputs"][0]["dtype"] = "int32"
    load_fails(tmp_path, document, members, "recorded as int32")


def test_missing_and_unknown_fields(tmp_path, saved):
    document, members = saved
    del op(document, "y")["attrs"]
    load_fails(tmp_path, document, members, "missing field")
    document, members = saved
    document["extra"] = 1
    load_fails(tmp_path, document, members, "unknown field")


def test_context_referring_to_a_missing_tensor(tmp_path, saved):
    document, members = saved
    document["contexts"][0]["pivot"] = "ghost:0"
    load_fails(tmp_path, document, members, "tensor 'ghost:0' is not in the graph")


def test_context_nesting_must_point_backwards(tmp_path, saved):
    document, members = saved
    document["contexts"][0]["outer"] = 0
    load_fails(tmp_path, document, members, "earlier context")


def test_collection_referring_to_a_missing_variable(tmp_path, saved):
    document, members = saved
    document["collections"]["variables"] = [{"variable": 3}]
    load_fails(tmp_path, document, members, "no variable #3")


@pytest.mark.parametrize(
    "key, item, match",
    [
        (
            "variables",
            {"value": {"int": 3}},
            "collection 'variables': holds only variables, not int",
        ),
        ("trainable_variables", {"tensor": "y:0"}, "holds only variables, not Tensor"),
        ("while_context", {"context": 0}, "holds only the records of loops, not CondContext"),
        ("cond_context", {"context": 2}, "holds only the records of conds, not WhileContext"),
    ],
)
def test_standard_collections_hold_only_what_their_readers_expect(
    tmp_path, fresh_graph, key, item, match
):
    x = df.placeholder(df.float32, [], name="x")
    df.identity(df.cond(x > 0, lambda: x, lambda: -x), name="y")
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    df.Variable(1.0, name="v")
    df.io.save_graph(fresh_graph, tmp_path / "good.dfg")
    with zipfile.ZipFile(tmp_path / "good.dfg") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members.pop("graph.json"))
    assert [c["kind"] for c in document["contexts"]] == ["cond", "cond", "while"]
    document["collections"][key] = [item]
    load_fails(tmp_path, document, members, match)


def test_deeply_nested_values(tmp_path, saved):
    document, members = saved
    raw = json.dumps(document).replace(
        '"attrs": {}', '"attrs": {"t": ' + '{"list": [' * 5000 + "]}" * 5000 + "}", 1
    )
    load_fails(tmp_path, document, members, "nested too deeply", raw_json=raw)


def test_a_graph_with_a_data_cycle_is_saved_and_refused_on_load(tmp_path, fresh_graph):
    x = df.placeholder(df.float32, [], name="x")
    a = df.identity(x, name="a")
    b = df.identity(a, name="b")
    a.op._update_input(0, b)  # a malformed graph: a <- b <- a, no loop frame
    path = tmp_path / "cycle.dfg"
    df.io.save_graph(fresh_graph, path)  # terminates: the save order tolerates the cycle
    with pytest.raises(GraphFormatError, match="defined later"):
        df.io.load_graph(path)


def with_copies_of_c(document, count):
    """``count`` more Const ops whose value is the array of the Const ``c`` (the same key)."""
    record = op(document, "c")
    for k in range(count):
        document["ops"].append(dict(json.loads(json.dumps(record)), name=f"c_{k}"))
    return document


def array_bytes(members):
    """The bytes the arrays of a saved file hold, each counted once."""
    return sum(np.load(io.BytesIO(data)).nbytes for data in members.values())


def test_an_array_many_constants_share_is_decoded_once_and_counted_once(tmp_path, saved):
    document, members = saved
    budget = array_bytes(members)
    path = write(tmp_path, with_copies_of_c(document, 200), members)
    loaded = df.io.load_graph(path, max_array_bytes=budget)  # 200 more references fit
    values = [loaded.get_operation_by_name(f"c_{k}").attrs["value"] for k in range(200)]
    assert all(v is loaded.get_operation_by_name("c").attrs["value"] for v in values)
    assert not values[0].flags.writeable  # as df.constant makes its values
    np.testing.assert_array_equal(values[0], np.float32([1.0, 2.0]))


def test_the_arrays_of_a_file_share_one_size_budget(tmp_path, saved):
    document, members = saved
    key = op(document, "c")["attrs"]["value"]["array"]["key"]
    copy = with_copies_of_c(document, 1)["ops"][-1]
    copy["attrs"]["value"]["array"]["key"] = "other"
    members["arrays/other.npy"] = members["arrays/" + key + ".npy"]
    path = write(tmp_path, document, members)
    budget = array_bytes(members)
    df.io.load_graph(path, max_array_bytes=budget)
    with pytest.raises(GraphFormatError, match=f"hold more than {budget - 1}B in all"):
        df.io.load_graph(path, max_array_bytes=budget - 1)


def test_an_array_key_declared_twice_with_different_shapes_is_refused(tmp_path, saved):
    document, members = saved
    with_copies_of_c(document, 1)["ops"][-1]["attrs"]["value"]["array"]["shape"] = [1, 2]
    load_fails(
        tmp_path,
        document,
        members,
        "is declared as float32\\[1, 2\\] here but as float32\\[2\\] elsewhere",
    )


def as_split(document, attrs, outputs=None):
    record = op(document, "y")
    record.update(type="Split", attrs=attrs, inputs=[["add", 0]])
    record["outputs"] = outputs or [{"dtype": "float32", "shape": [1]}] * 2
    return document


@pytest.mark.parametrize(
    "attrs, match",
    [
        (
            {"num_split": {"int": 2**40}, "axis": {"int": 0}},
            "'num_split' must be an integer from 1",
        ),
        ({"num_split": {"int": 0}, "axis": {"int": 0}}, "'num_split' must be an integer from 1"),
        ({"size_splits": {"list": [{"int": 1}] * 70000}, "axis": {"int": 0}}, "at most 65536"),
        ({"num": {"int": 2**40}, "axis": {"int": 0}}, "'num' must be an integer from 0 to 65536"),
        ({"Tout": {"int": 3}}, "'Tout' must be a tuple of at most 65536 dtypes"),
        ({"Tout": {"tuple": [{"dtype": "float32"}] * 70000}}, "at most 65536 dtypes"),
    ],
)
def test_attributes_that_set_the_number_of_outputs_are_bounded(tmp_path, saved, attrs, match):
    document, members = saved
    load_fails(tmp_path, as_split(document, attrs), members, match)


def test_the_outputs_an_op_lists_must_agree_with_its_attributes_before_it_is_built(tmp_path, saved):
    document, members = saved
    attrs = {"num_split": {"int": 60000}, "axis": {"int": 0}}
    load_fails(
        tmp_path,
        as_split(document, attrs),
        members,
        "attribute 'num_split' makes 60000 outputs, but 'outputs' lists 2",
    )
    record = op(document, "y")
    record["outputs"] = [{"dtype": "float32", "shape": [1]}] * 70000
    load_fails(tmp_path, document, members, "'outputs' is a list of at most 65536 outputs")


def test_a_split_in_two_loads(tmp_path, saved):
    document, members = saved
    attrs = {"num_split": {"int": 2}, "axis": {"int": 0}}
    loaded = df.io.load_graph(write(tmp_path, as_split(document, attrs), members))
    assert len(loaded.get_operation_by_name("y").outputs) == 2


@pytest.mark.parametrize(
    "steps",
    [
        [["Add"]],
        [["Add", [0, "1"], "add", "f.py:1"]],
        [["Exp", [-2], "exp", "f.py:1"]],
        [["Exp", [], "exp", "f.py:1"]],
        "Add",
    ],
)
def test_malformed_fused_steps_are_refused(tmp_path, saved, steps):
    document, members = saved
    record = op(document, "y")
    record["type"] = "FusedElementwise"
    record["attrs"] = {
        "steps": json.loads(json.dumps(encode(steps))),
        "inplace_input": {"int": -1},
        "T": {"dtype": "float32"},
    }
    load_fails(tmp_path, document, members, "attribute 'steps' must be a list of fused steps")


def encode(value):
    """The typed JSON of a plain value (lists, strings, ints)."""
    if isinstance(value, list):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, str):
        return {"str": value}
    return {"int": value}


def printing_to_a_file(tmp_path, graph):
    """A saved graph whose print op appends to ``tmp_path / "log.txt"``."""
    x = df.placeholder(df.float32, [], name="x")
    log = tmp_path / "log.txt"
    with df.control_dependencies([df.print("x is", x, output_stream=f"file://{log}")]):
        df.identity(x, name="y")
    path = tmp_path / "prints.dfg"
    df.io.save_graph(graph, path)
    return path, log


def test_a_graph_printing_to_a_file_loads_only_when_the_caller_allows_it(tmp_path, fresh_graph):
    path, log = printing_to_a_file(tmp_path, fresh_graph)
    with pytest.raises(GraphFormatError, match=f"prints to the file '{log}'.*allow_file_output"):
        df.io.load_graph(path)
    loaded = df.io.load_graph(path, allow_file_output=True)
    with df.Session(graph=loaded) as sess:
        sess.run("y:0", {"x:0": 2.0})
    assert log.read_text() == "x is 2\n"


def test_a_graph_printing_to_stderr_loads_and_prints_there(tmp_path, fresh_graph, capfd):
    x = df.placeholder(df.float32, [], name="x")
    shout = df.print("x is", x, name="shout")
    with df.control_dependencies([shout]):
        df.identity(x, name="y")
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert loaded.get_operation_by_name("shout").get_attr("output_stream") == "stderr"
    with df.Session(graph=loaded) as sess:
        assert sess.run("y:0", {"x:0": 2.0}) == 2.0
    assert capfd.readouterr() == ("", "x is 2\n")
