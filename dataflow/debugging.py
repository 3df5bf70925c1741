"""``df.debugging``: TF1's ``tf.debugging`` names for the checks, each the same function as
its top-level spelling (``df.debugging.assert_equal is df.assert_equal``)."""

from .ops.check_ops import (  # noqa: F401
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
    check_numerics,
    is_numeric_tensor,
)
from .ops.check_ops import verify_tensor_all_finite as assert_all_finite  # noqa: F401
from .ops.extra_math_ops import is_finite, is_inf, is_nan  # noqa: F401
from .ops.misc_ops import Assert  # noqa: F401

__all__ = sorted(
    [
        "Assert",
        "assert_near",
        "assert_proper_iterable",
        "assert_rank_in",
        "assert_same_float_dtype",
        "is_numeric_tensor",
        "assert_all_finite",
        "assert_equal",
        "assert_greater",
        "assert_greater_equal",
        "assert_integer",
        "assert_less",
        "assert_less_equal",
        "assert_negative",
        "assert_non_negative",
        "assert_non_positive",
        "assert_none_equal",
        "assert_positive",
        "assert_rank",
        "assert_rank_at_least",
        "assert_scalar",
        "assert_type",
        "check_numerics",
        "is_finite",
        "is_inf",
        "is_nan",
    ]
)
