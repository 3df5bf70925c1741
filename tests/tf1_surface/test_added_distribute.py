"""``df.distribute``'s strategies and cluster resolvers, as TF1 programs use them."""

import json

import numpy as np
import pytest

import dataflow as df
from dataflow.client.config import _state

tf = df.compat.v1
ds = tf.distribute


@pytest.fixture(autouse=True)
def _two_logical_cpus():
    saved = _state.STATE.logical_devices
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    with tf.Graph().as_default():
        yield
    _state.STATE.logical_devices = saved


def test_the_default_strategy_has_one_replica_and_runs_fn_once():
    strategy = ds.get_strategy()
    assert not ds.has_strategy() and ds.in_cross_replica_context()
    assert strategy.num_replicas_in_sync == 1
    assert ds.get_replica_context().num_replicas_in_sync == 1
    calls = []
    value = strategy.run(lambda x: calls.append(x) or x * 2.0, args=(tf.constant(3.0),))
    assert len(calls) == 1
    with tf.Session() as sess:
        assert sess.run(strategy.reduce(ds.ReduceOp.SUM, value, axis=None)) == 6.0
    assert ds.get_loss_reduction() is ds.ReduceOp.SUM


def test_a_strategy_scope_is_cross_replica_and_run_is_in_replica_context():
    strategy = ds.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    seen = []

    def step():
        context = ds.get_replica_context()
        seen.append((ds.in_cross_replica_context(), context.num_replicas_in_sync))
        return context.replica_id_in_sync_group

    with strategy.scope():
        assert ds.has_strategy() and ds.get_strategy() is strategy
        assert ds.get_replica_context() is None  # cross-replica inside the scope
        ids = strategy.run(step)
    assert seen == [(False, 2), (False, 2)]
    assert not ds.has_strategy()
    with tf.Session() as sess:
        assert sess.run(list(strategy.experimental_local_results(ids))) == [0, 1]


def test_mirrored_replicas_do_run_on_their_own_cpus():
    strategy = ds.MirroredStrategy(["/cpu:0", "/cpu:1"])
    doubled = strategy.run(lambda: tf.constant(1.0) * 2.0)
    first, second = strategy.experimental_local_results(doubled)
    assert first.op.device == "/device:CPU:0" and second.op.device == "/device:CPU:1"
    assert second.op.name.startswith("replica_1/")


def test_reduce_does_sum_or_average_the_replicas_along_an_axis():
    strategy = ds.MirroredStrategy()
    parts = strategy.run(
        lambda: (
            tf.constant([1.0, 2.0])
            * (tf.cast(ds.get_replica_context().replica_id_in_sync_group, tf.float32) + 1.0)
        )
    )
    with tf.Session() as sess:
        total, mean, mean_all = sess.run(
            [
                strategy.reduce(ds.ReduceOp.SUM, parts, axis=None),
                strategy.reduce(ds.ReduceOp.MEAN, parts, axis=None),
                strategy.reduce("MEAN", parts, axis=0),
            ]
        )
    np.testing.assert_array_equal(total, [3.0, 6.0])  # [1, 2] + [2, 4]
    np.testing.assert_array_equal(mean, [1.5, 3.0])
    assert mean_all == 2.25  # (1 + 2 + 2 + 4) / 4


def test_all_reduce_does_give_every_replica_the_sum():
    strategy = ds.MirroredStrategy()

    def step():
        context = ds.get_replica_context()
        mine = tf.cast(context.replica_id_in_sync_group, tf.float32) + 1.0
        return context.all_reduce(ds.ReduceOp.SUM, mine)

    sums = strategy.run(step)
    with tf.Session() as sess:
        assert sess.run(list(strategy.experimental_local_results(sums))) == [3.0, 3.0]


def _train(strategy, steps=3):
    """Three SGD steps of a linear model on one batch of 8: each replica takes 4 rows."""
    rng = np.random.default_rng(0)
    features = rng.normal(size=(8, 3)).astype(np.float32)
    labels = rng.normal(size=(8, 1)).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(8).repeat()

    def step(x, y):
        prediction = tf.layers.dense(
            x, 1, kernel_initializer=tf.constant_initializer(0.1), name="dense"
        )
        loss = tf.reduce_sum(tf.square(prediction - y))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        with tf.control_dependencies([train]):
            return tf.identity(loss)

    if strategy is None:
        iterator = dataset.make_initializable_iterator()
        losses = step(*iterator.get_next())
        total = losses
    else:
        with strategy.scope():
            iterator = strategy.experimental_distribute_dataset(
                dataset
            ).make_initializable_iterator()
            losses = strategy.run(step, args=iterator.get_next())
            total = strategy.reduce(ds.ReduceOp.SUM, losses, axis=None)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), iterator.initializer])
        history = [sess.run(total) for _ in range(steps)]
        kernel = sess.run(tf.global_variables()[0])
    return history, kernel, len(tf.global_variables())


def test_mirrored_training_does_sum_gradients_and_match_one_device_on_the_whole_batch():
    alone, alone_kernel, _ = _train(None)
    with tf.Graph().as_default():
        mirrored, mirrored_kernel, variables = _train(ds.MirroredStrategy())
    assert variables == 2  # replica 1 reused replica 0's kernel and bias
    np.testing.assert_allclose(mirrored, alone, rtol=1e-5)
    np.testing.assert_allclose(mirrored_kernel, alone_kernel, rtol=1e-5)
    assert mirrored[2] < mirrored[0]


def test_a_distributed_dataset_does_split_each_batch_into_consecutive_parts():
    strategy = ds.MirroredStrategy()
    dataset = tf.data.Dataset.range(10).batch(5)
    iterator = strategy.experimental_distribute_dataset(dataset).make_initializable_iterator()
    parts = strategy.experimental_local_results(iterator.get_next())
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        first, second = sess.run(list(parts))
    np.testing.assert_array_equal(first, [0, 1])
    np.testing.assert_array_equal(second, [2, 3, 4])


def test_one_device_strategy_does_place_its_replica_and_variables():
    strategy = ds.OneDeviceStrategy("/cpu:1")
    with strategy.scope():
        v = tf.Variable(1.0)
        out = strategy.run(lambda: v * 3.0)
    assert v.op.device == "/device:CPU:1" and out.op.device == "/device:CPU:1"
    assert strategy.extended.variable_created_in_scope(v)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out) == 3.0


def test_an_error_in_a_replica_does_reach_the_caller_and_leaves_the_strategy_usable():
    strategy = ds.MirroredStrategy()

    def step():
        if ds.get_replica_context()._replica_id == 1:
            raise ValueError("bad replica")
        return tf.constant(1.0)

    with pytest.raises(ValueError, match="bad replica"):
        strategy.run(step)
    assert ds.in_cross_replica_context()
    assert len(strategy.experimental_local_results(strategy.run(lambda: tf.constant(2.0)))) == 2


def test_input_context_does_divide_the_global_batch():
    context = ds.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert context.get_per_replica_batch_size(32) == 8
    with pytest.raises(ValueError, match="not divisible"):
        context.get_per_replica_batch_size(30)


def test_tf_config_cluster_resolver_does_read_the_environment(monkeypatch):
    config = {
        "cluster": {"chief": ["c:2222"], "worker": ["w0:2222", "w1:2222"]},
        "task": {"type": "worker", "index": 1},
        "rpc_layer": "grpc",
    }
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    resolver = ds.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec().as_dict() == config["cluster"]
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.master() == "grpc://w1:2222"
    assert resolver.master("chief", 0, rpc_layer="") == "grpc://c:2222"
    assert resolver.num_accelerators() == {}
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not JSON"):
        resolver.cluster_spec()


def test_simple_and_union_resolvers_do_combine_jobs():
    ps = ds.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"ps": ["p:1"]}), master="grpc://p:1", task_type="ps", task_id=0
    )
    workers = ds.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": ["w:1", "w:2"]})
    )
    union = ds.cluster_resolver.UnionResolver(ps, workers)
    assert union.cluster_spec().as_dict() == {"ps": ["p:1"], "worker": ["w:1", "w:2"]}
    assert union.master() == "grpc://p:1" and union.task_type == "ps"
    assert union.master("worker", 1, rpc_layer="grpc") == "grpc://w:2"
    with pytest.raises(KeyError, match="Duplicate job"):
        ds.cluster_resolver.UnionResolver(ps, ps).cluster_spec()
