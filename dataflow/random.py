"""``df.random``: the random ops under ``tf.compat.v1.random``'s names, and the seeds.

``normal``, ``uniform``, ``truncated_normal``, ``shuffle``, ``gamma``, ``poisson``,
``categorical`` and ``multinomial`` are the ops of ``ops/random_ops.py``; ``set_random_seed``
and ``get_seed`` are `dataflow.random_seed`'s; the candidate samplers (also in ``df.nn``) are
``ops/candidate_sampling_ops.py``'s.  As in ``tf.compat.v1``, ``poisson`` takes
``lam`` first (TensorFlow 2's ``tf.random.poisson`` takes ``shape`` first).
"""

from .ops.candidate_sampling_ops import (
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .ops.random_ops import categorical, multinomial, truncated_normal
from .ops.random_ops import random_gamma as gamma
from .ops.random_ops import random_normal as normal
from .ops.random_ops import random_poisson as poisson
from .ops.random_ops import random_shuffle as shuffle
from .ops.random_ops import random_uniform as uniform
from .random_seed import get_seed, set_random_seed

__all__ = [
    "categorical",
    "fixed_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
    "gamma",
    "get_seed",
    "multinomial",
    "normal",
    "poisson",
    "set_random_seed",
    "shuffle",
    "truncated_normal",
    "uniform",
]
