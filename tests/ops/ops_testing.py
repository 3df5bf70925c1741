"""Helpers for the op tests: run tensors in a Session and check that the values agree with the
dtype and shape that static inference promised."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import dataflow as df


def run(fetches, feed_dict=None):
    with df.Session() as sess:
        return sess.run(fetches, feed_dict)


def check_static(tensor: df.Tensor, value) -> None:
    """The run-time ``value`` has exactly the static dtype and a compatible shape (a string
    is ``bytes``, alone or in an object array)."""
    if tensor.dtype is df.string:
        assert all(isinstance(v, bytes) for v in np.asarray(value, dtype=object).flat), value
        value = np.asarray(value, dtype=object)
    assert isinstance(value, (np.ndarray, np.generic)), type(value)
    assert value.dtype == tensor.dtype.as_numpy_dtype, (tensor, value.dtype)
    assert tensor.shape.is_compatible_with(np.shape(value)), (tensor, np.shape(value))


def evaluate(fetches, feed_dict=None):
    """Runs a tensor (or a list of them) and checks each value against its static type."""
    values = run(fetches, feed_dict)
    if isinstance(fetches, df.Tensor):
        check_static(fetches, values)
    else:
        for t, v in zip(fetches, values):
            check_static(t, v)
    return values


def assert_same(actual, expected, rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Equal shape and dtype, and equal values (close ones for floats; nan equals nan)."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def placeholder_for(value, known=None, name=None) -> df.Tensor:
    """A placeholder that ``value`` can feed; dimension ``i`` is statically known only where
    ``known[i]`` is true (all of them by default)."""
    value = np.asarray(value)
    dims = list(value.shape)
    if known is not None:
        dims = [d if k else None for d, k in zip(dims, known)]
    return df.placeholder(df.as_dtype(value.dtype), dims, name=name)


@st.composite
def partially_known(draw, value):
    """A placeholder for ``value`` with a random subset of its dimensions (or its rank) known."""
    value = np.asarray(value)
    if draw(st.integers(0, 9)) == 0:
        return df.placeholder(df.as_dtype(value.dtype), None)
    known = draw(st.lists(st.booleans(), min_size=value.ndim, max_size=value.ndim))
    return placeholder_for(value, known)
