"""Segment sums (``unsorted_segment_sum``, ``segment_sum``) against numpy, with TensorFlow's
treatment of negative ids, its errors and its gradients."""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df


def test_unsorted_segment_sum_adds_rows_into_their_segments_and_drops_negative_ids():
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    out = df.unsorted_segment_sum(data, [0, -1, 0], 3)
    assert out.shape.as_list() == [3, 2]
    # TensorFlow 1.x gives [[6, 8], [0, 0], [0, 0]] for this program.
    assert_same(evaluate(out), np.array([[6.0, 8.0], [0.0, 0.0], [0.0, 0.0]], np.float32))


def test_segment_ids_may_cover_several_leading_dimensions():
    data = np.arange(12.0).reshape(2, 3, 2)
    ids = np.array([[0, 1, 0], [1, 1, 2]])
    expected = np.zeros((3, 2))
    np.add.at(expected, ids.reshape(-1), data.reshape(6, 2))
    assert_same(evaluate(df.unsorted_segment_sum(data, ids, 3)), expected)


def test_segment_sum_has_as_many_rows_as_the_largest_id_needs():
    out = df.segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), [0, 0, 2, 2])
    assert out.shape.as_list() == [None]
    assert_same(evaluate(out), np.array([3.0, 0.0, 7.0]))


def test_bad_segment_ids_are_errors():
    with pytest.raises(df.errors.InvalidArgumentError, match=r"out of range \[0, 2\)"):
        evaluate(df.unsorted_segment_sum([1.0, 2.0], [0, 5], 2))
    with pytest.raises(df.errors.InvalidArgumentError, match="sorted"):
        evaluate(df.segment_sum([1.0, 2.0, 3.0], [1, 0, 0]))
    with pytest.raises(ValueError, match="must be a prefix"):
        df.unsorted_segment_sum(np.zeros((3, 2)), [0, 1], 2)


def test_unique_keeps_first_appearances_in_order_and_maps_each_element():
    values, positions = df.unique([4, 1, 4, 7, 1])
    assert positions.dtype is df.int32
    got = evaluate([values, positions])
    # TensorFlow 1.x: y = [4, 1, 7], idx = [0, 1, 0, 2, 1]
    assert got[0].tolist() == [4, 1, 7] and got[1].tolist() == [0, 1, 0, 2, 1]
    assert evaluate(df.unique([2, 2], out_idx=df.int64)[1]).dtype == np.int64
