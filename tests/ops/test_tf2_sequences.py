"""``linspace`` and ``range`` as TensorFlow 2 computes them: their dtypes from their arguments'
(integers make float linspaces), ``linspace``'s N-d form along an axis, and the bits of their
values (``range``'s ``i``-th value is ``start + i * delta``, where numpy's ``arange`` steps
by its first two values' difference).

Expected values were printed by TensorFlow 2.21 for the same calls, eagerly; TF1 graphs give
the same (``tf.compat.v1.linspace`` is TensorFlow 2's function).
"""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def value(tensor):
    return tensor.dtype, tensor.numpy().tolist()


# -- linspace --------------------------------------------------------------------------------------
def test_integer_ends_give_a_float_linspace():
    # tf.linspace(0, 10, 5) -> float64 [0., 2.5, 5., 7.5, 10.]: integers divide into floats
    assert value(df.linspace(0, 10, 5)) == (df.float64, [0.0, 2.5, 5.0, 7.5, 10.0])
    assert value(df.linspace(df.constant(0, df.int64), 10, 5))[0] is df.float64
    assert value(df.linspace(1, 2, 4)) == (
        df.float64,
        [1.0, 1.3333333333333333, 1.6666666666666665, 2.0],
    )
    # small integers divide into float32
    assert value(df.linspace(df.constant(0, df.int8), 10, 5)) == (
        df.float32,
        [0.0, 2.5, 5.0, 7.5, 10.0],
    )
    assert value(df.linspace(df.constant(1, df.int16), 10, 4)) == (
        df.float32,
        [1.0, 4.0, 7.0, 10.0],
    )
    assert value(df.linspace(df.constant(1, df.uint8), 10, 4)) == (
        df.float32,
        [1.0, 4.0, 7.0, 10.0],
    )
    # stop takes start's dtype: 10.5 is no int32
    with pytest.raises(TypeError, match="Expected int32"):
        df.linspace(0, 10.5, 5)


def test_float_linspaces_keep_their_dtype_and_tensorflows_bits():
    assert value(df.linspace(0.0, 10, 5)) == (df.float32, [0.0, 2.5, 5.0, 7.5, 10.0])
    assert value(df.linspace(0.5, 10, 5)) == (df.float32, [0.5, 2.875, 5.25, 7.625, 10.0])
    thirds = df.linspace(0.0, 1.0, 7).numpy().tolist()
    assert thirds == [0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666865348816,
                      0.8333333730697632, 1.0]  # fmt: skip
    halves = df.linspace(df.constant(0.0, df.float16), 1, 7)
    assert value(halves) == (df.float16, [0.0, 0.1666259765625, 0.333251953125, 0.5,
                                          0.66650390625, 0.8330078125, 1.0])  # fmt: skip
    assert value(df.linspace(10.0, 0.0, 4)) == (
        df.float32,
        [10.0, 6.6666669845581055, 3.3333334922790527, 0.0],
    )
    big = df.linspace(-1e30, 3.0, 5).numpy().tolist()
    assert big == [-1.0000000150474662e30, -7.500000490645315e29, -5.000000075237331e29,
                   -2.499999659829347e29, 3.0]  # fmt: skip
    # the ends are start and stop themselves: 0 stays 0 beside an infinite step
    assert value(df.linspace(0.0, float("inf"), 3)) == (df.float32, [0.0, np.inf, np.inf])
    assert value(df.linspace(df.constant(0j, df.complex64), 1, 3)) == (
        df.complex64,
        [0j, 0.5 + 0j, 1 + 0j],
    )


def test_linspace_counts():
    assert value(df.linspace(3.0, 10.0, 1)) == (df.float32, [3.0])
    assert value(df.linspace(3.0, 10.0, 0)) == (df.float32, [])
    assert value(df.linspace(3.0, 10.0, df.constant(3, df.int64)))[1] == [3.0, 6.5, 10.0]
    with pytest.raises(ValueError, match=r"linspace at .*: num must not be negative, got -1"):
        df.linspace(3.0, 10.0, -1)
    # tf: "Argument `tensor` (name: num) must be of type integer"
    with pytest.raises(TypeError, match="num must be an integer, got float32"):
        df.linspace(3.0, 10.0, 3.0)
    # tf: InvalidArgumentError "Value for attr 'T' of bool is not in the list of allowed values"
    with pytest.raises(df.errors.InvalidArgumentError, match="Sub"):
        df.linspace(True, False, 3)


def test_linspace_of_vectors_along_an_axis():
    assert value(df.linspace([0.0, 10.0], [1.0, 20.0], 3))[1] == [
        [0.0, 10.0],
        [0.5, 15.0],
        [1.0, 20.0],
    ]
    along = df.linspace([0.0, 10.0], [1.0, 20.0], 3, axis=1)
    assert along.shape.as_list() == [2, 3]
    assert along.numpy().tolist() == [[0.0, 0.5, 1.0], [10.0, 15.0, 20.0]]
    # start and stop broadcast together
    assert value(df.linspace(0.0, [1.0, 2.0], 3))[1] == [[0.0, 0.0], [0.5, 1.0], [1.0, 2.0]]
    last = df.linspace([[0.0], [10.0]], [1.0, 2.0, 3.0], 3, axis=-1)
    assert last.numpy().tolist() == [
        [[0.0, 0.5, 1.0], [0.0, 1.0, 2.0], [0.0, 1.5, 3.0]],
        [[10.0, 5.5, 1.0], [10.0, 6.0, 2.0], [10.0, 6.5, 3.0]],
    ]
    with pytest.raises(ValueError, match=r"axis must be an int in \[-2, 1\], got 2"):
        df.linspace([0.0], [1.0], 3, axis=2)


def test_linspace_in_a_graph_has_its_static_shape():
    with df.Graph().as_default():
        values = df.linspace(0, 10, 5)
        assert values.dtype is df.float64 and values.shape.as_list() == [5]
        count = df.placeholder(df.int32, [])
        some = df.lin_space(0.0, 1.0, count)
        assert some.shape.as_list() == [None]
        with df.Session() as sess:
            assert sess.run(values).tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]
            assert sess.run(some, {count: 3}).tolist() == [0.0, 0.5, 1.0]


# -- range -----------------------------------------------------------------------------------------
def test_range_dtype_is_the_widest_argument_or_the_one_given():
    assert value(df.range(5)) == (df.int32, [0, 1, 2, 3, 4])
    assert value(df.range(0, 1.5, 0.5)) == (df.float32, [0.0, 0.5, 1.0])
    assert value(df.range(1, 5.0)) == (df.float32, [1.0, 2.0, 3.0, 4.0])
    assert value(df.range(5, dtype=df.float32)) == (df.float32, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert value(df.range(5, dtype=df.int64)) == (df.int64, [0, 1, 2, 3, 4])
    assert value(df.range(df.constant(3, df.int64), 5.5)) == (df.float32, [3.0, 4.0, 5.0])
    assert value(df.range(df.constant(1.0), 3.0, dtype=df.float64)) == (df.float64, [1.0, 2.0])
    assert value(df.range(0, 1, df.constant(0.25)))[1] == [0.0, 0.25, 0.5, 0.75]
    # float16 ranges, as TensorFlow's kernel has them
    assert value(df.range(0, 3, 0.5, dtype=df.float16)) == (
        df.float16,
        [0.0, 0.5, 1.0, 1.5, 2.0, 2.5],
    )
    assert value(df.range(0.0, 3.0, 0.25, dtype=df.float16))[1][-2:] == [2.5, 2.75]
    with pytest.raises(TypeError, match="Expected int32"):
        df.range(0.5, 3, dtype=df.int32)
    for dtype in (df.uint8, df.int8, df.int16):
        # tf: InvalidArgumentError "Value for attr 'Tidx' of uint8 is not in the list ..."
        with pytest.raises(
            df.errors.InvalidArgumentError, match=f"range does not support dtype {dtype.name}"
        ):
            df.range(5, dtype=dtype)


def test_range_values_are_start_plus_i_times_delta():
    # numpy's arange differs here at 11 of the 13 values
    assert df.range(-3.7, 5.1, 0.7).numpy().tolist() == [
        -3.700000047683716, -3.0, -2.3000001907348633, -1.6000001430511475,
        -0.9000000953674316, -0.20000004768371582, 0.4999997615814209, 1.2000000476837158,
        1.8999998569488525, 2.5999996662139893, 3.299999952316284, 3.999999761581421,
        4.699999809265137,
    ]  # fmt: skip
    assert df.range(1.0, -1.0, -0.3).numpy().tolist() == [
        1.0, 0.699999988079071, 0.3999999761581421, 0.09999996423721313,
        -0.20000004768371582, -0.5, -0.8000000715255737,
    ]  # fmt: skip
    assert df.range(df.constant(0.1, df.float16), 100.0, 7.3).numpy().tolist()[:3] == [
        0.0999755859375,
        7.399975776672363,
        14.699975967407227,
    ]
    assert value(df.range(5, 0, -2)) == (df.int32, [5, 3, 1])
    assert value(df.range(0, 10, 3)) == (df.int32, [0, 3, 6, 9])


def test_range_rejects_steps_that_never_arrive():
    # TensorFlow: InvalidArgumentError from the kernel, as here in eager mode
    with pytest.raises(
        df.errors.InvalidArgumentError, match="range requires start <= limit when delta > 0"
    ):
        df.range(5, 0)
    with pytest.raises(df.errors.InvalidArgumentError, match="range requires delta != 0"):
        df.range(0, 5, 0)
    with pytest.raises(
        df.errors.InvalidArgumentError, match="range requires start >= limit when delta < 0"
    ):
        df.range(0, 5, -1)
    with df.Graph().as_default():
        limit = df.placeholder(df.float32, [])
        steps = df.range(0.0, limit, 0.5)
        with df.Session() as sess:
            assert sess.run(steps, {limit: 1.2}).tolist() == [0.0, 0.5, 1.0]
            with pytest.raises(df.errors.InvalidArgumentError, match="start <= limit"):
                sess.run(steps, {limit: -1.0})
