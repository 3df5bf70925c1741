"""Threads that feed queues (``df.train.QueueRunner``), their ``Coordinator``, and TF1's
queue-based input functions (``slice_input_producer``, ``batch``, ``shuffle_batch``, ...)."""

import threading

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def drain(sess, fetch, coord_threads=None):
    """Runs ``fetch`` until OutOfRangeError; the values, in order."""
    out = []
    while True:
        try:
            out.append(sess.run(fetch))
        except df.errors.OutOfRangeError:
            return out


# -- Coordinator -----------------------------------------------------------------------------------
def test_join_reraises_the_exception_that_requested_the_stop():
    coord = df.train.Coordinator()

    def worker():
        with coord.stop_on_exception():
            raise ValueError("feeding failed")

    threads = [threading.Thread(target=worker)]
    threads[0].start()
    assert coord.wait_for_stop(10)
    with pytest.raises(ValueError, match="feeding failed"):
        coord.join(threads)
    assert coord.joined


def test_out_of_range_is_a_clean_stop():
    coord = df.train.Coordinator()
    coord.request_stop(df.errors.OutOfRangeError(None, None, "done"))
    assert coord.should_stop()
    coord.join([])  # nothing re-raised


def test_only_the_first_exception_is_kept_and_clear_stop_resets():
    coord = df.train.Coordinator()
    coord.request_stop(ValueError("first"))
    coord.request_stop(KeyError("second"))
    with pytest.raises(ValueError, match="first"):
        coord.raise_requested_exception()
    coord.clear_stop()
    assert not coord.should_stop()
    coord.raise_requested_exception()  # nothing recorded any more


def test_join_names_threads_that_outlive_the_grace_period():
    coord = df.train.Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=release.wait, name="stubborn", daemon=True)
    stubborn.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stubborn"):
        coord.join([stubborn], stop_grace_period_secs=0.05)
    release.set()


def test_looper_thread_calls_its_target_until_the_stop():
    coord = df.train.Coordinator()
    calls = []
    called_twice = threading.Event()

    def target(value):
        calls.append(value)
        if len(calls) >= 2:
            called_twice.set()

    looper = df.train.LooperThread.loop(coord, 0.01, target, args=(1,))
    assert called_twice.wait(60)
    coord.request_stop()
    coord.join([looper], stop_grace_period_secs=60)
    assert not looper.is_alive()
    assert calls[:2] == [1, 1]


# -- QueueRunner ---------------------------------------------------------------------------------
def test_a_queue_runner_feeds_its_queue_until_the_coordinator_stops():
    counter = df.Variable(0, name="counter")
    q = df.FIFOQueue(4, df.int32, shapes=[[]])
    runner = df.train.QueueRunner(q, [q.enqueue(counter.assign_add(1))])
    df.train.add_queue_runner(runner)
    taken = q.dequeue_many(3)
    with df.Session() as sess:
        sess.run(counter.initializer)
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        assert len(threads) == 2  # the enqueue thread and the one that cancels on stop
        first = sess.run(taken)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    np.testing.assert_array_equal(first, [1, 2, 3])
    assert not any(t.is_alive() for t in threads)


def test_an_error_in_an_enqueue_op_reaches_the_coordinator():
    x = df.placeholder(df.float32, [])  # never fed: the enqueue fails
    q = df.FIFOQueue(2, df.float32)
    df.train.add_queue_runner(df.train.QueueRunner(q, [q.enqueue(x)]))
    with df.Session() as sess:
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        assert coord.wait_for_stop(10)
        with pytest.raises(df.errors.InvalidArgumentError, match="placeholder"):
            coord.join(threads, stop_grace_period_secs=10)


def test_start_queue_runners_needs_a_session():
    with pytest.raises(ValueError, match="no default session"):
        df.train.start_queue_runners()


# -- input producers and batching ----------------------------------------------------------------
def test_slice_input_producer_gives_every_row_once_per_epoch_then_out_of_range():
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int64)
    image, label = df.train.slice_input_producer([images, labels], num_epochs=2, seed=1)
    assert image.shape.as_list() == [2] and label.shape.as_list() == []
    names = [v.name for v in df.local_variables()]
    assert names == ["input_producer/input_producer/limit_epochs/epochs:0"]
    with df.Session() as sess:
        sess.run(df.local_variables_initializer())
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        rows = drain(sess, [image, label])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert len(rows) == 12
    for x, y in rows:  # rows stay paired
        np.testing.assert_array_equal(x, images[y])
    assert sorted(int(y) for _, y in rows) == sorted(list(range(6)) * 2)


def test_batch_keeps_the_structure_it_was_given():
    x = df.constant([1.0, 2.0])
    y = df.constant(3)
    assert isinstance(df.train.batch([x], batch_size=2), df.Tensor)  # as TensorFlow
    pair = df.train.batch([x, y], batch_size=2)
    assert [t.shape.as_list() for t in pair] == [[2, 2], [2]]
    named = df.train.batch({"b": y, "a": x}, batch_size=5)
    assert sorted(named) == ["a", "b"] and named["a"].shape.as_list() == [5, 2]
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        df.train.batch([df.placeholder(df.float32, [None])], batch_size=2)


def test_batch_with_a_smaller_final_batch_covers_the_epoch_in_order():
    rows = np.arange(10, dtype=np.int32)
    (row,) = df.train.slice_input_producer([rows], num_epochs=1, shuffle=False)
    batches = df.train.batch([row], batch_size=4, allow_smaller_final_batch=True)
    assert batches.name == "batch:0" and batches.shape.as_list() == [None]
    with df.Session() as sess:
        sess.run(df.local_variables_initializer())
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        got = drain(sess, batches)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert [b.tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_shuffle_batch_draws_from_a_mixed_buffer():
    rows = np.arange(40, dtype=np.int32)
    (row,) = df.train.slice_input_producer([rows], num_epochs=1, shuffle=False)
    batches = df.train.shuffle_batch(
        [row], batch_size=10, capacity=30, min_after_dequeue=15, seed=4,
        allow_smaller_final_batch=True,
    )  # fmt: skip
    with df.Session() as sess:
        sess.run(df.local_variables_initializer())
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        got = np.concatenate(drain(sess, batches))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert sorted(got.tolist()) == list(range(40))
    assert got.tolist() != list(range(40))


def test_count_up_to_stops_at_its_limit():
    v = df.Variable(0, name="v")
    up = df.count_up_to(v, 2)
    with df.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(up), sess.run(up)] == [0, 1]
        with pytest.raises(df.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(up)
        assert sess.run(v) == 2
    with pytest.raises(TypeError, match="integer variable"):
        df.count_up_to(df.Variable(0.5), 3)


def test_queue_runners_survive_a_save_and_load(tmp_path):
    rows = np.arange(6, dtype=np.int32)
    (row,) = df.train.slice_input_producer([rows], num_epochs=1, shuffle=False)
    df.train.batch([row], batch_size=3, name="rows")
    path = str(tmp_path / "pipeline.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    assert len(loaded.get_collection(df.GraphKeys.QUEUE_RUNNERS)) == 2
    with loaded.as_default(), df.Session() as sess:
        sess.run(df.local_variables_initializer())
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        got = drain(sess, "rows:0")
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert [b.tolist() for b in got] == [[0, 1, 2], [3, 4, 5]]


def test_batch_with_dynamic_pad_pads_each_batch_to_its_longest_example():
    with df.Graph().as_default():
        lengths = df.FIFOQueue(4, df.int32, shapes=[[]])
        fill = lengths.enqueue_many([[1, 3]])
        example = df.range(lengths.dequeue())
        batch = df.train.batch([example], batch_size=2, dynamic_pad=True)
        assert batch.shape.as_list() == [2, None]
        with df.Session() as sess:
            sess.run(fill)
            sess.run(lengths.close())  # the runner ends when the lengths run out
            coord = df.train.Coordinator()
            threads = df.train.start_queue_runners(sess, coord)
            np.testing.assert_array_equal(sess.run(batch), [[0, 0, 0], [0, 1, 2]])
            coord.request_stop()
            coord.join(threads)
