"""``df.config``: the process's runtime options reach the Sessions made without a config."""

import numpy as np
import pytest

import dataflow as df
from dataflow.client import compiler
from dataflow.client.config import _state

tf = df.compat.v1


@pytest.fixture(autouse=True)
def _restore_runtime_options():
    saved = _state.RuntimeOptions(**vars(_state.STATE))
    saved.optimizer_options = dict(_state.STATE.optimizer_options)
    mode = compiler.mode()
    with tf.Graph().as_default():
        yield
    for name, value in vars(saved).items():
        setattr(_state.STATE, name, value)
    compiler.set_mode(mode)


def test_the_host_does_list_one_cpu_and_no_gpu():
    cpu = tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU")
    assert tf.config.list_physical_devices() == [cpu]
    assert tf.config.list_physical_devices("CPU") == [cpu]
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.get_visible_devices() == [cpu]
    assert tf.config.list_logical_devices() == [tf.config.LogicalDevice("/device:CPU:0", "CPU")]
    assert tf.config.get_logical_device_configuration(cpu) is None


def test_logical_cpus_do_become_devices_a_session_places_ops_on():
    with tf.device("/cpu:1"):
        product = tf.constant(2.0) * 3.0
    with tf.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="CPU:1"):
            sess.run(product)
    cpu = tf.config.list_physical_devices("CPU")[0]
    halves = [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    tf.config.set_logical_device_configuration(cpu, halves)
    assert [d.name for d in tf.config.list_logical_devices("CPU")] == [
        "/device:CPU:0",
        "/device:CPU:1",
    ]
    assert tf.config.get_logical_device_configuration(cpu) == halves
    with tf.Session() as sess:
        assert sess.run(product) == 6.0
    # a Session given its own config uses that alone
    with tf.Session(config=tf.ConfigProto()) as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="CPU:1"):
            sess.run(product)


def test_soft_placement_set_here_does_reach_new_sessions():
    with tf.device("/gpu:0"):
        total = tf.constant(1.0) + 1.0
    assert tf.config.get_soft_device_placement() is False
    tf.config.set_soft_device_placement(True)
    assert tf.config.get_soft_device_placement() is True
    with tf.Session() as sess:
        assert sess.run(total) == 2.0


def test_thread_counts_do_reach_new_sessions():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(3)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 1
    assert tf.config.threading.get_intra_op_parallelism_threads() == 3
    with tf.Session() as sess:
        assert sess._inter_op_threads == 1 and sess._intra_op_threads == 3
    with pytest.raises(ValueError, match="num_threads must be an int >= 0"):
        tf.config.threading.set_inter_op_parallelism_threads(-1)


def test_optimizer_options_do_turn_passes_of_new_sessions_off():
    assert tf.config.optimizer.get_experimental_options() == {
        "disable_model_pruning": False,
        "disable_meta_optimizer": False,
    }
    a = tf.constant(2.0)
    folded = a * 3.0
    with tf.Session() as sess:
        assert "constant_folding" in sess._pipeline_of_config
    tf.config.optimizer.set_experimental_options({"constant_folding": False, "min_graph_nodes": 3})
    assert tf.config.optimizer.get_experimental_options() == {
        "constant_folding": False,
        "disable_model_pruning": False,
        "disable_meta_optimizer": False,
        "min_graph_nodes": 3,
    }
    with tf.Session() as sess:
        assert "constant_folding" not in sess._pipeline_of_config
        assert sess.run(folded) == 6.0
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    with tf.Session() as sess:
        assert sess._pipeline_of_config == ()


def test_set_jit_does_turn_compiled_plans_on_and_off():
    tf.config.optimizer.set_jit(False)
    assert tf.config.optimizer.get_jit() == "" and compiler.mode() == "off"
    tf.config.optimizer.set_jit("autoclustering")
    assert tf.config.optimizer.get_jit() == "autoclustering" and compiler.mode() == "auto"
    with pytest.raises(ValueError, match="set_jit"):
        tf.config.optimizer.set_jit("fast")


def test_run_functions_eagerly_does_run_the_python_function_op_by_op():
    seen = []

    @df.function(autograph=False)
    def double(x):
        seen.append(type(x).__name__)
        return x * 2

    with df.eager_mode():
        tf.config.run_functions_eagerly(True)
        assert tf.config.functions_run_eagerly() is True
        np.testing.assert_array_equal(double(df.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
        double(df.constant([3.0]))
        assert seen == ["EagerTensor", "EagerTensor"]  # the body ran on values, twice
        tf.config.experimental_run_functions_eagerly(False)
        assert tf.config.experimental_functions_run_eagerly() is False
        double(df.constant([3.0]))
        assert len(seen) == 3 and seen[-1] != "EagerTensor"  # traced once more


def test_gpu_options_do_build_into_a_config_proto():
    config = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=True), allow_soft_placement=True)
    assert config.gpu_options.allow_growth is True
    with tf.Session(config=config) as sess:
        assert sess.run(tf.constant(1.0) + 1.0) == 2.0
    with pytest.raises(TypeError):
        tf.GPUOptions(allow_growth="yes")


def test_the_cpu_cannot_be_hidden_nor_split_with_a_memory_limit():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_visible_devices([cpu])
    tf.config.set_visible_devices([], "GPU")
    with pytest.raises(ValueError, match="the CPU cannot be hidden"):
        tf.config.set_visible_devices([], "CPU")
    with pytest.raises(ValueError, match="memory_limit"):
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(memory_limit=1024)]
        )
