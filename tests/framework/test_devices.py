"""Devices as annotations: device scopes, DeviceSpec, colocation, and placement on the host.

Expected strings and messages are those TensorFlow 2.21's ``tf.compat.v1`` (graph mode) gives
for the same program on a machine with one CPU and no GPU.
"""

import numpy as np
import pytest
from placed_programs import partitioned_config

import dataflow as df

HERE = __file__


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_device_strings_are_recorded_in_canonical_form_and_merged_inner_first():
    with df.device("/cpu:0"):
        a = df.constant(1.0, name="a")
    with df.device("/job:ps"):
        with df.device("/cpu:0"):
            b = df.constant(1.0, name="b")
        with df.device("/task:1"):
            b2 = df.constant(1.0, name="b2")
        with df.device(None):
            b3 = df.constant(1.0, name="b3")
        with df.device(""):
            b4 = df.constant(1.0, name="b4")
    with df.device("/gpu:0"), df.device("/cpu:1"):
        c = df.constant(1.0, name="c")
    assert (a.op.device, a.device) == ("/device:CPU:0", "/device:CPU:0")
    assert [t.op.device for t in (b, b2, b3, b4, c)] == [
        "/job:ps/device:CPU:0",
        "/job:ps/task:1",
        "",
        "/job:ps",
        "/device:CPU:1",
    ]


def test_a_device_function_sees_the_op_and_outer_scopes_fill_in_what_it_leaves():
    def constants_on_worker(op):
        return "/job:w" if op.type == "Const" else ""

    with df.device("/gpu:0"), df.device(constants_on_worker):
        c2 = df.constant(1.0, name="c2")
        c3 = df.identity(c2, name="c3")
    assert (c2.op.device, c3.op.device) == ("/job:w/device:GPU:0", "/device:GPU:0")


def test_variables_and_their_ops_take_the_device_scope():
    with df.device("/job:ps/task:0"):
        v = df.Variable(1.0, name="v")
    assert v.device == v.op.device == v.initializer.device == "/job:ps/task:0"
    assert v.value().device == "/job:ps/task:0"


def test_device_spec_parses_prints_and_merges_as_tensorflow():
    spec = df.DeviceSpec.from_string("/job:ps/replica:0/task:1/device:CPU:0")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == (
        "ps",
        0,
        1,
        "CPU",
        0,
    )
    assert spec.to_string() == "/job:ps/replica:0/task:1/device:CPU:0"
    assert df.DeviceSpec(job="ps", device_type="GPU", device_index=0).to_string() == (
        "/job:ps/device:GPU:0"
    )
    assert df.DeviceSpec.from_string("/gpu:*").to_string() == "/device:GPU:*"
    merged = df.DeviceSpec.from_string("/job:ps/cpu:0")
    merged.merge_from(df.DeviceSpec.from_string("/task:2/gpu:1"))
    assert merged.to_string() == "/job:ps/task:2/device:GPU:1"


@pytest.mark.parametrize(
    "device, message",
    [
        ("/foo:0", "Unknown attribute 'foo' is encountered while parsing the device spec"),
        ("nonsense", "Unknown attribute 'nonsense'"),
        ("/gpu:x", "invalid literal for int"),
        ("/cpu:0/gpu:0", "Multiple device types are not allowed"),
        ("/job:ps/task:x", "invalid literal for int"),
    ],
)
def test_a_malformed_device_string_is_an_error_naming_the_line(device, message):
    with pytest.raises(ValueError, match=message) as error:
        df.device(device).__enter__()
    assert f"{HERE}:" in str(error.value)


def test_colocate_with_records_the_class_attribute_and_takes_the_ops_device():
    a = df.constant(1.0, name="a")
    v = df.Variable(1.0, name="v")
    with df.colocate_with(v.op):
        e = df.constant(2.0, name="e")
    assert e.op.colocation_groups() == [b"loc:@v"] and e.op.get_attr("_class") == ["loc:@v"]
    assert e.op.device == "" and a.op.colocation_groups() == [b"loc:@a"]
    with df.device("/cpu:0"):
        w = df.Variable(1.0, name="w")
        with df.colocate_with(a):  # the colocated op has no device: the scope is ignored
            inside = df.constant(0.0, name="inside")
    with df.device("/job:ps"):
        with df.colocate_with(w):
            f = df.constant(2.0, name="f")
            with df.colocate_with(a.op, ignore_existing=True):
                g = df.constant(1.0, name="g")
            with df.colocate_with(a.op):
                h = df.constant(1.0, name="h")
    assert (inside.op.device, f.op.device) == ("", "/device:CPU:0")
    assert f.op.colocation_groups() == [b"loc:@w"]
    assert g.op.colocation_groups() == [b"loc:@a"]
    assert h.op.colocation_groups() == [b"loc:@a", b"loc:@w"]
    with pytest.raises(ValueError, match="Trying to reset colocation"):
        df.colocate_with(None).__enter__()


GPU_MESSAGE = (
    "Cannot assign a device for operation mul: op 'mul' (Mul) created at {} was explicitly "
    "assigned to /device:GPU:0 but available devices are [ "
    "/job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device specification refers "
    "to a valid device. The requested device appears to be a GPU, but CUDA is not enabled."
)


def test_a_gpu_op_is_an_error_without_soft_placement_and_runs_on_the_host_with_it():
    with df.device("/gpu:0"):
        a = df.constant(1.0, name="a")
        doubled = a * 2.0
    assert df.ConfigProto().allow_soft_placement is False  # TensorFlow's default
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError) as error:
            sess.run(doubled)
        # TF names mul: a constant is placed after the ops that consume it
        assert str(error.value).endswith(GPU_MESSAGE.format(doubled.op.location))
        assert sess.run(df.constant(3.0)) == 3.0  # the Session is still usable
    with df.Session(config=df.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(doubled) == 2.0


@pytest.mark.parametrize(
    "device, soft, runs",
    [
        ("/job:ps/task:0", True, False),  # another task is never this process
        ("/task:1", True, False),
        ("/cpu:1", False, False),
        ("/cpu:1", True, True),
        ("/device:TPU:0", True, True),
        ("/job:localhost/replica:0/task:0/cpu:0", False, True),
    ],
)
def test_which_devices_the_host_satisfies(device, soft, runs):
    with df.device(device):
        a = df.constant(1.0, name="a")
    with df.Session(config=df.ConfigProto(allow_soft_placement=soft)) as sess:
        if runs:
            assert sess.run(a) == 1.0
        else:
            with pytest.raises(df.errors.InvalidArgumentError, match="Cannot assign a device"):
                sess.run(a)


def test_device_count_offers_more_host_cpus():
    with df.device("/cpu:1"):
        a = df.constant(1.0, name="a")
    with df.Session(config=partitioned_config(device_count={"CPU": 2})) as sess:
        assert sess.run(a) == 1.0


def test_log_device_placement_prints_each_op_once(capfd):
    with df.device("/gpu:0"):
        y = df.multiply(df.constant(1.0, name="a"), 2.0, name="mul")
    config = df.ConfigProto(log_device_placement=True, allow_soft_placement=True)
    with df.Session(config=config) as sess:
        sess.run(y)
        sess.run(y)
    lines = capfd.readouterr().err.splitlines()
    host = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert sorted(lines) == [
        f"a: (Const): {host}",
        f"mul/y: (Const): {host}",
        f"mul: (Mul): {host}",
    ]


def test_devices_inside_cond_and_while_loop_bodies():
    x = df.placeholder(df.float32, [])

    def body(i):
        with df.device("/gpu:0"):
            return i + 1.0

    out = df.while_loop(lambda i: i < 3.0, body, [x])
    with df.device("/cpu:0"):
        chosen = df.cond(x > 0, lambda: x * 2.0, lambda: -x)
    ops = df.get_default_graph().get_operations()
    assert [op.name for op in ops if op.device == "/device:GPU:0"] == ["while/add/y", "while/add"]
    assert all(op.device == "/device:CPU:0" for op in ops if op.name.startswith("cond/"))
    with df.Session(config=df.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run([out, chosen], {x: 1.0}) == [3.0, 2.0]


def test_devices_and_colocation_save_load_and_render(fresh_graph, tmp_path):
    with df.device("/job:localhost/gpu:1"):
        v = df.Variable(np.float32(2.0), name="v")
    with df.colocate_with(v):
        y = df.multiply(v, 3.0, name="y")
    path = tmp_path / "devices.dfg"
    df.io.save_graph(fresh_graph, path)
    loaded = df.io.load_graph(path)
    assert loaded.get_operation_by_name("v").device == "/job:localhost/device:GPU:1"
    assert loaded.get_operation_by_name("y").colocation_groups() == [b"loc:@v"]
    assert loaded.get_operation_by_name("y").device == "/job:localhost/device:GPU:1"
    with df.Session(graph=loaded, config=df.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run("v/Assign")
        assert sess.run("y:0") == 6.0
    dot = df.render(y, format="dot").source
    assert "on /job:localhost/device:GPU:1" in dot


def test_a_file_with_a_malformed_device_is_refused(fresh_graph, tmp_path):
    import json
    import zipfile

    df.constant(1.0, name="a")
    path = tmp_path / "graph.dfg"
    df.io.save_graph(fresh_graph, path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["graph.json"])
    document["ops"][0]["device"] = "/gpu:x"
    members["graph.json"] = json.dumps(document).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(df.io.GraphFormatError, match="op 'a'.*bad device"):
        df.io.load_graph(path)


def test_with_dependencies_is_colocated_with_its_output():
    from primitives.control_flow_ops import with_dependencies

    with df.device("/job:ps"):
        placed = df.Variable([0.0], name="placed")
    free = df.Variable([0.0], name="free")
    on_ps = with_dependencies([placed.initializer], placed)
    with df.device("/job:worker/device:GPU:1"):
        beside_free = with_dependencies([free.initializer], free)
    # TF: '/job:ps' in the first device; the second has no device but the colocation group
    assert on_ps.device == "/job:ps" and on_ps.op.colocation_groups() == [b"loc:@placed"]
    assert beside_free.device == "" and beside_free.op.colocation_groups() == [b"loc:@free"]


@pytest.mark.parametrize("colocate", [False, True])
def test_gradients_colocated_with_their_ops_take_the_forward_device(colocate):
    v = df.constant(2.0, name="v")

    def body(x):
        with df.device("/device:CPU:0"):
            return df.square(x)

    loop = df.while_loop(lambda x: x < 100.0, body, [v], parallel_iterations=1)
    (grad,) = df.gradients(loop, v, colocate_gradients_with_ops=colocate)
    placed = [op.name for op in df.get_default_graph().get_operations() if op.device]
    square_grad = [f"gradients/while/Square_grad/{n}" for n in ("Mul/y", "Mul", "Mul_1")]
    # As TF's testWhileGrad_ColocateGradients: the saved values' stacks stay unplaced.
    assert placed == ["while/Square"] + (square_grad if colocate else [])
    with df.Session() as sess:
        assert sess.run(grad) == 1024.0


def test_local_devices_are_the_hosts_cpus_as_many_as_the_config_asks():
    (only,) = df.device_lib.list_local_devices()
    assert (only.name, only.device_type) == ("/device:CPU:0", "CPU")
    config = df.ConfigProto(device_count={"CPU": 3})
    names = [d.name for d in df.device_lib.list_local_devices(config)]
    assert names == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    assert "GPU" not in {d.device_type for d in df.device_lib.list_local_devices(config)}
