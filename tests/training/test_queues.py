"""Queues (``df.FIFOQueue``, ``df.RandomShuffleQueue``): order, waiting, closing, errors.

Names, shapes and messages are TensorFlow 1.x's (checked with tensorflow-cpu 2.21 in graph mode).
"""

import os
import threading

import numpy as np
import pytest
from deadlines import wait_until

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def run_in_thread(sess, fetches):
    """Starts ``sess.run(fetches)`` in a thread; returns (thread, outcome dict)."""
    outcome = {}

    def target():
        try:
            outcome["value"] = sess.run(fetches)
        except Exception as e:  # noqa: BLE001 - handed to the test
            outcome["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def test_ops_are_named_and_shaped_as_in_tensorflow():
    q = df.FIFOQueue(3, [df.float32, df.int32], shapes=[[2], []])
    assert q.name == "fifo_queue"
    assert q.enqueue_many(([[1.0, 2.0]], [7])).name == "fifo_queue_EnqueueMany"
    assert q.enqueue(([1.0, 2.0], 3)).name == "fifo_queue_enqueue"
    one = q.dequeue()
    assert [t.name for t in one] == ["fifo_queue_Dequeue:0", "fifo_queue_Dequeue:1"]
    assert [t.shape.as_list() for t in one] == [[2], []]
    assert [t.shape.as_list() for t in q.dequeue_many(2)] == [[2, 2], [2]]
    assert [t.shape.as_list() for t in q.dequeue_up_to(2)] == [[None, 2], [None]]
    assert q.size().name == "fifo_queue_Size:0"
    assert q.close().name == "fifo_queue_Close"
    assert df.FIFOQueue(1, df.float32).name == "fifo_queue_1"
    assert df.RandomShuffleQueue(3, 1, df.int32).name == "random_shuffle_queue"


def test_elements_come_out_in_the_order_they_went_in():
    q = df.FIFOQueue(10, [df.float32, df.int32], shapes=[[2], []])
    enqueue = q.enqueue_many(([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [7, 8, 9]))
    first = q.dequeue()
    rest = q.dequeue_many(2)
    with df.Session() as sess:
        sess.run(enqueue)
        assert sess.run(q.size()) == 3
        x, y = sess.run(first)
        np.testing.assert_array_equal(x, [1.0, 2.0])
        assert x.dtype == np.float32 and y == 7
        xs, ys = sess.run(rest)
        np.testing.assert_array_equal(xs, [[3.0, 4.0], [5.0, 6.0]])
        np.testing.assert_array_equal(ys, [8, 9])
        assert sess.run(q.size()) == 0


def test_a_single_component_dequeues_as_a_tensor_and_named_components_as_a_dict():
    single = df.FIFOQueue(2, df.float32)
    named = df.FIFOQueue(2, [df.int32, df.float32], names=["label", "x"])
    with df.Session() as sess:
        sess.run(single.enqueue(1.5))
        sess.run(named.enqueue({"label": 3, "x": 0.5}))
        out = single.dequeue()
        assert isinstance(out, df.Tensor)
        assert sess.run(out) == 1.5
        assert sess.run(named.dequeue()) == {"label": 3, "x": 0.5}
    with pytest.raises(ValueError, match="dict with exactly those keys"):
        named.enqueue((3, 0.5))


def test_a_dequeue_waits_for_an_enqueue_from_another_run():
    q = df.FIFOQueue(2, df.int32)
    x = df.placeholder(df.int32, [])
    enqueue = q.enqueue(x)
    with df.Session() as sess:
        thread, outcome = run_in_thread(sess, q.dequeue())
        thread.join(0.2)
        assert thread.is_alive(), "the dequeue must wait while the queue is empty"
        sess.run(enqueue, {x: 41})
        thread.join(10)
        assert outcome == {"value": 41}


def test_an_enqueue_into_a_full_queue_waits_for_room():
    q = df.FIFOQueue(1, df.int32)
    with df.Session() as sess:
        sess.run(q.enqueue(1))
        thread, outcome = run_in_thread(sess, q.enqueue(2))
        thread.join(0.2)
        assert thread.is_alive()
        assert sess.run(q.dequeue()) == 1
        thread.join(10)
        assert outcome == {"value": None}
        assert sess.run(q.dequeue()) == 2


def test_a_closed_queue_drains_then_reports_out_of_range():
    q = df.FIFOQueue(5, df.int32, shapes=[[]])
    enqueue = q.enqueue_many([[1, 2, 3]])
    with df.Session() as sess:
        sess.run(enqueue)
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(df.errors.CancelledError, match=r"FIFOQueue 'fifo_queue' is closed\."):
            sess.run(enqueue)
        with pytest.raises(df.errors.OutOfRangeError, match="requested 5, current size 3"):
            sess.run(q.dequeue_many(5))
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [1, 2, 3])
        with pytest.raises(df.errors.OutOfRangeError) as caught:
            sess.run(q.dequeue())
    message = str(caught.value)
    assert "is closed and has insufficient elements (requested 1, current size 0)" in message
    assert "fifo_queue_Dequeue" in message and os.path.basename(__file__) in message


def test_closing_frees_a_waiting_dequeue_with_out_of_range():
    q = df.FIFOQueue(2, df.int32)
    with df.Session() as sess:
        thread, outcome = run_in_thread(sess, q.dequeue())
        thread.join(0.1)
        sess.run(q.close())
        thread.join(10)
        assert isinstance(outcome.get("error"), df.errors.OutOfRangeError)


def test_a_pending_enqueue_survives_a_close_unless_the_close_cancels_it():
    q = df.FIFOQueue(1, df.int32)
    with df.Session() as sess:
        sess.run(q.enqueue(1))
        waiting, outcome = run_in_thread(sess, q.enqueue(2))
        waiting.join(0.1)
        sess.run(q.close())
        assert waiting.is_alive()
        assert sess.run(q.dequeue()) == 1
        waiting.join(10)
        assert outcome == {"value": None}
        assert sess.run(q.dequeue()) == 2

    q = df.FIFOQueue(1, df.int32)
    with df.Session() as sess:
        sess.run(q.enqueue(1))
        waiting, outcome = run_in_thread(sess, q.enqueue(2))
        waiting.join(0.1)
        sess.run(q.close(cancel_pending_enqueues=True))
        waiting.join(10)
        assert isinstance(outcome.get("error"), df.errors.CancelledError)
        assert sess.run(q.dequeue()) == 1


def test_closing_the_session_stops_a_waiting_dequeue():
    q = df.FIFOQueue(2, df.int32)
    sess = df.Session()
    thread, outcome = run_in_thread(sess, q.dequeue())
    assert wait_until(lambda: "fifo_queue" in sess._resources)
    sess.close()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), df.errors.CancelledError)


def test_a_deadline_stops_a_waiting_dequeue_and_the_session_stays_usable():
    q = df.FIFOQueue(2, df.int32)
    dequeue, enqueue = q.dequeue(), q.enqueue(5)
    with df.Session() as sess:
        for _ in range(3):
            with pytest.raises(df.errors.DeadlineExceededError):
                sess.run(dequeue, options=df.RunOptions(timeout_in_ms=100))
            # The element enqueued at once goes to the next dequeue, not to the one that gave up
            # (which may still be waking up in the background).
            sess.run(enqueue)
            assert sess.run(dequeue, options=df.RunOptions(timeout_in_ms=5000)) == 5


def test_shape_and_component_errors_name_the_op_and_line():
    q = df.FIFOQueue(3, df.float32, shapes=[[2]])
    with pytest.raises(ValueError, match="not compatible with the queue's shape"):
        q.enqueue(df.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="1 components, got 3 values"):
        q.enqueue([1.0, 2.0, 3.0])  # a list holds one value per component
    unknown = df.placeholder(df.float32, None)
    enqueue = q.enqueue(unknown)
    with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError) as caught:
        sess.run(enqueue, {unknown: [1.0, 2.0, 3.0]})
    assert "Shape mismatch in tuple component 0. Expected [2], got [3]" in str(caught.value)
    assert "fifo_queue_enqueue" in str(caught.value)
    assert os.path.basename(__file__) in str(caught.value)

    shapeless = df.FIFOQueue(3, df.float32)
    many = shapeless.dequeue_many(1)
    with df.Session() as sess:
        sess.run(shapeless.enqueue(1.0))
        with pytest.raises(df.errors.InvalidArgumentError, match="require the components"):
            sess.run(many)
    with pytest.raises(ValueError, match="2 components, got 1"):
        df.FIFOQueue(3, [df.float32, df.int32]).enqueue([1.0])


def test_a_random_shuffle_queue_mixes_and_keeps_min_after_dequeue_until_closed():
    q = df.RandomShuffleQueue(100, 10, df.int32, shapes=[[]], seed=7)
    enqueue = q.enqueue_many([np.arange(50, dtype=np.int32)])
    with df.Session() as sess:
        sess.run(enqueue)
        taken = sess.run(q.dequeue_many(40))
        assert sess.run(q.size()) == 10
        thread, outcome = run_in_thread(sess, q.dequeue())
        thread.join(0.2)
        assert thread.is_alive(), "it keeps min_after_dequeue elements while open"
        sess.run(q.close())
        thread.join(10)
        rest = sess.run(q.dequeue_up_to(20))
    everything = np.concatenate([taken, [outcome["value"]], rest])
    assert sorted(everything) == list(range(50))
    assert not np.array_equal(taken, np.arange(40)), "the order must be shuffled"


def test_a_seeded_random_shuffle_queue_repeats_its_order_in_a_new_session():
    q = df.RandomShuffleQueue(20, 0, df.int32, shapes=[[]], seed=3)
    enqueue = q.enqueue_many([np.arange(20, dtype=np.int32)])
    orders = []
    for _ in range(2):
        with df.Session() as sess:
            sess.run(enqueue)
            orders.append(sess.run(q.dequeue_many(20)))
    np.testing.assert_array_equal(orders[0], orders[1])


def test_enqueues_in_a_loop_body_and_on_a_taken_branch():
    q = df.FIFOQueue(10, df.int32, shapes=[[]])

    def body(i):
        with df.control_dependencies([q.enqueue(i * i)]):
            return i + 1

    loop = df.while_loop(lambda i: i < 4, body, [df.constant(0)])
    pred = df.placeholder(df.bool, [])

    def enqueue_then_one():
        with df.control_dependencies([q.enqueue(100)]):
            return df.constant(1)

    branch = df.cond(pred, enqueue_then_one, lambda: df.constant(0))
    with df.Session() as sess:
        assert sess.run(loop) == 4
        assert sess.run(branch, {pred: False}) == 0
        assert sess.run(branch, {pred: True}) == 1
        sess.run(q.close())
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(10)), [0, 1, 4, 9, 100])


def test_a_queue_graph_saves_loads_and_renders(tmp_path):
    q = df.FIFOQueue(4, [df.float32, df.int32], shapes=[[2], []], name="pairs")
    q.enqueue_many(([[1.0, 2.0], [3.0, 4.0]], [5, 6]), name="fill")
    q.dequeue_many(2, name="take")
    q.size(name="count")
    q.close(name="finish")
    q.is_closed(name="finished")
    mixed = df.RandomShuffleQueue(5, 0, df.int32, shapes=[[]], seed=1, name="mixed")
    mixed.enqueue_many([[1, 2, 3]], name="mix_in")
    mixed.dequeue_up_to(5, name="mix_out")
    mixed.close(name="mix_close")
    path = str(tmp_path / "queue.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    with df.Session(graph=loaded) as sess:
        sess.run("fill")
        assert sess.run("count:0") == 2
        xs, ys = sess.run(["take:0", "take:1"])
        sess.run("finish")
        assert sess.run("finished:0")
        sess.run("mix_in")
        sess.run("mix_close")
        assert sorted(sess.run("mix_out:0")) == [1, 2, 3]
    np.testing.assert_array_equal(xs, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(ys, [5, 6])
    dot = df.render(loaded.get_tensor_by_name("take:0"), format="dot").source
    assert "take" in dot and "pairs" in dot


def test_enqueue_many_of_strings_into_a_queue_of_known_shapes():
    # string_input_producer's queue: file names enqueued many at a time, shape [] each
    queue = df.FIFOQueue(4, df.string, shapes=[[]])
    fill = queue.enqueue_many([["a.txt", "b.txt"]])
    with df.Session() as sess:
        sess.run(fill)
        assert [sess.run(queue.dequeue()) for _ in range(2)] == [b"a.txt", b"b.txt"]
