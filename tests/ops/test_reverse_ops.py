"""reverse (ReverseV2) and reverse_sequence (ReverseSequence), as tf.compat.v1."""

from __future__ import annotations

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

X = np.arange(12, dtype=np.float32).reshape(2, 3, 2)


def test_reverse_flips_the_given_dimensions():
    assert_same(evaluate(df.reverse(X, [1])), X[:, ::-1])
    assert_same(evaluate(df.reverse(X, [0, -1])), X[::-1, :, ::-1])
    with pytest.raises(ValueError, match="out of range"):
        df.reverse(X, [3])


def test_reverse_sequence_flips_each_entry_within_its_length():
    out = evaluate(df.reverse_sequence(X, [2, 3], seq_axis=1, batch_axis=0))
    assert_same(out, np.stack([X[0, [1, 0, 2]], X[1, ::-1]]))
    time_major = evaluate(
        df.reverse_sequence(X.transpose(1, 0, 2), [2, 3], seq_axis=0, batch_axis=1)
    )
    assert_same(time_major, out.transpose(1, 0, 2))
    assert_same(evaluate(df.reverse_sequence(X, [0, 1], seq_dim=1, batch_dim=0)), X)


def test_reverse_sequence_checks_the_lengths():
    with pytest.raises(ValueError, match=r"Length of seq_lengths != input.dims\(0\)"):
        df.reverse_sequence(X, [1, 2, 3], seq_axis=1, batch_axis=0)
    lengths = df.placeholder(df.int32, [None])
    with pytest.raises(df.errors.InvalidArgumentError, match="seq_lengths must be in"):
        evaluate(df.reverse_sequence(X, lengths, seq_axis=1, batch_axis=0), {lengths: [1, 4]})
