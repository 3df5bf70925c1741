"""Candidate samplers: the negative classes that sampled losses (``nn.nce_loss``,
``nn.sampled_softmax_loss``) score instead of every class.

Each sampler op takes ``true_classes`` (int64, ``[batch_size, num_true]``) and draws
``num_sampled`` classes from ``[0, range_max)``, giving three outputs as TensorFlow 1.x:

- ``sampled_candidates`` (int64, ``[num_sampled]``);
- ``true_expected_count`` (float32, ``[batch_size, num_true]``) and ``sampled_expected_count``
  (float32, ``[num_sampled]``): how many times each class is expected among the draws.  Drawn
  with replacement (``unique=False``) that is ``num_sampled * P(class)``; with ``unique=True`` the
  sampler draws until it has ``num_sampled`` distinct classes, after ``num_tries`` draws, and the
  expected count is the probability of appearing at all, ``1 - (1 - P(class)) ** num_tries``.

The distributions: uniform; log-uniform (Zipfian), ``P(c) = log((c + 2) / (c + 1)) /
log(range_max + 1)``, for classes sorted by decreasing frequency; and a fixed unigram table
raised to ``distortion`` (``unigrams``; reading ``vocab_file`` and sharding are not supported).
The draws come from the op's random stream (`dataflow.client.random_streams`), seeded as every
random op; none of the outputs has a gradient, as in TensorFlow.
"""

from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.random_seed import op_seed_attrs
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = [
    "all_candidate_sampler",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "uniform_candidate_sampler",
]

CandidateSamples = collections.namedtuple(
    "CandidateSamples", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)


def _infer_sampler(op):
    (true_classes,) = op.inputs
    attrs = op.attrs
    if true_classes.dtype is not _dtypes.int64:
        raise TypeError(f"true_classes must be int64, got {true_classes.dtype.name}")
    if true_classes.shape.ndims not in (None, 2):
        raise ValueError(f"true_classes must be [batch_size, num_true], got {true_classes.shape}")
    num_true, num_sampled, range_max = attrs["num_true"], attrs["num_sampled"], attrs["range_max"]
    if num_true < 1 or num_sampled < 1 or range_max < 1:
        raise ValueError(
            f"num_true, num_sampled and range_max must be positive, got {num_true}, "
            f"{num_sampled}, {range_max}"
        )
    if true_classes.shape.ndims == 2 and true_classes.shape[1] not in (None, num_true):
        raise ValueError(
            f"true_classes has {true_classes.shape[1]} columns, but num_true is {num_true}"
        )
    if attrs["unique"] and num_sampled > range_max:
        raise ValueError(f"cannot sample {num_sampled} unique classes from a range of {range_max}")
    unigrams = attrs.get("unigrams")
    if unigrams is not None and len(unigrams) + attrs["num_reserved_ids"] != range_max:
        raise ValueError(
            f"unigrams has {len(unigrams)} entries and num_reserved_ids is "
            f"{attrs['num_reserved_ids']}, but range_max is {range_max}: they must add up"
        )
    batch = true_classes.shape[0] if true_classes.shape.ndims == 2 else None
    return [
        (_dtypes.int64, TensorShape([num_sampled])),
        (_dtypes.float32, TensorShape([batch, num_true])),
        (_dtypes.float32, TensorShape([num_sampled])),
    ]


def _expected_count(probability: np.ndarray, num_sampled: int, num_tries: int) -> np.ndarray:
    if num_tries == num_sampled:  # always so when drawing with replacement
        return (probability * num_sampled).astype(np.float32)
    with np.errstate(divide="ignore"):
        return (-np.expm1(num_tries * np.log1p(-probability))).astype(np.float32)


def _draw_candidates(generator, draw, num_sampled: int, unique: bool):
    """``num_sampled`` classes from ``draw(generator, n)`` (distinct ones when ``unique``) and
    how many draws that took."""
    if not unique:
        return draw(generator, num_sampled).astype(np.int64), num_sampled
    candidates, num_tries = [], 0
    seen: set = set()
    while len(candidates) < num_sampled:
        for value in draw(generator, 2 * (num_sampled - len(candidates))).tolist():
            num_tries += 1
            if value not in seen:
                seen.add(value)
                candidates.append(value)
                if len(candidates) == num_sampled:
                    break
    return np.array(candidates, np.int64), num_tries


def _check_true_classes(true_classes, num_true: int, range_max: int) -> None:
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise InvalidArgumentError(
            None,
            None,
            f"true_classes must be [batch_size, {num_true}], got shape {true_classes.shape}",
        )
    if true_classes.size and (true_classes.min() < 0 or true_classes.max() >= range_max):
        raise InvalidArgumentError(None, None, f"true_classes must be in [0, {range_max})")


def _sampler_kernel(attrs, probabilities: np.ndarray, draw):
    """The kernel of a sampler over ``probabilities`` (of each class) whose ``draw(generator,
    n)`` gives ``n`` classes."""
    num_true, num_sampled, unique = attrs["num_true"], attrs["num_sampled"], attrs["unique"]
    stream = (attrs["stream"], attrs["seed"], attrs["seed2"])

    def sample(context, true_classes):
        _check_true_classes(true_classes, num_true, len(probabilities))
        generator = context.random_generator(*stream)
        sampled, num_tries = _draw_candidates(generator, draw, num_sampled, unique)
        return (
            sampled,
            _expected_count(probabilities[true_classes], num_sampled, num_tries),
            _expected_count(probabilities[sampled], num_sampled, num_tries),
        )

    return sample


def _uniform_kernel(attrs):
    range_max = attrs["range_max"]
    probabilities = np.full(range_max, 1.0 / range_max)
    return _sampler_kernel(attrs, probabilities, lambda g, n: g.integers(0, range_max, n))


def _log_uniform_kernel(attrs):
    range_max = attrs["range_max"]
    classes = np.arange(range_max, dtype=np.float64)
    log_range = np.log(range_max + 1.0)
    probabilities = (np.log(classes + 2.0) - np.log(classes + 1.0)) / log_range

    def draw(generator, n):
        # Inverse of the CDF log(c + 1) / log(range_max + 1).
        values = np.floor(np.exp(generator.random(n) * log_range)).astype(np.int64) - 1
        return np.clip(values, 0, range_max - 1)

    return _sampler_kernel(attrs, probabilities, draw)


def _fixed_unigram_kernel(attrs):
    weights = np.asarray(attrs["unigrams"], np.float64) ** attrs["distortion"]
    weights = np.concatenate([np.zeros(attrs["num_reserved_ids"]), weights])
    probabilities = weights / weights.sum()
    cumulative = np.cumsum(probabilities)

    def draw(generator, n):
        values = np.searchsorted(cumulative, generator.random(n) * cumulative[-1], side="right")
        return np.minimum(values, len(cumulative) - 1)

    return _sampler_kernel(attrs, probabilities, draw)


class _UnigramCounts:
    """The class counts a learned unigram sampler has seen in one Session: 1 for each class to
    begin with, and 1 more for each true class of every run."""

    def __init__(self, range_max: int):
        self.counts = np.ones(range_max, np.float64)

    def cancel(self) -> None:
        pass


def _learned_unigram_kernel(attrs):
    num_true, num_sampled, unique = attrs["num_true"], attrs["num_sampled"], attrs["unique"]
    range_max = attrs["range_max"]
    stream = (attrs["stream"], attrs["seed"], attrs["seed2"])

    def sample(context, true_classes):
        _check_true_classes(true_classes, num_true, range_max)
        state = context.resource(
            f"LearnedUnigramCandidateSampler:{attrs['stream']}", lambda: _UnigramCounts(range_max)
        )
        probabilities = state.counts / state.counts.sum()
        cumulative = np.cumsum(probabilities)

        def draw(generator, n):
            values = np.searchsorted(cumulative, generator.random(n) * cumulative[-1], "right")
            return np.minimum(values, range_max - 1)

        generator = context.random_generator(*stream)
        sampled, num_tries = _draw_candidates(generator, draw, num_sampled, unique)
        result = (
            sampled,
            _expected_count(probabilities[true_classes], num_sampled, num_tries),
            _expected_count(probabilities[sampled], num_sampled, num_tries),
        )
        np.add.at(state.counts, true_classes.reshape(-1), 1.0)  # learned after sampling
        return result

    return sample


def _all_kernel(attrs):
    num_true, num_sampled = attrs["num_true"], attrs["num_sampled"]

    def sample(context, true_classes):
        _check_true_classes(true_classes, num_true, np.iinfo(np.int64).max)
        return (
            np.arange(num_sampled, dtype=np.int64),
            np.ones(true_classes.shape, np.float32),
            np.ones(num_sampled, np.float32),
        )

    return sample


for _type, _kernel in (
    ("UniformCandidateSampler", _uniform_kernel),
    ("LogUniformCandidateSampler", _log_uniform_kernel),
    ("FixedUnigramCandidateSampler", _fixed_unigram_kernel),
    ("LearnedUnigramCandidateSampler", _learned_unigram_kernel),
    ("AllCandidateSampler", _all_kernel),
):
    define_op(
        _type,
        _infer_sampler,
        _kernel,
        stateful=True,
        wants_context=True,
        extra={"random_stream": True},
    )


def _sample(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name, **extra):
    # Python lists become int64, the op's type, as TensorFlow converts them; tensors must be.
    dtype = None if isinstance(true_classes, Tensor) else _dtypes.int64
    true_classes = convert_to_tensor(true_classes, dtype=dtype, name="true_classes")
    attrs = {
        "num_true": int(num_true),
        "num_sampled": int(num_sampled),
        "unique": bool(unique),
        "range_max": int(range_max),
        **extra,
        **op_seed_attrs(seed, true_classes.graph),
    }
    op = apply_op(op_type, (true_classes,), attrs, name or op_type)
    return CandidateSamples(*op.outputs)


def uniform_candidate_sampler(
    true_classes,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> CandidateSamples:
    """Draws ``num_sampled`` classes uniformly from ``[0, range_max)`` (module docstring)."""
    return _sample(
        "UniformCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
    )


def log_uniform_candidate_sampler(
    true_classes,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> CandidateSamples:
    """Draws ``num_sampled`` classes from the log-uniform (Zipfian) distribution over
    ``[0, range_max)``, for classes numbered by decreasing frequency (module docstring)."""
    return _sample(
        "LogUniformCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
    )


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams=(),
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> CandidateSamples:
    """Draws ``num_sampled`` classes with probabilities proportional to ``unigrams[c] **
    distortion``; the first ``num_reserved_ids`` classes are never drawn.  The table must be
    given as ``unigrams`` (``vocab_file`` and ``num_shards`` are not supported)."""
    if vocab_file or num_shards != 1 or shard != 0:
        raise NotImplementedError(
            f"fixed_unigram_candidate_sampler at {_user_location()}: only a unigrams table, "
            "not a vocab_file or shards, is supported"
        )
    unigrams = [float(u) for u in unigrams]
    if not unigrams or min(unigrams) < 0 or not sum(unigrams) > 0:
        raise ValueError(
            f"fixed_unigram_candidate_sampler at {_user_location()}: unigrams must be a "
            f"non-empty list of non-negative counts with a positive sum, got {unigrams[:10]}"
        )
    drawable = sum(u > 0 for u in unigrams)
    if unique and drawable < num_sampled:
        raise ValueError(
            f"fixed_unigram_candidate_sampler at {_user_location()}: cannot sample "
            f"{num_sampled} unique classes when only {drawable} have a positive count"
        )
    return _sample(
        "FixedUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        range_max,
        seed,
        name,
        unigrams=unigrams,
        distortion=float(distortion),
        num_reserved_ids=int(num_reserved_ids),
    )


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "UniformCandidateSampler",
    "LogUniformCandidateSampler",
    "FixedUnigramCandidateSampler",
    "LearnedUnigramCandidateSampler",
    "AllCandidateSampler",
):
    NotDifferentiable(_type)


def learned_unigram_candidate_sampler(
    true_classes,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> CandidateSamples:
    """Draws ``num_sampled`` classes from ``[0, range_max)`` with probabilities proportional
    to how often each was a true class so far in the Session (each class counted once to
    begin with); a run samples first and then counts its ``true_classes``, as TensorFlow's."""
    return _sample(
        "LearnedUnigramCandidateSampler", true_classes, num_true, num_sampled, unique,
        range_max, seed, name,
    )  # fmt: skip


def all_candidate_sampler(
    true_classes,
    num_true: int,
    num_sampled: int,
    unique: bool,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> CandidateSamples:
    """Every class of ``[0, num_sampled)``, in order, each expected once (for testing a
    sampled loss against the full one); ``unique`` and ``seed`` change nothing, as in
    TensorFlow."""
    return _sample(
        "AllCandidateSampler", true_classes, num_true, num_sampled, unique, num_sampled, seed,
        name,
    )  # fmt: skip
