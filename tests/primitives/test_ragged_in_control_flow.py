"""RaggedTensors through cond and while_loop, as TensorFlow 1.x carries them: part by part
(values and row splits, level by level), made whole again on the way out, with TF1's shape
invariants (the number of rows is kept unless an invariant relaxes it)."""

import pytest

import dataflow as df


def run(fetches, feed=None):
    with df.Session() as sess:
        return sess.run(fetches, feed)


def three_rows():
    return df.ragged.constant([[1, 2], [3], [4, 5, 6]])


def ten_times(i, _):
    return i < 10


def test_a_cond_returns_the_taken_branchs_ragged_tensor():
    rt = three_rows()
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: df.concat([rt + 2, [[100]]], axis=0), lambda: rt[:2] - 2)
    assert isinstance(result, df.RaggedTensor)
    assert run(result, {pred: True}).to_list() == [[3, 4], [5], [6, 7, 8], [100]]
    assert run(result, {pred: False}).to_list() == [[-1, 0], [1]]


def test_the_untaken_branch_of_a_ragged_cond_runs_no_kernel():
    rt = three_rows()

    def untaken():
        checked = df.Assert(df.constant(False), ["the untaken branch ran"])
        with df.control_dependencies([checked]):
            return df.identity(rt)

    result = df.cond(df.constant(True), lambda: rt * 2, untaken)
    assert run(result).to_list() == [[2, 4], [6], [8, 10, 12]]


def test_a_cond_refuses_ragged_tensors_of_different_ragged_ranks():
    deeper = df.ragged.constant([[[1]], [[2, 3]]])
    with pytest.raises((TypeError, ValueError), match="true_fn"):
        df.cond(df.constant(True), lambda: three_rows(), lambda: deeper)


def test_a_loop_may_lengthen_rows_under_the_default_invariant():
    i = df.constant(0)
    _, r = df.while_loop(ten_times, lambda i, x: [i + 1, df.concat([x, x[:, :1]], 1)],
                         [i, three_rows()])  # fmt: skip
    assert r.row_splits.shape.as_list() == [4] and r.values.shape.as_list() == [None]
    assert [len(row) for row in run(r).to_list()] == [12, 11, 13]


def test_a_loop_may_not_add_rows_under_the_default_invariant():
    with pytest.raises(ValueError, match="row_splits|shape"):
        df.while_loop(ten_times, lambda i, x: [i + 1, df.concat([x, x], 0)], [0, three_rows()])


def test_a_ragged_shape_invariant_lets_a_loop_add_rows():
    body = lambda i, x: [i + 1, df.concat([x, x[:1]], 0)]  # noqa: E731
    for invariant in (df.TensorShape([None, None]), df.RaggedTensorSpec([None, None], df.int32)):
        _, r = df.while_loop(lambda i, _: i < 3, body, [0, three_rows()], [None, invariant])
        assert r.row_splits.shape.as_list() == [None]
        assert run(r).to_list() == [[1, 2], [3], [4, 5, 6], [1, 2], [1, 2], [1, 2]]


def test_a_shape_invariant_of_another_ragged_rank_is_refused():
    spec = df.RaggedTensorSpec([None, None, None], df.int32, ragged_rank=2)
    with pytest.raises(ValueError, match="ragged_rank"):
        df.while_loop(ten_times, lambda i, x: [i + 1, x], [0, three_rows()], [None, spec])


def test_a_zero_trip_loop_returns_the_initial_ragged_tensor():
    _, r = df.while_loop(lambda i, _: i < 0, lambda i, x: [i + 1, x * 2], [0, three_rows()])
    assert run(r).to_list() == [[1, 2], [3], [4, 5, 6]]


def test_a_ragged_rank_two_loop_variable_in_a_nested_loop():
    x = df.ragged.constant([[[1, 2], [3], [4, 5, 6]], [[], [8, 9, 10]]])

    def outer_body(i, x):
        inner = df.while_loop(lambda j, _: j < 2, lambda j, y: [j + 1, y + 1], [0, x])[1]
        return [i + 1, df.concat([inner, inner[..., i : i + 1]], axis=-1)]

    _, r = df.while_loop(lambda i, _: i < 2, outer_body, [0, x])
    assert r.row_splits.shape.as_list() == [3]
    assert run(r).to_list() == [
        [[5, 6, 5, 6], [7, 7, 7], [8, 9, 10, 8, 9]],
        [[], [12, 13, 14, 12, 13]],
    ]


def test_a_ragged_loop_result_inside_an_untaken_cond_is_dead_downstream():
    def loop():
        return df.while_loop(ten_times, lambda i, x: [i + 1, x + 1], [0, three_rows()])[1]

    result = df.cond(df.constant(False), loop, lambda: three_rows() * 0)
    assert run(result).to_list() == [[0, 0], [0], [0, 0, 0]]
