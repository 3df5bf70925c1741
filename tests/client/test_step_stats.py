"""``RunMetadata.step_stats``: dataflow's list of op executions that also reads as TensorFlow's
``StepStats`` proto."""

import numpy as np
import pytest

import dataflow as df
from dataflow.client.session import NodeExecStats

NO_PASSES = df.RunOptions(rewrite_options=df.RewriterConfig(disable_meta_optimizer=True))


def traced_run(fetch):
    """The metadata of a run of ``fetch`` without graph passes (every op of it runs)."""
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(fetch, options=NO_PASSES, run_metadata=metadata)
    return metadata


def test_step_stats_is_a_list_that_also_has_tensorflows_dev_stats():
    x = df.constant([1.0, 2.0], name="x")
    y = df.multiply(x, 3.0, name="y")
    metadata = traced_run(y)
    (device,) = metadata.step_stats.dev_stats
    assert device.device.endswith("device:CPU:0")
    assert device.node_stats == list(metadata.step_stats)
    assert y.op.name in [s.node_name for s in device.node_stats]


def test_node_stats_carry_tensorflows_time_fields():
    y = df.multiply(df.constant(2.0), 3.0, name="y")
    metadata = traced_run(y)
    (stat,) = [s for s in metadata.step_stats.dev_stats[0].node_stats if s.node_name == y.op.name]
    assert stat.all_start_micros == round(stat.start * 1e6)
    assert stat.op_start_rel_micros == 0
    assert stat.op_end_rel_micros == stat.all_end_rel_micros >= 0
    assert stat.timeline_label == f"{y.op.name} = Mul()"


def test_has_field_step_stats_says_whether_a_run_filled_it():
    metadata = df.RunMetadata()
    assert not metadata.HasField("step_stats")
    with df.Session() as sess:
        sess.run(df.constant(1.0), run_metadata=metadata)
    assert metadata.HasField("step_stats")


def test_has_field_of_a_name_that_is_no_field_is_an_error():
    with pytest.raises(ValueError, match='RunMetadata has no "stepstats" field'):
        df.RunMetadata().HasField("stepstats")


def test_output_describes_each_array_a_kernel_returned():
    product = df.matmul(df.ones([2, 3]), df.ones([3, 4]), name="product")
    metadata = traced_run(product)
    (stat,) = [s for s in metadata.step_stats if s.node_name == product.op.name]
    (output,) = stat.output
    description = output.tensor_description
    assert (output.slot, description.dtype, description.shape) == (0, "float32", (2, 4))
    assert description.allocation_description.requested_bytes == 2 * 4 * 4
    assert description.allocation_description.ptr != 0


def test_an_output_that_forwards_its_input_buffer_has_the_same_ptr():
    x = df.Variable(np.zeros([100], np.float32), name="x")
    reshaped = df.reshape(x, [10, 10], name="reshaped")
    with df.Session() as sess:
        sess.run(x.initializer)
        metadata = df.RunMetadata()
        sess.run(reshaped, options=NO_PASSES, run_metadata=metadata)

    def ptrs(name):
        (stat,) = [s for s in metadata.step_stats if s.node_name == name]

        return [o.tensor_description.allocation_description.ptr for o in stat.output]

    (read,) = [s.node_name for s in metadata.step_stats if s.op_type == "ReadVariableOp"]
    assert ptrs(reshaped.op.name) == ptrs(read) != ptrs(reshaped.op.inputs[1].op.name)


def test_control_flow_ops_record_no_output():
    pred = df.placeholder_with_default(True, [])
    result = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0))
    metadata = traced_run(result)
    switches = [s for s in metadata.step_stats if s.op_type == "Switch"]
    assert switches and all(s.output == () for s in switches)


def test_step_stats_given_as_a_plain_list_reads_as_the_proto_too():
    stat = NodeExecStats("a", "Add", 1.0, 2.0, "MainThread", "root", 0)
    metadata = df.RunMetadata(step_stats=[stat])
    assert metadata.step_stats.dev_stats[0].node_stats == [stat]
    metadata.step_stats = ()
    assert metadata.step_stats.dev_stats == []
