"""``df.nn``: the neural-network ops (``tf.compat.v1.nn``), defined in ``ops/nn_ops.py`` and the
modules named below."""

from .ops.nn_ops import *  # noqa: F403
from .ops.nn_ops import __all__  # noqa: F401

# isort: split
# training's losses and norms (ops/nn_impl.py)
from .ops.nn_impl import *  # noqa: F403
from .ops.nn_impl import __all__ as _nn_impl_all

# isort: split
# candidate samplers (ops/candidate_sampling_ops.py)
from .ops.candidate_sampling_ops import (
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)

# isort: split
# sparse lookups and sampled losses (ops/embedding_ops.py, ops/sampled_losses.py)
from .ops.embedding_ops import embedding_lookup
from .ops.sampled_losses import compute_accidental_hits, nce_loss, sampled_softmax_loss

__all__ = __all__ + _nn_impl_all
__all__ += [
    "compute_accidental_hits",
    "embedding_lookup",
    "fixed_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "nce_loss",
    "sampled_softmax_loss",
    "uniform_candidate_sampler",
]
