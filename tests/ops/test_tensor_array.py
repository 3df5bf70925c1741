"""df.TensorArray: TF1's graph-mode array of tensors (handle + flow), its run-time storage, its
errors, and its travel through while_loop and cond."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from ops_testing import assert_same, run

import dataflow as df


def _error_of(fetch, feed_dict=None) -> str:
    with pytest.raises(df.errors.InvalidArgumentError) as info:
        run(fetch, feed_dict)
    return str(info.value)


# -- the graph it builds -------------------------------------------------------------------------
def test_a_tensor_array_is_a_resource_handle_and_a_float_flow_named_as_in_tf1():
    ta = df.TensorArray(df.float32, size=3)
    assert ta.handle.op.type == "TensorArrayV3" and ta.handle.op.name == "TensorArray"
    assert (ta.handle.dtype, ta.handle.shape) == (df.resource, df.TensorShape([2]))
    assert (ta.flow.dtype, ta.flow.shape) == (df.float32, df.TensorShape([]))
    assert ta.handle.op.inputs[0].op.name == "TensorArray/size"
    attrs = ta.handle.op.attrs
    assert attrs["dynamic_size"] is False and attrs["clear_after_read"] is True
    assert attrs["identical_element_shapes"] is True and attrs["tensor_array_name"] == ""
    written = ta.write(0, [1.0, 2.0])
    assert written.flow.op.name == "TensorArrayWrite/TensorArrayWriteV3"
    assert written.handle is ta.handle and written.flow is not ta.flow
    assert written.read(0).op.name == "TensorArrayReadV3"
    assert written.stack().op.name == "TensorArrayStack/TensorArrayGatherV3"


def test_the_first_write_fixes_the_element_shape_for_every_array_object_sharing_it():
    ta = df.TensorArray(df.float32, size=3)
    written = ta.write(0, [1.0, 2.0])
    assert ta.element_shape == df.TensorShape([2]) == written.element_shape
    assert written.read(1).shape == df.TensorShape([2])
    assert written.stack().shape == df.TensorShape([3, 2])  # a fixed size is static too
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"):
        written.write(1, [1.0, 2.0, 3.0])


def test_infer_shape_false_lets_elements_differ_and_concat_joins_them():
    ta = df.TensorArray(df.float32, size=2, infer_shape=False)
    ta = ta.write(0, [1.0]).write(1, [2.0, 3.0])
    assert ta.element_shape.ndims is None
    value = ta.concat()
    assert value.shape.ndims is None  # as in TF1: nothing is known of the elements
    assert_same(run(value), np.array([1.0, 2.0, 3.0], np.float32))


def test_handle_and_size_or_shape_cannot_be_given_together():
    ta = df.TensorArray(df.float32, size=2)
    for kwargs in ({"size": 2}, {"element_shape": [2]}, {"dynamic_size": True}):
        with pytest.raises(ValueError, match="Cannot provide both a handle"):
            df.TensorArray(df.float32, handle=ta.handle, flow=ta.flow, **kwargs)
    with pytest.raises(ValueError, match="Size must be provided"):
        df.TensorArray(df.float32)
    with pytest.raises(ValueError, match="flow must not be None"):
        df.TensorArray(df.float32, handle=ta.handle)


def test_a_value_of_another_dtype_is_refused_when_the_graph_is_built():
    ta = df.TensorArray(df.float32, size=2)
    with pytest.raises(TypeError, match=r"int32, but the TensorArray 'TensorArray' holds float32"):
        ta.write(0, df.constant([1, 2]))
    assert ta.write(0, [1, 2]).flow is not None  # Python numbers take the array's dtype


# -- values --------------------------------------------------------------------------------------
def test_write_read_stack_gather_and_size():
    ta = df.TensorArray(df.float32, size=3).write(0, [1.0, 2.0]).write(2, [5.0, 6.0])
    stacked, size = run([ta.stack(), ta.size()])
    assert_same(stacked, np.array([[1, 2], [0, 0], [5, 6]], np.float32))  # unwritten: zeros
    assert size == 3
    assert_same(run(ta.identity().read(0)), np.array([1, 2], np.float32))
    ta = df.TensorArray(df.int32, size=3, clear_after_read=False).unstack([[1], [2], [3]])
    assert_same(run(ta.gather([2, 0])), np.array([[3], [1]], np.int32))


def test_a_dynamic_size_array_grows_on_writes_past_its_end():
    ta = df.TensorArray(df.float32, size=0, dynamic_size=True).write(4, [1.0])
    size, stacked = run([ta.size(), ta.stack()])
    assert size == 5
    assert_same(stacked, np.array([[0], [0], [0], [0], [1]], np.float32))


def test_scatter_split_and_unstack_fill_several_elements():
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    unstacked = df.TensorArray(df.float32, size=3).unstack(values)
    assert unstacked.element_shape == df.TensorShape([2])
    scattered = df.TensorArray(df.float32, size=4).scatter([3, 1], values[:2])
    split = df.TensorArray(df.float32, size=2, infer_shape=False).split(values, [1, 2])
    assert split.element_shape.ndims is None  # pieces of different lengths
    a, b, c = run([unstacked.read(1), scattered.stack(), split.concat()])
    assert_same(a, values[1])
    assert_same(b, np.array([[0, 0], [2, 3], [0, 0], [0, 1]], np.float32))
    assert_same(c, values)


def test_an_element_of_unknown_length_is_read_from_a_fed_value():
    value = df.placeholder(df.float32, [None])
    ta = df.TensorArray(df.float32, size=1).write(0, value)
    assert_same(run(ta.read(0), {value: [1.0, 2.0, 3.0]}), np.array([1, 2, 3], np.float32))


def test_empty_stacks_need_a_known_element_shape():
    empty = df.TensorArray(df.float32, size=0, element_shape=[2])
    assert run(empty.stack()).shape == (0, 2)
    with pytest.raises(df.errors.UnimplementedError, match="element shape <unknown> is not fully"):
        run(df.TensorArray(df.float32, size=0).stack())


def test_each_run_gets_its_own_array():
    """Two runs (here at once, on two threads) never share elements: a second run writing the
    same index is not a double write."""
    x = df.placeholder(df.float32, [])
    ta = df.TensorArray(df.float32, size=1).write(0, x)
    out = ta.read(0) * 2.0
    results = {}
    with df.Session() as sess:

        def go(value):
            results[value] = sess.run(out, {x: value})

        threads = [threading.Thread(target=go, args=(float(v),)) for v in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == {float(v): 2.0 * v for v in range(8)}
        assert sess.run(out, {x: 1.0}) == 2.0


# -- run-time errors, with TF1's wording -----------------------------------------------------------
def test_writing_an_index_twice_is_an_error():
    ta = df.TensorArray(df.float32, size=3).write(2, [1.0])
    message = _error_of(ta.write(2, [2.0], name="second").stack())
    assert "'second/second'" in message and "test_tensor_array.py" in message
    assert "Could not write to TensorArray index 2 because it has already been written to." in (
        message
    )


def test_writing_past_the_end_of_a_fixed_size_array_is_an_error():
    message = _error_of(df.TensorArray(df.float32, size=3).write(3, [1.0]).stack())
    assert "Tried to write to index 3 but array is not resizeable and size is: 3" in message
    message = _error_of(df.TensorArray(df.float32, size=3).write(-1, [1.0]).stack())
    assert "Tried to write to index -1" in message


def test_reading_out_of_range_or_twice_is_an_error():
    ta = df.TensorArray(df.float32, size=2).write(0, [1.0])
    assert "Tried to read from index 5 but array size is: 2" in _error_of(ta.read(5))
    message = _error_of(df.stack([ta.read(0), ta.read(0)]))
    assert "Could not read index 0 twice because it was cleared after a previous read" in message
    kept = df.TensorArray(df.float32, size=1, clear_after_read=False).write(0, [1.0])
    assert_same(run(df.stack([kept.read(0), kept.read(0)])), np.ones((2, 1), np.float32))


def test_reading_an_unwritten_element_of_unknown_shape_is_an_error():
    message = _error_of(df.TensorArray(df.float32, size=2).read(1))
    assert "Could not read from TensorArray index 1.  Furthermore, the element shape is not " in (
        message
    )


def test_a_value_that_does_not_fit_the_element_shape_is_an_error_at_run_time():
    value = df.placeholder(df.float32, [None])
    ta = df.TensorArray(df.float32, size=2).write(0, value).write(1, df.constant([1.0, 2.0]))
    message = _error_of(ta.stack(), {value: [1.0]})
    assert (
        "Could not write to TensorArray index 1 because the value shape is [2] which is "
        "incompatible with the TensorArray's inferred element shape: [1] (consider setting "
        "infer_shape=False)."
    ) in message


def test_scatter_and_split_check_their_indices_and_lengths():
    ta = df.TensorArray(df.float32, size=2)
    assert "Max scatter index must be < array size (5 vs. 2)" in _error_of(
        ta.scatter([0, 5], [[1.0], [2.0]]).stack()
    )
    message = _error_of(ta.split([1.0, 2.0, 3.0], [1, 1]).concat())
    assert "sum of lengths is 2 and value's shape is: [3]" in message
    message = _error_of(
        df.TensorArray(df.float32, size=2, infer_shape=False)
        .split([1.0, 2.0, 3.0], [1, 2, 0])
        .concat()
    )
    assert "size of lengths (3 vs. 2)" in message


def test_a_failed_run_leaves_the_session_usable():
    x = df.placeholder(df.int32, [])
    ta = df.TensorArray(df.float32, size=2).write(x, [1.0])
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError):
            sess.run(ta.stack(), {x: 7})
        assert_same(sess.run(ta.stack(), {x: 1}), np.array([[0], [1]], np.float32))


# -- in control flow -----------------------------------------------------------------------------
def _running_squares(n, parallel_iterations=10):
    ta = df.TensorArray(df.float32, size=0, dynamic_size=True)

    def body(i, ta):
        return i + 1, ta.write(i, df.cast(i * i, df.float32))

    _, ta = df.while_loop(
        lambda i, ta: i < n, body, [0, ta], parallel_iterations=parallel_iterations
    )
    return ta


def test_a_tensor_array_is_a_loop_variable_travelling_as_its_flow():
    n = df.placeholder(df.int32, [])
    ta = _running_squares(n)
    assert isinstance(ta, df.TensorArray) and ta.flow.op.type == "Exit"
    for parallel in (1, 10):
        ta = _running_squares(n, parallel)
        stacked, size = run([ta.stack(), ta.size()], {n: 5})
        assert size == 5
        assert_same(stacked, np.array([0, 1, 4, 9, 16], np.float32))


def test_an_array_read_inside_a_loop_is_captured_and_a_zero_trip_loop_leaves_it_empty():
    n = df.placeholder(df.int32, [])
    source = df.TensorArray(df.float32, size=n, element_shape=[], clear_after_read=False)
    source = source.unstack(df.cast(df.range(n), df.float32) + 0.5)

    def body(i, total):
        return i + 1, total + source.read(i)

    _, total = df.while_loop(lambda i, t: i < n, body, [0, 0.0])
    assert run(total, {n: 4}) == 8.0
    assert run(total, {n: 0}) == 0.0


def test_an_array_made_in_a_loop_body_is_a_new_one_each_iteration():
    def body(i, total):
        ta = df.TensorArray(df.float32, size=1).write(0, df.cast(i, df.float32))
        return i + 1, total + ta.read(0)

    _, total = df.while_loop(lambda i, t: i < 4, body, [0, 0.0])
    assert run(total) == 6.0


def test_a_body_returning_a_tensor_for_a_tensor_array_is_refused():
    ta = df.TensorArray(df.float32, size=1)
    with pytest.raises(TypeError, match="a TensorArray loop variable must be a TensorArray"):
        df.while_loop(lambda i, ta: i < 1, lambda i, ta: (i + 1, ta.flow), [0, ta])


def test_cond_returns_tensor_arrays_and_only_the_taken_branch_writes():
    pred = df.placeholder(df.bool, [])
    ta = df.TensorArray(df.float32, size=2)
    out = df.cond(pred, lambda: ta.write(0, [1.0]), lambda: ta.write(1, [2.0]))
    assert isinstance(out, df.TensorArray) and out.flow.op.type == "Merge"
    assert_same(run(out.stack(), {pred: True}), np.array([[1], [0]], np.float32))
    assert_same(run(out.stack(), {pred: False}), np.array([[0], [2]], np.float32))
    with pytest.raises(TypeError, match="a TensorArray must be returned by both branches"):
        df.cond(pred, lambda: ta.write(0, [1.0]), lambda: ta.flow)


def test_a_loop_of_tensor_arrays_saves_loads_and_renders(tmp_path):
    n = df.placeholder(df.int32, [], name="n")
    df.identity(_running_squares(n).stack(), name="out")
    path = str(tmp_path / "squares.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    with df.Session(graph=loaded) as sess:
        assert_same(sess.run("out:0", {"n:0": 3}), np.array([0, 1, 4], np.float32))
    source = df.render(df.get_default_graph(), format="dot").source
    assert "TensorArrayWriteV3" in source and "cluster" in source


def test_a_closed_array_refuses_further_use():
    ta = df.TensorArray(df.float32, size=1).write(0, [1.0])
    value = ta.read(0)
    with df.control_dependencies([value]):
        close_after_reading = ta.close()
    assert_same(run([value, close_after_reading])[0], np.array([1.0], np.float32))
    with df.control_dependencies([ta.close()]):
        after = df.identity(ta.flow)
    read = df.TensorArray(df.float32, handle=ta.handle, flow=after).read(0)
    assert "has already been closed" in _error_of(read)


def test_the_gradient_of_a_stack_reads_its_gradient_array():
    x = df.constant([[1.0, 2.0], [3.0, 4.0]])
    stacked = df.TensorArray(df.float32, size=2).unstack(x * x).stack()
    (grad,) = df.gradients(stacked, [x])
    assert any(op.type == "TensorArrayGradV3" for op in df.get_default_graph().get_operations())
    assert_same(run(grad), np.array([[2, 4], [6, 8]], np.float32))
