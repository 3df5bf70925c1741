"""``df.config.experimental``: ``enable_op_determinism`` and the device functions under their
TensorFlow 2.0 names.

TensorFlow 2.21 with ``tf.config.experimental.enable_op_determinism()``: a random op without a
seed raises ``RuntimeError("Random ops require a seed to be set when determinism is
enabled...")``, an op seed alone is enough, ``Generator.from_non_deterministic_state`` and
``get_global_generator`` (before ``set_global_generator``) raise ``RuntimeError``, and
``sample_distorted_bounding_box`` and ``fractional_max_pool`` without seeds raise
``ValueError``; the flag is read back with its internal ``is_op_determinism_enabled``.
"""

import numpy as np
import pytest

import dataflow as df
from dataflow.framework import determinism


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


@pytest.fixture
def deterministic():
    df.config.experimental.enable_op_determinism()
    yield
    determinism.disable_op_determinism()


def test_the_flag_is_off_until_enabled(deterministic):
    assert determinism.is_op_determinism_enabled()
    determinism.disable_op_determinism()
    assert not determinism.is_op_determinism_enabled()


def test_random_ops_need_a_seed(deterministic):
    with pytest.raises(RuntimeError, match="Random ops require a seed to be set when determinism"):
        df.random_normal([2])
    with pytest.raises(RuntimeError, match="Random ops require a seed"):
        df.random_shuffle([1, 2, 3])
    # an op seed or a graph seed is enough
    assert df.random_uniform([2], seed=3).shape.as_list() == [2]
    df.set_random_seed(7)
    drawn = df.random_normal([2])
    with df.Session() as first, df.Session() as second:
        assert first.run(drawn).tolist() == second.run(drawn).tolist()


def test_random_ops_need_a_seed_in_eager_mode(deterministic):
    with df.eager_mode():
        # eager mode's graph lives as long as the process: a seed another test set is put back
        saved = df.get_default_graph().seed
        df.set_random_seed(None)
        try:
            with pytest.raises(RuntimeError, match="Random ops require a seed"):
                df.random.normal([2])
            assert df.random.normal([2], seed=1).shape.as_list() == [2]
        finally:
            df.set_random_seed(saved)


def test_generators_need_a_seed(deterministic):
    with pytest.raises(RuntimeError, match="cannot be called when determinism is enabled"):
        df.random.Generator.from_non_deterministic_state()
    with pytest.raises(RuntimeError, match='unless "set_global_generator" has already been'):
        df.random.get_global_generator()
    generator = df.random.Generator.from_seed(5)
    df.random.set_global_generator(generator)
    assert df.random.get_global_generator() is generator


def test_seeded_image_and_pooling_ops_need_their_seeds(deterministic):
    with pytest.raises(ValueError, match='"seed" or "seed2" must be non-zero'):
        df.image.sample_distorted_bounding_box([10, 10, 3], [[[0.0, 0.0, 1.0, 1.0]]])
    df.image.sample_distorted_bounding_box([10, 10, 3], [[[0.0, 0.0, 1.0, 1.0]]], seed=1)
    images = df.zeros([1, 4, 4, 1])
    with pytest.raises(ValueError, match='"deterministic" true when op determinism'):
        df.nn.fractional_max_pool(images, [1.0, 1.5, 1.5, 1.0], seed=1, seed2=1)
    pooled = df.nn.fractional_avg_pool(
        images, [1.0, 1.5, 1.5, 1.0], deterministic=True, seed=1, seed2=2
    )
    assert len(pooled) == 3


def racing_updates():
    """Two updates of one float variable whose order changes the sum: 1e8 + 3 - 1e8 is 0 in
    float32 (3 is lost beside 1e8), 1e8 - 1e8 + 3 is 3.  The first update waits for a slow
    input, the second for a quick one; both inputs are large enough (over the executor's 64 KB
    inline limit) to be computed on the inter-op pool, where the quick one finishes first."""
    v = df.Variable(np.float32(1e8))
    slow = df.reduce_sum(df.sin(df.ones([4_000_000]))) * 0 + 3.0
    quick = df.reduce_sum(df.ones([50_000])) * 0 - 1e8 + 0.5
    return v, [v.assign_add(slow).op, v.assign_add(quick).op]


def test_sessions_run_stateful_ops_in_program_order_whatever_their_threads(deterministic):
    v, updates = racing_updates()
    for threads in (1, 4):
        config = df.ConfigProto(inter_op_parallelism_threads=threads)
        with df.Session(config=config) as sess:
            for _ in range(3):
                sess.run(v.initializer)
                sess.run(updates)
                # program order, as one thread runs it: the slow update first
                assert sess.run(v) == 0.0


def test_device_functions_under_their_tensorflow_2_0_names():
    experimental = df.config.experimental
    assert experimental.list_physical_devices() == df.config.list_physical_devices()
    assert experimental.list_logical_devices("CPU") == df.config.list_logical_devices("CPU")
    assert experimental.get_visible_devices() == df.config.get_visible_devices()
    assert experimental.VirtualDeviceConfiguration is df.config.LogicalDeviceConfiguration
    cpu = experimental.list_physical_devices("CPU")[0]
    assert experimental.get_virtual_device_configuration(cpu) is None
    with pytest.raises(ValueError, match="unknown device"):
        experimental.set_virtual_device_configuration("gpu", None)
