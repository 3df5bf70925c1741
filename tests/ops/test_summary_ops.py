"""Summary ops: each a string scalar holding a serialized ``Summary``, named and tagged as in
TensorFlow 1.x.  Values are parsed with TensorBoard's own protos.

Expected values were printed by TensorFlow 2.21 in TF1 graph mode for the same programs
(``tf.compat.v1.summary.*`` run in a ``tf.compat.v1.Session``).
"""

import io
import sys

import numpy as np
import pytest
from ops_testing import run

import dataflow as df

summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
Image = pytest.importorskip("PIL.Image")


def parse(serialized) -> "summary_pb2.Summary":
    assert isinstance(serialized, bytes)
    return summary_pb2.Summary.FromString(serialized)


def test_scalar_is_named_and_tagged_by_its_name_scope():
    with df.name_scope("outer"):
        loss = df.summary.scalar("loss", df.constant(1.5))
    assert (loss.op.name, loss.op.type, loss.dtype, loss.shape.rank) == (
        "outer/loss",
        "ScalarSummary",
        df.string,
        0,
    )
    assert df.get_default_graph().get_collection(df.GraphKeys.SUMMARIES) == [loss]
    (value,) = parse(run(loss)).value
    # tf: tag: "outer/loss" simple_value: 1.5
    assert (value.tag, value.simple_value) == ("outer/loss", 1.5)


def test_scalar_tag_is_cleaned_and_made_unique_like_an_op_name():
    first = df.summary.scalar("bad name!", df.constant(3))
    second = df.summary.scalar("bad name!", df.constant(4.0), family="train")
    # tf: op 'bad_name_'; a family prefixes the tag: 'train/train/bad_name_'
    assert first.op.name == "bad_name_"
    assert [v.tag for v in parse(run(first)).value] == ["bad_name_"]
    assert parse(run(first)).value[0].simple_value == 3.0
    assert parse(run(second)).value[0].tag == "train/train/bad_name_"


def test_scalar_of_a_vector_is_an_error_naming_the_summary():
    with pytest.raises(ValueError, match=r"summary.scalar 'v' needs a scalar tensor"):
        df.summary.scalar("v", df.constant([1.0, 2.0]))


def test_histogram_buckets_as_tensorflow():
    with df.name_scope("outer"):
        weights = df.summary.histogram("weights", df.constant([0.5, -1.0, 2.0, 2.0, 0.0]))
    (value,) = parse(run(weights)).value
    histogram = value.histo
    # tf.summary.histogram of the same values
    assert value.tag == "outer/weights"
    assert (histogram.min, histogram.max, histogram.num) == (-1.0, 2.0, 5.0)
    assert (histogram.sum, histogram.sum_squares) == (3.5, 9.25)
    assert list(histogram.bucket_limit) == [
        -1.0089710279437536,
        -0.917246389039776,
        0.0,
        1e-12,
        0.47069243095356195,
        0.51776167404891815,
        1.9661990955585713,
        2.1628190051144287,
        1.7976931348623157e308,
    ]
    assert list(histogram.bucket) == [0, 1, 0, 1, 0, 1, 0, 2, 0]


def test_histogram_of_nan_fails_when_it_runs():
    bad = df.summary.histogram("bad", df.constant([np.nan]))
    with pytest.raises(df.errors.InvalidArgumentError, match="Nan in summary histogram for: bad"):
        run(bad)


def pixels(image_value) -> list:
    return np.asarray(Image.open(io.BytesIO(image_value.encoded_image_string))).ravel().tolist()


def test_image_scales_floats_per_image_and_paints_nan_pixels():
    images = np.array(
        [[[[0.0], [0.5]], [[1.0], [np.nan]]], [[[-1.0], [0.25]], [[2.0], [0.0]]]], np.float32
    )
    several = df.summary.image("pic", df.constant(images), max_outputs=3)
    one = df.summary.image("one", df.constant(images[:1]), max_outputs=1)
    values = list(parse(run(several)).value) + list(parse(run(one)).value)
    # tf.summary.image: tags pic/image/0, pic/image/1, one/image; pixels as decoded by
    # tf.image.decode_png
    assert [v.tag for v in values] == ["pic/image/0", "pic/image/1", "one/image"]
    assert [(v.image.height, v.image.width, v.image.colorspace) for v in values] == [(2, 2, 1)] * 3
    assert [pixels(v.image) for v in values] == [
        [0, 127, 255, 255],
        [64, 143, 255, 128],
        [0, 127, 255, 255],
    ]


def test_image_keeps_uint8_rgb_pixels():
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(1, 2, 3, 3) * 10
    (value,) = parse(run(df.summary.image("rgb", rgb))).value
    assert value.image.colorspace == 3
    assert pixels(value.image) == rgb.ravel().tolist()


def test_image_of_a_bad_shape_is_an_error_naming_the_op():
    with pytest.raises(ValueError, match=r"ImageSummary op 'flat' at .*: Tensor must be 4-D"):
        df.summary.image("flat", df.zeros([2, 3]))


def test_text_is_a_tensor_summary_for_the_text_plugin():
    note = df.summary.text("note", df.constant("hi **there**"))
    assert (note.op.name, note.op.type) == ("note", "TensorSummaryV2")
    (value,) = parse(run(note)).value
    # tf.summary.text: tag "note", string_val "hi **there**", plugin_name "text"
    assert value.tag == "note"
    assert value.metadata.plugin_data.plugin_name == "text"
    assert list(value.tensor.string_val) == [b"hi **there**"]
    with pytest.raises(ValueError, match="to have dtype string"):
        df.summary.text("number", df.constant(1.0))


def test_audio_is_a_wav_file():
    wave = np.sin(np.linspace(0, 20, 800, dtype=np.float32))[None, :, None]
    (value,) = parse(run(df.summary.audio("sound", wave, 8000, max_outputs=1))).value
    assert value.tag == "sound/audio"
    assert (value.audio.sample_rate, value.audio.num_channels) == (8000.0, 1)
    assert value.audio.length_frames == 800
    assert value.audio.encoded_audio_string[:4] == b"RIFF"


def test_merge_all_joins_the_collection_and_rejects_duplicate_tags():
    assert df.summary.merge_all() is None
    a = df.summary.scalar("a", df.constant(1.0))
    df.summary.histogram("b", df.constant([1.0]))
    df.summary.scalar("elsewhere", df.constant(2.0), collections=["other"])
    merged = df.summary.merge_all()
    # tf: the op of merge_all is Merge/MergeSummary
    assert (merged.op.name, merged.op.type) == ("Merge/MergeSummary", "MergeSummary")
    assert [v.tag for v in parse(run(merged)).value] == ["a", "b"]
    assert [v.tag for v in parse(run(df.summary.merge_all("other"))).value] == ["elsewhere"]
    twice = df.summary.merge([a, a])
    with pytest.raises(df.errors.InvalidArgumentError, match="Duplicate tag a found"):
        run(twice)


def test_summaries_run_inside_cond_and_while_loop():
    flag = df.placeholder(df.bool, [])
    x = df.constant(2.0)
    chosen = df.cond(flag, lambda: df.summary.scalar("yes", x), lambda: df.summary.scalar("no", -x))

    def body(i, total):
        return i + 1, total + df.cast(i, df.float32)

    _, total = df.while_loop(lambda i, _: i < 4, body, [df.constant(0), df.constant(0.0)])
    final = df.summary.scalar("total", total)

    def record(i, _):
        return i + 1, df.summary.scalar("step", df.cast(i, df.float32))

    _, last = df.while_loop(lambda i, _: i < 3, record, [df.constant(0), df.constant("")])
    assert [(v.tag, v.simple_value) for v in parse(run(chosen, {flag: True})).value] == [
        ("cond/yes", 2.0)
    ]
    assert parse(run(chosen, {flag: False})).value[0].simple_value == -2.0
    assert parse(run(final)).value[0].simple_value == 6.0
    assert [(v.tag, v.simple_value) for v in parse(run(last)).value] == [("while_1/step", 2.0)]


def test_summary_ops_have_no_gradient():
    x = df.constant(1.5)
    assert df.gradients(df.strings.length(df.summary.scalar("x", x)), x) == [None]


def test_summaries_render():
    loss = df.summary.scalar("loss", df.constant(1.0))
    source = df.render(df.summary.merge([loss]), format="dot").source
    assert "ScalarSummary" in source and "MergeSummary" in source


def test_without_the_extra_a_summary_names_it(monkeypatch):
    from dataflow.framework import tensorboard_protos

    tensorboard_protos.protos.cache_clear()
    for module in [m for m in sys.modules if m.split(".")[0] == "tensorboardX"] or ["tensorboardX"]:
        monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    try:
        with pytest.raises(ImportError, match=r'pip install "dataflow\[tensorboard\]"'):
            df.summary.scalar("loss", df.constant(1.0))
        # nothing but the argument was built
        assert [op.type for op in df.get_default_graph().get_operations()] == ["Const"]
    finally:
        tensorboard_protos.protos.cache_clear()
