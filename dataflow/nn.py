"""``df.nn``: the neural-network ops (``tf.compat.v1.nn``), defined in ``ops/nn_ops.py``."""

from .ops.candidate_sampling_ops import (  # noqa: E402, F401
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .ops.nn_ops import *  # noqa: F403
from .ops.nn_ops import __all__  # noqa: F401
