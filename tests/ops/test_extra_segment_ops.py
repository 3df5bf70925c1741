"""Segment maxima, minima, products and means (sorted and unsorted) and dynamic_stitch, with
TensorFlow's values for empty segments and negative ids, and their gradients.

Expected values are TensorFlow 2.21's (``tf.compat.v1``, graph mode) for the same programs,
printed by running them in a ``tf.Session``; each test names the expressions.
"""

import numpy as np
from ops_testing import assert_same, evaluate

import dataflow as df

# TF programs below use D = [[1., 2.], [3., -4.], [5., 6.], [0., 2.]], IDS = [0, 0, 2, 2] and
# UIDS = [2, 0, 2, -1].
D = np.float32([[1, 2], [3, -4], [5, 6], [0, 2]])
IDS = [0, 0, 2, 2]
UIDS = [2, 0, 2, -1]
LOWEST = np.finfo(np.float32).min


def test_unsorted_segments_fill_empty_ones_as_tensorflow_and_drop_negative_ids():
    # TF: tf.unsorted_segment_max(D, UIDS, 4), _min(D, UIDS, 3), _prod(D, UIDS, 3),
    # _mean(D, UIDS, 3); tf.unsorted_segment_max([1, 5, 3], [0, 0, 1], 3) -> [5, 3, int min]
    maximum, minimum, product, mean, ints = evaluate(
        [
            df.unsorted_segment_max(D, UIDS, 4),
            df.unsorted_segment_min(D, UIDS, 3),
            df.unsorted_segment_prod(D, UIDS, 3),
            df.unsorted_segment_mean(D, UIDS, 3),
            df.unsorted_segment_max([1, 5, 3], [0, 0, 1], 3),
        ]
    )
    assert_same(maximum, np.float32([[3, -4], [LOWEST, LOWEST], [5, 6], [LOWEST, LOWEST]]))
    assert_same(minimum, np.float32([[3, -4], [-LOWEST, -LOWEST], [1, 2]]))
    assert_same(product, np.float32([[3, -4], [1, 1], [5, 12]]))
    assert_same(mean, np.float32([[3, -4], [0, 0], [3, 4]]))
    assert_same(ints, np.int32([5, 3, np.iinfo(np.int32).min]))


def test_sorted_segments_give_zero_for_an_empty_one():
    # TF: tf.segment_max/min/prod/mean(D, IDS)
    maximum, minimum, product, mean = evaluate(
        [
            df.segment_max(D, IDS),
            df.segment_min(D, IDS),
            df.segment_prod(D, IDS),
            df.math.segment_mean(D, IDS),
        ]
    )
    assert_same(maximum, np.float32([[3, 2], [0, 0], [5, 6]]))
    assert_same(minimum, np.float32([[1, -4], [0, 0], [0, 2]]))
    assert_same(product, np.float32([[3, -8], [1, 1], [0, 12]]))
    assert_same(mean, np.float32([[2, -1], [0, 0], [2.5, 4]]))


def test_dynamic_stitch_interleaves_and_later_values_win():
    # TF: tf.dynamic_stitch([[0, 4], [1, 2], [2]], [[[1, 1], [2, 2]], [[3, 3], [4, 4]],
    # [[5, 5]]]) -> [[1, 1], [3, 3], [5, 5], [0, 0], [2, 2]]
    stitched = df.dynamic_stitch(
        [[0, 4], [1, 2], [2]],
        [[[1.0, 1.0], [2.0, 2.0]], [[3.0, 3.0], [4.0, 4.0]], [[5.0, 5.0]]],
    )
    assert_same(evaluate(stitched), np.float32([[1, 1], [3, 3], [5, 5], [0, 0], [2, 2]]))


def test_gradients_of_segment_extrema_and_products_match_tensorflow():
    # TF: tf.gradients(reduce_sum(unsorted_segment_max(D, UIDS, 3) * [[1, 2], [3, 4], [5, 6]]),
    # D) -> [[0, 0], [1, 2], [5, 6], [0, 0]]; tf.gradients(reduce_sum(unsorted_segment_prod(D,
    # IDS, 3)), D) -> [[3, -4], [1, 2], [0, 2], [5, 6]] (exact with the zero in D)
    d = df.constant(D)
    weights = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    (extremum,) = df.gradients(df.reduce_sum(df.unsorted_segment_max(d, UIDS, 3) * weights), d)
    (product,) = df.gradients(df.reduce_sum(df.unsorted_segment_prod(d, IDS, 3)), d)
    got_extremum, got_product = evaluate([extremum, product])
    assert_same(got_extremum, np.float32([[0, 0], [1, 2], [5, 6], [0, 0]]))
    assert_same(got_product, np.float32([[3, -4], [1, 2], [0, 2], [5, 6]]))


def test_segment_reductions_in_a_loop():
    data = df.placeholder(df.float32, [4, 2])
    _, looped = df.while_loop(
        lambda i, x: i < 2,
        lambda i, x: (i + 1, df.unsorted_segment_max(x, [0, 1, 2, 3], 4) + 1.0),
        [0, data],
    )
    assert_same(evaluate(looped, {data: D}), D + 2)
