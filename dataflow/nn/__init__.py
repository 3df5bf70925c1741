"""``df.nn``: the neural-network ops (``tf.compat.v1.nn``), defined in ``ops/nn_ops.py``,
``ops/conv_ops.py`` (convolution and pooling), ``ops/norm_ops.py`` (fused batch norm, LRN) and
the modules named below.

Layer: nn (this package also holds TF1's layers, RNNs and their cells, losses and
metrics), above distribute and below training; it may import every layer below it.
"""

from ..ops import conv_ops as _conv_ops
from ..ops import nn_ops as _nn_ops
from ..ops import norm_ops as _norm_ops
from ..ops.conv_ops import *  # noqa: F403
from ..ops.nn_ops import *  # noqa: F403
from ..ops.norm_ops import *  # noqa: F403

# isort: split
# training's losses and norms (ops/nn_impl.py)
from ..ops.nn_impl import *  # noqa: F403
from ..ops.nn_impl import __all__ as _nn_impl_all

# isort: split
# candidate samplers (ops/candidate_sampling_ops.py)
from ..ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)

# isort: split
# sparse lookups and sampled losses (ops/embedding_ops.py, ops/sampled_losses.py)
from ..ops.embedding_ops import (  # noqa: F401
    embedding_lookup,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)
from ..ops.sampled_losses import (  # noqa: F401
    compute_accidental_hits,
    nce_loss,
    sampled_softmax_loss,
)

__all__ = sorted(
    _nn_ops.__all__
    + _conv_ops.__all__
    + _norm_ops.__all__
    + _nn_impl_all
    + [
        "all_candidate_sampler",
        "learned_unigram_candidate_sampler",
        "compute_accidental_hits",
        "embedding_lookup",
        "embedding_lookup_sparse",
        "safe_embedding_lookup_sparse",
        "fixed_unigram_candidate_sampler",
        "log_uniform_candidate_sampler",
        "nce_loss",
        "sampled_softmax_loss",
        "uniform_candidate_sampler",
    ]
)

# isort: split
# more activations, top_k, moments from sufficient statistics, block moves (ops/extra_nn_ops.py)
from ..ops import extra_nn_ops as _extra_nn_ops  # noqa: E402
from ..ops.extra_nn_ops import *  # noqa: E402, F403

__all__ = sorted(__all__ + _extra_nn_ops.__all__)

# isort: split
# convolution and pooling in any number of dimensions (ops/conv_nd_ops.py)
from ..ops import conv_nd_ops as _conv_nd_ops  # noqa: E402
from ..ops.conv_nd_ops import *  # noqa: E402, F403

__all__ = sorted(__all__ + _conv_nd_ops.__all__)

# isort: split
from . import experimental as experimental  # noqa: E402, F401

# isort: split
# connectionist temporal classification (ops/ctc_ops.py)
from ..ops import ctc_ops as _ctc_ops  # noqa: E402
from ..ops.ctc_ops import *  # noqa: E402, F403

__all__ = sorted(__all__ + _ctc_ops.__all__)

# isort: split
# the k largest or smallest entries, exact on a CPU (ops/approx_top_k_ops.py)
from ..ops.approx_top_k_ops import approx_max_k, approx_min_k  # noqa: E402, F401

__all__ = sorted(__all__ + ["approx_max_k", "approx_min_k"])

# isort: split
# TF1's nn.space_to_batch, the same function as the top-level one (ops/space_batch_ops.py)
from ..ops.space_batch_ops import space_to_batch  # noqa: E402, F401

__all__ = sorted(__all__ + ["space_to_batch"])
