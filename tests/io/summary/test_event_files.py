"""FileWriter: event files that TensorBoard's own reader (EventAccumulator) opens."""

import os
import re

import numpy as np
import pytest

import dataflow as df

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def read_back(logdir):
    accumulator = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={kind: 0 for kind in event_accumulator.DEFAULT_SIZE_GUIDANCE}
    )
    accumulator.Reload()
    return accumulator


def build_model():
    x = df.placeholder(df.float32, [None, 2, 2, 1], name="x")
    step = df.placeholder(df.int32, [], name="step")
    mean = df.reduce_mean(x)
    _, total = df.while_loop(lambda i, t: i < step, lambda i, t: (i + 1, t + mean), [0, 0.0])
    df.summary.scalar("total", total)
    df.summary.histogram("pixels", x)
    df.summary.image("pictures", x, max_outputs=2)
    df.summary.text("note", df.string_join(["step ", df.as_string(step)]))
    return x, step, total, df.summary.merge_all()


def test_event_file_holds_scalars_histograms_images_text_and_graph(tmp_path):
    x, step, _, merged = build_model()
    images = np.random.default_rng(0).random((3, 2, 2, 1)).astype(np.float32)
    with df.Session() as sess, df.summary.FileWriter(tmp_path, sess.graph) as writer:
        for i in range(3):
            writer.add_summary(sess.run(merged, {x: images * (i + 1), step: i}), global_step=i)
        metadata = df.RunMetadata()
        sess.run(merged, {x: images, step: 2}, run_metadata=metadata)
        writer.add_run_metadata(metadata, "step2", global_step=2)
    (name,) = os.listdir(tmp_path)
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\..+", name)
    events = read_back(tmp_path)
    tags = events.Tags()
    assert [(e.step, e.value) for e in events.Scalars("total")] == [
        (i, pytest.approx(i * images.mean() * (i + 1), rel=1e-6)) for i in range(3)
    ]
    histogram = events.Histograms("pixels")[1].histogram_value
    assert (histogram.num, histogram.max) == (12, pytest.approx(2 * images.max(), rel=1e-6))
    assert tags["images"] == ["pictures/image/0", "pictures/image/1"]
    assert [e.width for e in events.Images("pictures/image/0")] == [2, 2, 2]
    (text,) = [e for e in events.Tensors("note") if e.step == 1]
    assert list(text.tensor_proto.string_val) == [b"step 1"]
    assert tags["graph"] is True
    graph_ops = {node.name: node.op for node in events.Graph().node}
    assert graph_ops["while/Enter"] == "Enter" and graph_ops["while/LoopCond"] == "LoopCond"
    assert graph_ops["total"] == "ScalarSummary"
    assert tags["run_metadata"] == ["step2"]
    node_stats = events.RunMetadata("step2").step_stats.dev_stats[0].node_stats
    assert "Merge/MergeSummary" in {s.node_name for s in node_stats}


def test_flush_writes_what_was_added_and_reopen_starts_a_new_file(tmp_path):
    writer = df.summary.FileWriter(tmp_path, flush_secs=3600)
    assert writer.get_logdir() == str(tmp_path)
    value = df.summary.scalar("loss", df.constant(0.25))
    with df.Session() as sess:
        writer.add_summary(sess.run(value), global_step=7)
    writer.flush()
    assert [(e.step, e.value) for e in read_back(tmp_path).Scalars("loss")] == [(7, 0.25)]
    writer.close()
    with pytest.warns(UserWarning, match="closed FileWriter"):
        writer.add_summary(b"")  # ignored once closed, as in TensorFlow
    writer.reopen()
    writer.close()
    assert len(os.listdir(tmp_path)) == 2


def test_add_summary_rejects_what_is_not_a_summary(tmp_path):
    with df.summary.FileWriter(tmp_path) as writer:
        with pytest.raises(TypeError, match="serialized Summary"):
            writer.add_summary(3.0)


def test_file_writer_cache_shares_one_writer_per_directory(tmp_path):
    try:
        first = df.summary.FileWriterCache.get(tmp_path)
        assert df.summary.FileWriterCache.get(str(tmp_path)) is first
    finally:
        df.summary.FileWriterCache.clear()
    assert df.summary.FileWriterCache.get(tmp_path) is not first
    df.summary.FileWriterCache.clear()


def test_the_graph_tab_shows_ops_tensorflow_does_not_share_by_their_type(tmp_path):
    # A typical TF1 model: random initial weights, a training step. Writing the graph for
    # TensorBoard must not fail on an op outside the GraphDef op set we exchange with TensorFlow.
    weights = df.Variable(df.random_normal([3, 2], seed=1), name="weights")
    loss = df.reduce_sum(df.square(weights))
    df.train.AdamOptimizer(0.1).minimize(loss)
    with df.summary.FileWriter(tmp_path, df.get_default_graph()):
        pass
    graph_ops = {node.name: node.op for node in read_back(tmp_path).Graph().node}
    assert graph_ops["random_normal/RandomStandardNormal"] == "RandomStandardNormal"
