"""``train.ClusterSpec`` and ``train.replica_device_setter``, with TensorFlow 2.21's
``tf.compat.v1`` answers for the same calls."""

import pytest

import dataflow as df
from dataflow.client.placer import place


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_a_cluster_spec_lists_jobs_tasks_and_addresses():
    spec = df.train.ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": {0: "p0:1", 2: "p2:1"}})
    assert spec.jobs == ["worker", "ps"]
    assert spec.as_dict() == {"worker": ["w0:1", "w1:1"], "ps": {0: "p0:1", 2: "p2:1"}}
    assert (spec.num_tasks("ps"), spec.task_indices("ps")) == (2, [0, 2])
    assert spec.job_tasks("ps") == ["p0:1", None, "p2:1"]
    assert spec.task_address("ps", 2) == "p2:1"
    assert repr(spec) == "ClusterSpec({'ps': {0: 'p0:1', 2: 'p2:1'}, 'worker': ['w0:1', 'w1:1']})"
    assert df.train.ClusterSpec(spec) == spec and not df.train.ClusterSpec({})
    assert df.train.ClusterSpec({"a": {0: "x"}}).as_dict() == {"a": ["x"]}


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda s: s.num_tasks("x"), ValueError, "No such job in cluster: 'x'"),
        (lambda s: s.task_address("ps", 1), ValueError, "No task with index 1 in job 'ps'"),
        (lambda s: s.job_tasks("x"), ValueError, "No such job in cluster: 'x'"),
        (
            lambda s: df.train.ClusterSpec({"a": 3}),
            TypeError,
            "The tasks for job 'a' must be a list or a dictionary from integers to strings.",
        ),
        (lambda s: df.train.ClusterSpec(3), TypeError, "`cluster` must be a dictionary"),
    ],
)
def test_a_cluster_spec_refuses_what_tensorflow_refuses(call, error, message):
    spec = df.train.ClusterSpec({"ps": {0: "p0:1", 2: "p2:1"}})
    with pytest.raises(error) as caught:
        call(spec)
    assert str(caught.value).startswith(message)


def test_the_replica_device_setter_deals_variables_round_robin_to_parameter_servers():
    with df.device(df.train.replica_device_setter(ps_tasks=2)):
        v1 = df.Variable(1.0, name="v1")
        v2 = df.Variable(1.0, name="v2")
        v3 = df.Variable(1.0, name="v3")
        total = df.add(v1, v2, name="add")
        with df.device("/job:ps/task:1"):  # takes its turn, keeps its task
            v4 = df.Variable(1.0, name="v4")
        with df.device("/gpu:0"):
            scaled = df.multiply(total, 2.0, name="mul")
            v5 = df.Variable(1.0, name="v5")
    # TF's op.device for the same program
    assert [v.op.device for v in (v1, v2, v3, v4, v5)] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0/device:GPU:0",
    ]
    assert (total.op.device, scaled.op.device) == ("/job:worker", "/job:worker/device:GPU:0")


def test_the_replica_device_setter_reads_the_parameter_servers_from_a_cluster():
    cluster = df.train.ClusterSpec({"ps": ["a", "b", "c"], "worker": ["w"]})
    setter = df.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")
    with df.device(setter):
        variables = [df.Variable(1.0, name=f"v{i}") for i in range(4)]
        doubled = df.multiply(variables[0], 2.0, name="doubled")
    assert [v.op.device for v in variables] == [f"/job:ps/task:{i}" for i in (0, 1, 2, 0)]
    assert doubled.op.device == "/job:worker/task:0"
    assert df.train.replica_device_setter(cluster={"worker": ["w"]}) is None
    assert df.train.replica_device_setter() is None
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        df.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_a_parameter_server_graph_places_each_variables_reads_and_updates_on_its_task():
    cluster = df.train.ClusterSpec({"ps": ["p0", "p1"], "worker": ["w0"]})
    with df.device(df.train.replica_device_setter(cluster=cluster)):
        weights = df.Variable([1.0, 2.0], name="weights")
        bias = df.Variable(0.5, name="bias")
        loss = df.reduce_sum(df.square(weights * 3.0 + bias))
        train = df.train.GradientDescentOptimizer(0.1).minimize(loss)
    graph = df.get_default_graph()
    places = place(graph, graph.get_operations(), df.ConfigProto(), cluster)
    ps = {"weights": "/job:ps/replica:0/task:0/device:CPU:0"}
    ps["bias"] = "/job:ps/replica:0/task:1/device:CPU:0"
    for op in graph.get_operations():
        handles = [t.op.name for t in op.inputs if t.dtype == df.resource] + [op.name]
        variable = next((name for name in handles if name in ps), None)
        if variable is not None:
            assert places[op.name] == ps[variable], op.name
        elif op.type != "Const":
            assert places[op.name] == "/job:worker/replica:0/task:0/device:CPU:0", op.name
    assert places[train.name] == "/job:worker/replica:0/task:0/device:CPU:0"
