"""dtypes: conversions with `as_dtype`, attributes and comparisons, as in tf.compat.v1."""

import numpy as np
import pytest

import dataflow as df


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("float32", df.float32),
        ("float", df.float32),
        ("double", df.float64),
        ("half", df.float16),
        (np.int16, df.int16),
        (np.dtype("uint8"), df.uint8),
        (float, df.float32),
        (bool, df.bool),
        (3, df.int32),  # TensorFlow's DataType number
        (9, df.int64),
        (df.int8, df.int8),
    ],
)
def test_as_dtype_accepts_names_numpy_types_python_types_and_enum_numbers(spec, expected):
    assert df.as_dtype(spec) is expected


@pytest.mark.parametrize("spec", ["int", int, None, "bfloat16", np.clongdouble, "foo"])
def test_as_dtype_rejects_ambiguous_and_unsupported_types(spec):
    with pytest.raises(TypeError):
        df.as_dtype(spec)


def test_dtype_equals_whatever_as_dtype_converts_to_it():
    assert df.float32 == "float32"
    assert df.float32 == np.float32
    assert df.float32 == np.dtype("float32")
    assert df.float32 != df.float64
    assert df.float32 != "float64"
    assert not (df.float32 == "not a type")
    assert df.float32 != None  # noqa: E711 - the comparison itself is under test
    assert hash(df.float32) == hash(df.as_dtype("float32"))


def test_dtype_str_and_repr():
    assert str(df.int32) == "<dtype: 'int32'>"
    assert repr(df.int32) == "df.int32"


def test_dtype_attributes():
    assert df.int32.as_datatype_enum == 3
    assert df.float64.real_dtype is df.float64
    assert df.uint8.is_numpy_compatible and not df.resource.is_numpy_compatible
    assert not df.float32.is_complex and not df.float32.is_quantized
    assert (df.int8.min, df.int8.max) == (-128, 127)
    assert df.uint8.is_unsigned and df.uint8.size == 1


@pytest.mark.parametrize("attr", ["min", "max"])
def test_bool_has_no_min_or_max(attr):
    with pytest.raises(TypeError):
        getattr(df.bool, attr)
