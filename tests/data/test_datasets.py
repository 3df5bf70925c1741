"""``df.data``: datasets read through one-shot, initializable and reinitializable iterators,
as TF1's ``tf.data`` (order, structure, shapes, end of sequence, errors)."""

import numpy as np
import pytest

import dataflow as df

Dataset = df.data.Dataset


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def read_all(sess, element, feed=None):
    out = []
    while True:
        try:
            out.append(sess.run(element, feed))
        except df.errors.OutOfRangeError:
            return out


def test_slices_keep_their_structure_dtypes_and_shapes():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6)
    ds = Dataset.from_tensor_slices({"x": images, "y": labels})
    assert ds.output_types == {"x": df.float32, "y": df.int64}
    assert ds.output_shapes["x"].as_list() == [2]
    element = ds.make_one_shot_iterator().get_next()
    assert element["x"].name == "IteratorGetNext:0"
    with df.Session() as sess:
        rows = read_all(sess, element)
    assert [r["y"] for r in rows] == list(range(6))
    np.testing.assert_array_equal(rows[3]["x"], images[3])


def test_a_list_is_one_tensor_and_a_tuple_is_a_structure():
    assert Dataset.from_tensor_slices([[1, 2], [3, 4]]).output_shapes.as_list() == [2]
    pair = Dataset.from_tensor_slices(([1, 2], [3.0, 4.0]))
    assert pair.output_types == (df.int32, df.float32)


def test_batch_repeat_and_the_last_smaller_batch():
    ds = Dataset.range(5).repeat(2).batch(4)
    assert ds.output_shapes.as_list() == [None]
    assert Dataset.range(5).batch(4, drop_remainder=True).output_shapes.as_list() == [4]
    element = ds.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        batches = read_all(sess, element)
        with pytest.raises(df.errors.OutOfRangeError, match="End of sequence"):
            sess.run(element)  # a one-shot iterator stays at its end
    assert [b.tolist() for b in batches] == [[0, 1, 2, 3], [4, 0, 1, 2], [3, 4]]
    with df.Session() as sess:  # a new Session reads it from the start again
        assert sess.run(element).tolist() == [0, 1, 2, 3]


def test_take_skip_zip_and_concatenate():
    numbers = Dataset.range(10)
    ds = Dataset.zip((numbers.skip(2).take(3), numbers.map(lambda i: i * 10)))
    joined = ds.concatenate(Dataset.zip((Dataset.range(1), Dataset.range(1))))
    with df.Session() as sess:
        got = read_all(sess, joined.make_one_shot_iterator().get_next())
    assert [tuple(int(v) for v in pair) for pair in got] == [(2, 0), (3, 10), (4, 20), (0, 0)]


def test_map_and_filter_run_their_traced_functions():
    ds = Dataset.from_tensor_slices((np.arange(6.0), np.arange(6)))
    ds = ds.map(lambda x, y: {"double": x * 2.0, "odd": df.equal(df.mod(y, 2), 1)})
    ds = ds.filter(lambda e: e["odd"])
    assert ds.output_types == {"double": df.float64, "odd": df.bool}
    with df.Session() as sess:
        got = read_all(sess, ds.make_one_shot_iterator().get_next())
    assert [e["double"] for e in got] == [2.0, 6.0, 10.0]
    with pytest.raises(ValueError, match="scalar boolean"):
        Dataset.range(3).filter(lambda i: i + 1)


def test_a_seeded_shuffle_is_a_permutation_that_repeats_in_a_new_session():
    ds = Dataset.range(20).shuffle(8, seed=5).repeat(2)
    element = ds.make_one_shot_iterator().get_next()
    runs = []
    for _ in range(2):
        with df.Session() as sess:
            runs.append([int(v) for v in read_all(sess, element)])
    assert runs[0] == runs[1]
    first, second = runs[0][:20], runs[0][20:]
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != list(range(20)) and first != second  # reshuffled each epoch


def test_an_initializable_iterator_is_fed_and_restarted_by_its_initializer():
    data = df.placeholder(df.float32, [None, 2])
    iterator = Dataset.from_tensor_slices(data).batch(2).make_initializable_iterator()
    batch = iterator.get_next()
    with df.Session() as sess:
        with pytest.raises(df.errors.FailedPreconditionError, match="has not been initialized"):
            sess.run(batch)
        sess.run(iterator.initializer, {data: np.ones((3, 2))})
        assert [b.shape for b in read_all(sess, batch)] == [(2, 2), (1, 2)]
        sess.run(iterator.initializer, {data: np.zeros((2, 2))})
        assert sess.run(batch).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_reinitializable_iterator_switches_between_datasets():
    train = Dataset.range(100).batch(10)
    valid = Dataset.range(3).batch(10)
    iterator = df.data.Iterator.from_structure(train.output_types, train.output_shapes)
    batch = iterator.get_next()
    to_train = iterator.make_initializer(train)
    to_valid = iterator.make_initializer(valid)
    with df.Session() as sess:
        sess.run(to_train)
        assert sess.run(batch).tolist() == list(range(10))
        sess.run(to_valid)
        assert sess.run(batch).tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="Expected output types"):
        iterator.make_initializer(Dataset.from_tensor_slices(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="does not have an initializer"):
        _ = Dataset.range(2).make_one_shot_iterator().initializer


def test_get_next_in_a_while_loop_reads_one_element_per_iteration():
    element = Dataset.range(1, 100).make_one_shot_iterator()

    def body(i, total):
        return i + 1, total + element.get_next()

    _, total = df.while_loop(lambda i, t: i < 4, body, [0, df.constant(0, df.int64)])
    with df.Session() as sess:
        assert sess.run(total) == 1 + 2 + 3 + 4


def test_bad_elements_are_reported_with_the_op_and_line():
    ragged = Dataset.from_tensors(np.zeros(2)).concatenate(Dataset.from_tensors(np.zeros(3)))
    element = ragged.batch(2).make_one_shot_iterator().get_next()
    with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError) as caught:
        sess.run(element)
    assert "Cannot batch tensors with different shapes in component 0" in str(caught.value)
    assert "test_datasets.py" in str(caught.value)
    with pytest.raises(ValueError, match="rank 1 or more"):
        Dataset.from_tensor_slices(3.0)


def test_a_pipeline_without_functions_saves_loads_and_renders(tmp_path):
    ds = Dataset.from_tensor_slices(np.arange(7)).shuffle(4, seed=2).batch(3)
    ds.make_one_shot_iterator().get_next(name="next_batch")
    path = str(tmp_path / "pipeline.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    with df.Session() as sess:
        expected = read_all(sess, df.get_default_graph().get_tensor_by_name("next_batch:0"))
    with df.Session(graph=loaded) as sess:
        got = read_all(sess, "next_batch:0")
    assert [b.tolist() for b in got] == [b.tolist() for b in expected]
    assert "next_batch" in df.render(loaded.get_tensor_by_name("next_batch:0"), format="dot").source


def test_an_initializable_iterator_saves_and_loads(tmp_path):
    data = df.placeholder(df.int64, [None], name="data")
    iterator = Dataset.from_tensor_slices(data).repeat(2).make_initializable_iterator()
    iterator.get_next(name="item")
    path = str(tmp_path / "iterator.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    with df.Session(graph=loaded) as sess:
        sess.run(iterator.initializer.name, {"data:0": [4, 5]})
        assert [int(v) for v in read_all(sess, "item:0")] == [4, 5, 4, 5]


def test_an_iterators_optional_next_element_saves_and_loads(tmp_path):
    iterator = Dataset.from_tensor_slices(np.array([7, 8])).make_initializable_iterator()
    optional = iterator.get_next_as_optional()
    df.identity(optional.has_value(), name="has_value")
    path = str(tmp_path / "optional.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    got_op = loaded.get_operation_by_name(optional._has_value.op.name)
    assert got_op.type == "IteratorGetNextAsOptional"
    with df.Session(graph=loaded) as sess:
        sess.run(iterator.initializer.name)
        reads = [sess.run(["has_value:0", got_op.outputs[1]]) for _ in range(2)]
        assert [(bool(h), int(v)) for h, v in reads] == [(True, 7), (True, 8)]
        assert not sess.run("has_value:0")  # past the end: no value, and no error


def test_a_pipeline_with_a_function_refuses_to_save(tmp_path):
    Dataset.range(3).map(lambda i: i + 1).make_one_shot_iterator().get_next()
    with pytest.raises(df.io.GraphNotSerializableError, match="Dataset.map"):
        df.io.save_graph(df.get_default_graph(), str(tmp_path / "f.dfg"))


def test_the_graph_seed_alone_makes_shuffles_repeat_in_a_new_graph():
    def first_epoch():
        with df.Graph().as_default():
            df.set_random_seed(11)
            element = Dataset.range(30).shuffle(30).make_one_shot_iterator().get_next()
            queue = df.RandomShuffleQueue(30, 0, df.int64, shapes=[[]])
            fill = queue.enqueue_many([np.arange(30)])
            with df.Session() as sess:
                sess.run(fill)
                return [int(v) for v in read_all(sess, element)], list(
                    sess.run(queue.dequeue_many(30))
                )

    assert first_epoch() == first_epoch()
