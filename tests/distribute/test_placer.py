"""The placer: which device each op of a run gets, and which requests are errors.

Expected devices and messages are those TensorFlow 2.21's ``tf.compat.v1`` placer gives for the
same program (graph mode, ``log_device_placement``) on a machine with no GPU.
"""

import pytest
from placed_programs import partitioned_config

import dataflow as df
from dataflow.client.placer import available_devices, place

HERE = __file__
LOCAL = "/job:localhost/replica:0/task:0/device:CPU:"


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def placed(cpus=1, soft=False, cluster=None, ops=None):
    graph = df.get_default_graph()
    config = df.ConfigProto(device_count={"CPU": cpus}, allow_soft_placement=soft)
    return place(graph, ops or graph.get_operations(), config, cluster)


def test_every_op_without_a_request_runs_on_the_first_local_cpu():
    x = df.constant(1.0, name="x")
    df.identity(x, name="y")
    assert placed(cpus=3) == {"x": LOCAL + "0", "y": LOCAL + "0"}


def test_a_partial_request_is_completed_to_the_first_matching_device():
    with df.device("/cpu:2"):
        a = df.identity(df.constant(1.0, name="x"), name="a")
    with df.device("/job:localhost/task:0"):
        df.identity(a, name="b")
    assert placed(cpus=3) == {"x": LOCAL + "2", "a": LOCAL + "2", "b": LOCAL + "0"}


def test_place_takes_op_names_and_answers_for_those_ops_only():
    with df.device("/cpu:1"):
        df.identity(df.constant(1.0, name="x"), name="a")
    df.constant(2.0, name="unrelated")
    assert placed(cpus=2, ops=["a", "x"]) == {"x": LOCAL + "1", "a": LOCAL + "1"}


def test_a_constant_runs_beside_its_consumers_when_they_agree():
    # TF: a, add/y and add on CPU:1; c and mul (which reads add on CPU:1) on CPU:0
    with df.device("/cpu:1"):
        a = df.constant(1.0, name="a")
        b = df.add(a, 1.0, name="add")
    c = df.constant(2.0, name="c")
    df.multiply(c, b, name="mul")
    assert placed(cpus=2) == {
        "a": LOCAL + "1",
        "add/y": LOCAL + "1",
        "add": LOCAL + "1",
        "c": LOCAL + "0",
        "mul": LOCAL + "0",
    }


def test_a_device_function_places_the_ops_it_names():
    def multiplications_on_cpu1(op):
        return "/cpu:1" if op.type == "Mul" else ""

    with df.device(multiplications_on_cpu1):
        x = df.constant(2.0, name="x")
        y = df.multiply(x, 3.0, name="y")
        df.add(y, 1.0, name="z")
    # TF: x and y/y follow y to CPU:1 as its only consumer; z and z/y stay on CPU:0
    assert placed(cpus=2) == {
        "x": LOCAL + "1",
        "y/y": LOCAL + "1",
        "y": LOCAL + "1",
        "z/y": LOCAL + "0",
        "z": LOCAL + "0",
    }


@pytest.mark.parametrize("use_resource", [True, False])
def test_a_variables_initializer_reads_and_updates_run_where_the_variable_lives(use_resource):
    with df.device("/cpu:1"):
        v = df.Variable(1.0, name="v", use_resource=use_resource)
    with df.device("/cpu:0"):  # TF ignores this request for the update of v
        bumped = df.assign_add(v, 1.0, name="aa")
        doubled = df.multiply(v.read_value(), 2.0, name="doubled")
    places = placed(cpus=2)
    for op in df.get_default_graph().get_operations():
        if op.type in ("VarHandleOp", "Assign", "AssignAdd", "ReadVariableOp"):
            assert places[op.name] == LOCAL + "1", op.name
    assert places["aa/value"] == places["doubled"] == LOCAL + "0"
    assert places[bumped.op.name] == LOCAL + "1" and places[doubled.op.name] == LOCAL + "0"


def test_a_reference_kept_by_an_assign_colocates_it_with_the_variable():
    from dataflow.ops.ref_variables import variable

    with df.device("/cpu:1"):
        ref = variable([], df.float32, name="w")
    with df.device("/cpu:0"):
        df.assign(ref, 3.0, name="set_w")
        df.add(ref, 1.0, name="read_w")  # reads the value: no reference edge
    places = placed(cpus=2)
    assert places["set_w"] == places["w"] == LOCAL + "1"
    assert places["read_w"] == LOCAL + "0"


def test_an_optimizers_updates_run_beside_their_variables():
    with df.device("/cpu:1"):
        v = df.Variable(3.0, name="v")
    loss = df.square(v.read_value())
    train = df.train.GradientDescentOptimizer(0.1).minimize(loss)
    places = placed(cpus=2)
    updates = [op for op in df.get_default_graph().get_operations() if op.type == "AssignSub"]
    assert updates and all(places[op.name] == LOCAL + "1" for op in updates)
    assert places[train.name] == LOCAL + "0"


def test_colocated_ops_share_the_device_of_their_group():
    with df.device("/cpu:1"):
        a = df.constant(1.0, name="a")
    with df.colocate_with(a):
        b = df.identity(a, name="b")
    b.op._set_device("")  # the group alone carries the device
    with df.device("/cpu:2"):
        df.identity(b, name="c")
    assert placed(cpus=3) == {"a": LOCAL + "1", "b": LOCAL + "1", "c": LOCAL + "2"}


def _conflicting_group(device):
    with df.device("/cpu:1"):
        a = df.constant(1.0, name="a")
        a2 = df.identity(a, name="a2")
    with df.colocate_with(a2):
        b = df.identity(a2, name="b")
    b.op._set_device(device)
    return a2, b


@pytest.mark.parametrize(
    "device, why",
    [
        ("/gpu:0", "incompatible types: '/device:GPU:0' and '/device:CPU:1'"),
        ("/cpu:0", "incompatible ids: '/device:CPU:0' and '/device:CPU:1'"),
    ],
)
def test_a_colocation_group_asking_for_two_devices_is_an_error_naming_both_ops(device, why):
    a2, b = _conflicting_group(device)
    with pytest.raises(df.errors.InvalidArgumentError) as error:
        placed(cpus=2)
    assert str(error.value).endswith(
        f"Cannot colocate nodes op 'b' (Identity) created at {b.op.location} and op 'a2' "
        f"(Identity) created at {a2.op.location}: Cannot merge devices with {why}"
    )
    assert error.value.op is b.op and f"{HERE}:" in str(b.op.location)


@pytest.mark.parametrize("device", ["/gpu:0", "/cpu:0"])
def test_soft_placement_drops_the_type_and_index_a_colocation_group_disagrees_on(device):
    _conflicting_group(device)
    # TF: a2 and b on CPU:0 (the group keeps only what its members agree on); a stays on CPU:1
    assert placed(cpus=2, soft=True) == {"a": LOCAL + "1", "a2": LOCAL + "0", "b": LOCAL + "0"}


def test_a_group_on_two_jobs_is_an_error_even_with_soft_placement():
    cluster = {"ps": 1, "worker": 1}
    with df.device("/job:ps"):
        a = df.constant(1.0, name="a")
    with df.colocate_with(a):
        b = df.identity(a, name="b")
    b.op._set_device("/job:worker")
    with pytest.raises(df.errors.InvalidArgumentError, match="incompatible jobs: '/job:worker'"):
        placed(soft=True, cluster=cluster)


UNAVAILABLE = (
    "Cannot assign a device for operation a: op 'a' (Const) created at {} was explicitly "
    "assigned to {} but available devices are [ {} ]. Make sure the device specification "
    "refers to a valid device."
)


@pytest.mark.parametrize("device", ["/device:CPU:3", "/job:ps/task:0", "/job:localhost/task:1"])
def test_a_device_that_does_not_exist_is_an_error_naming_the_op_and_line(device):
    with df.device(device):
        a = df.constant(1.0, name="a")
    with pytest.raises(df.errors.InvalidArgumentError) as error:
        placed(cpus=2)
    devices = f"{LOCAL}0, {LOCAL}1"
    assert str(error.value).endswith(UNAVAILABLE.format(a.op.location, device, devices))
    assert f"{HERE}:" in str(a.op.location)


def test_soft_placement_moves_a_missing_cpu_or_gpu_to_the_tasks_first_cpu_but_not_a_task():
    with df.device("/cpu:3"):
        df.constant(1.0, name="a")
    with df.device("/gpu:0"):
        df.constant(1.0, name="b")
    assert placed(cpus=2, soft=True) == {"a": LOCAL + "0", "b": LOCAL + "0"}
    with df.device("/job:localhost/task:1/cpu:0"):
        df.constant(1.0, name="c")
    with pytest.raises(df.errors.InvalidArgumentError, match="operation c: "):
        placed(cpus=2, soft=True)


def test_a_cluster_offers_its_tasks_and_unplaced_ops_go_to_the_first_worker():
    cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": 2}
    with df.device("/job:ps/task:1"):
        v = df.Variable(1.0, name="v")
    with df.device("/job:ps"):
        df.constant(1.0, name="on_ps")
    df.identity(v.read_value(), name="y")
    places = placed(cluster=cluster)
    assert places["v"] == places["v/Assign"] == "/job:ps/replica:0/task:1/device:CPU:0"
    assert places["on_ps"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert places["y"] == "/job:worker/replica:0/task:0/device:CPU:0"
    names = [d.to_string() for d in available_devices(2, {"ps": 1, "worker": {1: "w1"}})]
    assert names == [
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:ps/replica:0/task:0/device:CPU:1",
        "/job:worker/replica:0/task:1/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:1",
    ]


def test_without_a_cluster_only_the_local_task_exists():
    with df.device("/job:worker/task:0"):
        df.constant(1.0, name="a")
    with pytest.raises(df.errors.InvalidArgumentError, match="explicitly assigned to /job:worker"):
        placed()
    assert placed(cluster={"worker": 1}) == {"a": "/job:worker/replica:0/task:0/device:CPU:0"}


def test_a_run_places_its_ops_and_keeps_the_placement_with_its_plan():
    with df.device("/cpu:1"):
        y = df.multiply(df.constant(2.0, name="x"), 3.0, name="y")
    with df.Session(config=partitioned_config(device_count={"CPU": 2})) as sess:
        assert sess.run(y) == 6.0
        (plan,) = sess._plans.values()
        assert plan.placement == {"x": LOCAL + "1", "y/y": LOCAL + "1", "y": LOCAL + "1"}


def test_log_device_placement_prints_the_placers_choice_once_per_op(capfd):
    with df.device("/cpu:1"):
        y = df.multiply(df.constant(2.0, name="x"), 3.0, name="y")
    z = df.add(y, 1.0, name="z")
    config = partitioned_config(device_count={"CPU": 2}, log_device_placement=True)
    with df.Session(config=config) as sess:
        sess.run(z)
        sess.run([y, z])
    assert capfd.readouterr().err.splitlines() == [
        f"x: (Const): {LOCAL}1",
        f"y/y: (Const): {LOCAL}1",
        f"y: (Mul): {LOCAL}1",
        f"z/y: (Const): {LOCAL}0",
        f"z: (Add): {LOCAL}0",
    ]


def test_a_run_that_cannot_be_placed_leaves_the_session_usable():
    with df.device("/cpu:0"):
        v = df.Variable(5.0, name="v")
    with df.device("/cpu:7"):
        elsewhere = df.constant(1.0, name="elsewhere")
    bumped = df.assign_add(v, elsewhere, name="bump")
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError, match="operation elsewhere: "):
            sess.run(bumped)
        with pytest.raises(df.errors.InvalidArgumentError, match="operation elsewhere: "):
            sess.run(bumped)
        assert sess.run(v) == 5.0
