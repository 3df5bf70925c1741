"""``df.math``: TensorFlow's ``tf.math`` names, each the same function as its top-level or
``df.nn`` spelling (``df.math.top_k is df.nn.top_k``)."""

from ..ops import special_ops as special  # noqa: F401
from ..ops.approx_top_k_ops import approx_max_k, approx_min_k  # noqa: F401
from ..ops.complex_ops import angle, conj, imag, real  # noqa: F401
from ..ops.extra_array_ops import invert_permutation  # noqa: F401
from ..ops.extra_math_ops import *  # noqa: F403
from ..ops.extra_math_ops import __all__ as _extra_math_all
from ..ops.extra_nn_ops import in_top_k, softsign, top_k, zero_fraction  # noqa: F401
from ..ops.extra_segment_ops import (  # noqa: F401
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
)
from ..ops.math_ops import *  # noqa: F403
from ..ops.math_ops import __all__ as _math_all
from ..ops.nn_impl import l2_normalize  # noqa: F401
from ..ops.nn_ops import log_softmax, sigmoid, softmax, softplus  # noqa: F401
from ..ops.segment_ops import segment_sum, unsorted_segment_sum  # noqa: F401
from ..ops.special_ops import (  # noqa: F401
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    betainc,
    erfcinv,
    erfinv,
    igamma,
    igammac,
    ndtri,
)
from ..ops.stateless_random_ops import sobol_sample  # noqa: F401

divide_no_nan = div_no_nan  # noqa: F405

__all__ = sorted(
    set(_math_all)
    | set(_extra_math_all)
    | {
        "approx_max_k",
        "approx_min_k",
        "bessel_i0",
        "bessel_i0e",
        "bessel_i1",
        "bessel_i1e",
        "betainc",
        "angle",
        "conj",
        "imag",
        "real",
        "divide_no_nan",
        "erfcinv",
        "erfinv",
        "igamma",
        "igammac",
        "ndtri",
        "special",
        "in_top_k",
        "invert_permutation",
        "l2_normalize",
        "log_softmax",
        "segment_max",
        "segment_mean",
        "segment_min",
        "segment_prod",
        "segment_sum",
        "sigmoid",
        "sobol_sample",
        "softmax",
        "softplus",
        "softsign",
        "top_k",
        "unsorted_segment_max",
        "unsorted_segment_mean",
        "unsorted_segment_min",
        "unsorted_segment_prod",
        "unsorted_segment_sqrt_n",
        "unsorted_segment_sum",
        "zero_fraction",
    }
)
