"""``df.random``: the random ops under ``tf.compat.v1.random``'s names, and the seeds.

``normal``, ``uniform``, ``truncated_normal``, ``shuffle``, ``gamma``, ``poisson``,
``categorical`` and ``multinomial`` are the ops of ``ops/random_ops.py``; ``set_random_seed``
and ``get_seed`` are `dataflow.framework.random_seed`'s; the candidate samplers (also in ``df.nn``)
are ``ops/candidate_sampling_ops.py``'s.  As in ``tf.compat.v1``, ``poisson`` takes
``lam`` first (TensorFlow 2's ``tf.random.poisson`` takes ``shape`` first).

The ``stateless_*`` draws, ``split`` and ``fold_in`` depend only on a seed of two ints
(`dataflow.ops.stateless_random_ops`); a `Generator` keeps a stream's state in a variable
(`dataflow.ops.random_experimental`, also ``df.random.experimental``).
"""

from ..ops import random_experimental as experimental  # noqa: E402,I001
from ..ops.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from ..ops.random_ops import categorical, multinomial, truncated_normal
from ..ops.random_ops import random_gamma as gamma
from ..ops.random_ops import random_normal as normal
from ..ops.random_ops import random_poisson as poisson
from ..ops.random_ops import random_shuffle as shuffle
from ..ops.random_ops import random_uniform as uniform
from ..ops.stateless_random_ops import (
    create_rng_state,
    fold_in,
    split,
    stateless_binomial,
    stateless_categorical,
    stateless_gamma,
    stateless_multinomial,
    stateless_normal,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
    stateless_truncated_normal,
    stateless_uniform,
)
from ..ops.random_experimental import (
    Algorithm,
    Generator,
    get_global_generator,
    set_global_generator,
)
from ..framework.random_seed import get_seed, set_random_seed

__all__ = [
    "Algorithm",
    "Generator",
    "all_candidate_sampler",
    "categorical",
    "create_rng_state",
    "experimental",
    "fold_in",
    "get_global_generator",
    "set_global_generator",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_multinomial",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
    "stateless_uniform",
    "fixed_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
    "gamma",
    "get_seed",
    "learned_unigram_candidate_sampler",
    "multinomial",
    "normal",
    "poisson",
    "set_random_seed",
    "shuffle",
    "truncated_normal",
    "uniform",
]
