"""RaggedTensors as TensorFlow 1.x has them: made from nested lists or from their parts, read
back as RaggedTensorValues, changed elementwise, sliced, joined and summed, with gradients to
their flat values.  Expected values are TensorFlow 2.21's for the same programs."""

import numpy as np
import pytest

import dataflow as df


def run(fetches, feed=None):
    with df.Session() as sess:
        return sess.run(fetches, feed)


def three_rows():
    return df.ragged.constant([[1, 2], [3], [4, 5, 6]])


def nested():
    return df.ragged.constant([[[1, 2], [3], [4, 5, 6]], [[], [8, 9, 10]]])


def test_a_constant_is_values_cut_by_int64_row_splits():
    rt = three_rows()
    assert rt.dtype is df.int32 and rt.row_splits.dtype is df.int64
    assert rt.ragged_rank == 1 and rt.shape.as_list() == [3, None]
    value = run(rt)
    assert isinstance(value, df.ragged.RaggedTensorValue)
    assert value.values.tolist() == [1, 2, 3, 4, 5, 6]
    assert value.row_splits.tolist() == [0, 2, 3, 6]
    assert value.to_list() == [[1, 2], [3], [4, 5, 6]]


def test_a_nested_constant_has_one_row_partition_per_ragged_dimension():
    rt = nested()
    assert rt.ragged_rank == 2 and rt.shape.as_list() == [2, None, None]
    assert isinstance(rt.values, df.RaggedTensor)
    flat, outer, inner = run([rt.flat_values, *rt.nested_row_splits])
    assert flat.tolist() == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    assert outer.tolist() == [0, 3, 5] and inner.tolist() == [0, 2, 3, 6, 6, 9]
    assert run(rt).to_list() == [[[1, 2], [3], [4, 5, 6]], [[], [8, 9, 10]]]


def test_a_constant_with_an_inner_shape_keeps_uniform_inner_dimensions():
    rt = df.ragged.constant([[[1.0, 2.0]], [], [[3.0, 4.0], [5.0, 6.0]]], inner_shape=(2,))
    assert rt.ragged_rank == 1 and rt.shape.as_list() == [3, None, 2]
    assert run(rt.row_lengths()).tolist() == [1, 0, 2]


def test_the_factories_agree_on_one_partition():
    values = df.constant([3, 1, 4, 1, 5, 9, 2])
    made = [
        df.RaggedTensor.from_row_splits(values, [0, 4, 4, 7]),
        df.RaggedTensor.from_row_lengths(values, [4, 0, 3]),
        df.RaggedTensor.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 2], nrows=3),
        df.RaggedTensor.from_nested_row_splits(values, [[0, 4, 4, 7]]),
    ]
    for value in run(made):
        assert value.to_list() == [[3, 1, 4, 1], [], [5, 9, 2]]


def test_from_value_rowids_counts_rows_from_the_last_id_without_nrows():
    rt = df.RaggedTensor.from_value_rowids(df.constant([1, 2, 3]), [0, 2, 2])
    assert run(rt).to_list() == [[1], [], [2, 3]]


def test_bad_row_splits_known_when_building_are_refused():
    with pytest.raises(ValueError, match="start with 0"):
        df.RaggedTensor.from_row_splits(df.constant([1, 2]), [1, 2])
    with pytest.raises(ValueError, match="ascending"):
        df.RaggedTensor.from_row_splits(df.constant([1, 2]), [0, 2, 1, 2])
    with pytest.raises(ValueError, match="number of values"):
        df.RaggedTensor.from_row_splits(df.constant([1, 2]), [0, 1])


def test_bad_row_splits_fed_at_run_time_fail_the_run():
    splits = df.placeholder(df.int64, [None])
    rt = df.RaggedTensor.from_row_splits(df.constant([1, 2, 3]), splits)
    with df.Session() as sess:
        assert sess.run(rt, {splits: [0, 1, 3]}).to_list() == [[1], [2, 3]]
        with pytest.raises(df.errors.InvalidArgumentError, match="row_splits must start at 0"):
            sess.run(rt, {splits: [0, 1, 2]})
        assert sess.run(rt, {splits: [0, 3]}).to_list() == [[1, 2, 3]]


def test_the_constructor_is_private_as_in_tensorflow():
    with pytest.raises(ValueError, match="factory methods"):
        df.RaggedTensor(df.constant([1]), df.constant([0, 1], df.int64))


def test_from_tensor_takes_every_row_whole_and_to_tensor_pads():
    dense = df.constant([[1, 2], [3, 4], [5, 6]])
    assert run(df.RaggedTensor.from_tensor(dense)).to_list() == [[1, 2], [3, 4], [5, 6]]
    rt = three_rows()
    assert run(rt.to_tensor()).tolist() == [[1, 2, 0], [3, 0, 0], [4, 5, 6]]
    assert run(rt.to_tensor(default_value=-1)).tolist() == [[1, 2, -1], [3, -1, -1], [4, 5, 6]]
    padded = run(nested().to_tensor())
    assert padded.shape == (2, 3, 3)
    assert padded[1].tolist() == [[0, 0, 0], [8, 9, 10], [0, 0, 0]]


def test_row_lengths_nrows_and_value_rowids_describe_the_partition():
    rt = df.ragged.constant([[1, 2], [], [3], [4, 5, 6]])
    lengths, nrows, rowids = run([rt.row_lengths(), rt.nrows(), rt.value_rowids()])
    assert lengths.tolist() == [2, 0, 1, 3] and nrows == 4
    assert rowids.tolist() == [0, 0, 2, 3, 3, 3]
    assert run(nested().row_lengths(axis=2)).to_list() == [[2, 1, 3], [0, 3]]


def test_operators_apply_to_the_flat_values_and_keep_the_rows():
    rt = three_rows()
    assert run(rt + 2).to_list() == [[3, 4], [5], [6, 7, 8]]
    assert run(10 - rt).to_list() == [[9, 8], [7], [6, 5, 4]]
    assert run(rt * rt).to_list() == [[1, 4], [9], [16, 25, 36]]
    assert run(-rt).to_list() == [[-1, -2], [-3], [-4, -5, -6]]
    assert run(rt > 2).to_list() == [[False, False], [True], [True, True, True]]
    doubled = df.ragged.map_flat_values(df.multiply, nested(), 2)
    assert run(doubled).to_list() == [[[2, 4], [6], [8, 10, 12]], [[], [16, 18, 20]]]


def test_an_operator_with_a_dense_tensor_of_rows_is_refused():
    with pytest.raises(ValueError, match="scalar, a RaggedTensor of the same rows"):
        three_rows() + df.constant([1, 2, 3])


def test_indexing_takes_rows_and_slices_within_rows():
    rt = three_rows()
    assert run(rt[:2]).to_list() == [[1, 2], [3]]
    assert run(rt[1:]).to_list() == [[3], [4, 5, 6]]
    assert run(rt[-1]).tolist() == [4, 5, 6]
    assert run(rt[:, 1:]).to_list() == [[2], [], [5, 6]]
    assert run(rt[:, -2:]).to_list() == [[1, 2], [3], [5, 6]]
    assert run(rt[:, :0]).to_list() == [[], [], []]
    x = nested()
    assert run(x[1]).to_list() == [[], [8, 9, 10]]
    assert run(x[..., 1:2]).to_list() == [[[2], [], [5]], [[], [9]]]
    start = df.placeholder(df.int32, [])
    assert run(x[..., start : start + 1], {start: 0}).to_list() == [[[1], [3], [4]], [[], [8]]]


def test_indexing_a_ragged_dimension_with_a_step_or_an_int_is_refused():
    with pytest.raises(ValueError, match="step 1"):
        three_rows()[:, ::2]
    with pytest.raises(ValueError, match="sliced, not indexed"):
        three_rows()[:, 0]


def test_concat_joins_rows_within_rows_and_deeper():
    rt = three_rows()
    assert run(df.concat([rt + 2, [[100]]], axis=0)).to_list() == [[3, 4], [5], [6, 7, 8], [100]]
    assert run(df.concat([rt, rt * 10], axis=1)).to_list() == [
        [1, 2, 10, 20],
        [3, 30],
        [4, 5, 6, 40, 50, 60],
    ]
    x = nested()
    assert run(df.concat([x, x[..., :1]], axis=-1)).to_list() == [
        [[1, 2, 1], [3, 3], [4, 5, 6, 4]],
        [[], [8, 9, 10, 8]],
    ]
    assert run(df.concat([x, x], axis=1)).to_list() == [
        [[1, 2], [3], [4, 5, 6], [1, 2], [3], [4, 5, 6]],
        [[], [8, 9, 10], [], [8, 9, 10]],
    ]


def test_reduce_sum_over_each_axis():
    rt = df.ragged.constant([[1, 2], [], [3, 4, 5]])
    total, rows, columns = run([df.reduce_sum(rt), df.reduce_sum(rt, axis=1), df.reduce_sum(rt, 0)])
    assert total == 15 and rows.tolist() == [3, 0, 12] and columns.tolist() == [4, 6, 5]
    assert run(df.reduce_sum(nested(), axis=2)).to_list() == [[3, 3, 15], [0, 27]]


def test_ragged_range_makes_one_row_per_bound():
    rt = df.ragged.range([0, 5, 2], [3, 5, 8], [1, 1, 3])
    assert run(rt).to_list() == [[0, 1, 2], [], [2, 5]]
    with pytest.raises(df.errors.InvalidArgumentError, match="delta != 0"):
        run(df.ragged.range([0], [3], [0]))


def test_gradients_reach_the_flat_values_through_ragged_ops():
    values = df.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    rt = df.RaggedTensor.from_row_splits(values, [0, 2, 3, 6])
    y = df.concat([rt * 3.0, rt[:, 1:]], axis=1)
    loss = df.reduce_sum(df.reduce_sum(y, axis=1) * df.constant([1.0, 10.0, 100.0]))
    (grad,) = df.gradients(loss, [values])
    assert run(grad).tolist() == [3.0, 4.0, 30.0, 300.0, 400.0, 400.0]


def test_a_ragged_placeholder_is_fed_a_ragged_tensor_value():
    rt = df.ragged.placeholder(df.float32, ragged_rank=1)
    doubled = rt * 2.0
    value = df.ragged.constant_value([[1.0], [2.0, 3.0]])
    assert run(doubled, {rt: value}).to_list() == [[2.0], [4.0, 6.0]]
    empty = df.ragged.constant_value([[], []], dtype=np.float32)
    assert run(doubled, {rt: empty}).to_list() == [[], []]


def test_a_ragged_feed_of_another_kind_is_refused_by_name():
    rt = df.ragged.placeholder(df.float32, ragged_rank=1)
    with pytest.raises(TypeError, match="fed from a RaggedTensorValue"):
        run(rt * 2.0, {rt: [[1.0], [2.0]]})
    deeper = df.ragged.constant_value([[[1.0]]])
    with pytest.raises(ValueError, match="ragged_rank 1 cannot be fed .* ragged_rank 2"):
        run(rt * 2.0, {rt: deeper})


def test_fetching_a_ragged_tensor_inside_a_structure():
    got = run({"rt": three_rows(), "n": df.constant(1)})
    assert got["rt"].to_list() == [[1, 2], [3], [4, 5, 6]] and got["n"] == 1


def test_identity_passes_a_ragged_tensor_part_by_part():
    same = df.identity(nested())
    assert isinstance(same, df.RaggedTensor) and same.ragged_rank == 2
    assert run(same).to_list() == [[[1, 2], [3], [4, 5, 6]], [[], [8, 9, 10]]]
