"""``df.random.experimental`` and ``df.random.Generator``: random streams held in a variable.

A `Generator` keeps Philox's state (a 128-bit counter and a 64-bit key, three int64 words) in a
non-trainable variable.  Each draw reads the state, draws from it as the stateless ops do
(`dataflow.ops.stateless_random_ops`), and moves the counter past what it used, in one op; so
draws are TensorFlow's bit for bit for the same state, and a checkpoint of the variable resumes
the stream.  In a graph the variable is initialised like any other (``df.global_variables_
initializer()``).
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.determinism import is_op_determinism_enabled
from ..framework.graph import Tensor, _user_location, get_default_graph
from ..framework.op_registry import apply_op
from ..framework.tensor_conversion import convert_to_tensor
from . import stateless_random_ops as _stateless
from .stateless_random_ops import (
    Algorithm,
    create_rng_state,
    index_shuffle,
    rng_state_words,
    stateless_shuffle,
)
from .stateless_random_ops import fold_in as stateless_fold_in
from .stateless_random_ops import split as stateless_split

__all__ = [
    "Algorithm",
    "Generator",
    "create_rng_state",
    "get_global_generator",
    "index_shuffle",
    "set_global_generator",
    "stateless_fold_in",
    "stateless_shuffle",
    "stateless_split",
]


def _algorithm(alg) -> int:
    if alg is None or alg in ("auto_select", "philox", 1, 3):
        return Algorithm.PHILOX.value
    if isinstance(alg, Algorithm) and alg is not Algorithm.THREEFRY:
        return Algorithm.PHILOX.value
    raise ValueError(
        f"random.Generator at {_user_location()}: the algorithm must be Philox (or "
        f"auto_select, which picks Philox on a CPU); got {alg!r}"
    )


class Generator:
    """A stream of random numbers whose state is a variable (``tf.random.Generator``)."""

    def __init__(self, copy_from=None, state=None, alg=None):
        from .variables import Variable

        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: give copy_from alone, or state and alg")
            state, alg = copy_from.state.read_value(), copy_from.algorithm
        elif state is None:
            raise ValueError("Generator: give copy_from, or state and alg")
        self._alg = _algorithm(alg)
        if not isinstance(state, Tensor):
            state = np.asarray(state, np.int64).reshape(-1)
            if state.shape != (3,):
                raise ValueError(
                    f"Generator: a Philox state has 3 int64 words, got shape {list(state.shape)}"
                )
        self._state_var = Variable(
            state, trainable=False, dtype=_dtypes.int64, name="StateVar", use_resource=True
        )

    # -- making one ------------------------------------------------------------------------------
    @classmethod
    def from_state(cls, state, alg) -> Generator:
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        """A generator whose state is ``create_rng_state(seed, alg)``."""
        alg = _algorithm(alg)
        return cls(state=rng_state_words(seed, alg), alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> Generator:
        """A generator with Philox ``key`` (an int) and ``counter`` (two ints)."""
        return cls(state=_key_counter_state(key, counter), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        """A generator seeded from the operating system's entropy (a ``RuntimeError`` with op
        determinism on, as in TensorFlow)."""
        if is_op_determinism_enabled():
            raise RuntimeError(
                '"from_non_deterministic_state" cannot be called when determinism is enabled.'
            )
        seed = int.from_bytes(os.urandom(16), "little")
        return cls.from_seed(seed, alg)

    # -- its state -----------------------------------------------------------------------------
    @property
    def state(self):
        """The variable that holds the state."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key, the state's last word."""
        return self._state_var.read_value()[-1]

    def reset(self, state):
        """Sets the state (an op, in a graph)."""
        return self._state_var.assign(convert_to_tensor(state, dtype=_dtypes.int64))

    def reset_from_seed(self, seed):
        return self.reset(rng_state_words(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        return self.reset(_key_counter_state(key, counter))

    def skip(self, delta):
        """Moves the stream past ``delta`` draws; gives the state before."""
        return apply_op(
            "RngReadAndSkip",
            (self._state_var.handle, self._alg_tensor(), _as_int64(delta)),
            {},
            "RngReadAndSkip",
        ).outputs[0]

    def _alg_tensor(self) -> Tensor:
        return convert_to_tensor(self._alg, dtype=_dtypes.int64, name="algorithm")

    # -- drawing -------------------------------------------------------------------------------
    def _draw(self, op_type, shape, dtype, name, extra=()):
        from .random_ops import _shape_input

        graph = self._state_var.graph
        with graph.as_default(), graph.name_scope(name or "stateful_" + op_type.lower()):
            shape = _shape_input(shape, op_type)
            inputs = (self._state_var.handle, self._alg_tensor(), shape, *extra)
            attrs = {} if dtype is None else {"dtype": dtype}
            return apply_op(op_type, inputs, attrs, op_type).outputs[0]

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        """Uniform draws in ``[minval, maxval)`` (floats default to ``[0, 1)``; integers need
        ``maxval``, or neither bound for the whole range)."""
        from .math_ops import add, multiply, subtract

        dtype = _dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if maxval is None:
                if minval not in (None, 0):
                    raise ValueError("Generator.uniform: an integer draw needs maxval")
                return self.uniform_full_int(shape, dtype, name)
            bounds = (
                convert_to_tensor(minval, dtype=dtype, name="min"),
                convert_to_tensor(maxval, dtype=dtype, name="max"),
            )
            return self._draw("StatefulUniformInt", shape, None, name, bounds)
        draws = self._draw("StatefulUniform", shape, dtype, name)
        if maxval is None and isinstance(minval, int) and minval == 0:
            return draws
        low = convert_to_tensor(minval, dtype=dtype, name="min")
        high = convert_to_tensor(1 if maxval is None else maxval, dtype=dtype, name="max")
        return add(multiply(draws, subtract(high, low)), low)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        """Integers over the whole range of ``dtype``."""
        return self._draw("StatefulUniformFullInt", shape, _dtypes.as_dtype(dtype), name)

    def _scaled(self, op_type, shape, mean, stddev, dtype, name):
        from .math_ops import add, multiply

        dtype = _dtypes.as_dtype(dtype)
        draws = self._draw(op_type, shape, dtype, name)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        return add(multiply(draws, stddev), mean)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        return self._scaled("StatefulStandardNormalV2", shape, mean, stddev, dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        return self._scaled("StatefulTruncatedNormal", shape, mean, stddev, dtype, name)

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        """Binomial draws, from a seed this generator draws (`stateless_binomial`)."""
        seed = self.make_seeds(1)[:, 0]
        return _stateless.stateless_binomial(shape, seed, counts, probs, dtype, name)

    def make_seeds(self, count=1) -> Tensor:
        """``[2, count]`` seeds for stateless ops: a drawn key over zeros per column."""
        from .array_ops import stack, zeros_like

        keys = self.uniform_full_int([count], _dtypes.int64)
        return stack([keys, zeros_like(keys)])

    def split(self, count=1) -> list:
        """``count`` new generators, each keyed by a draw of this one."""
        from .array_ops import stack, unstack

        keys = self.uniform_full_int([count], _dtypes.int64)
        zero = convert_to_tensor(0, dtype=_dtypes.int64)
        return [
            Generator(state=stack([zero, zero, key]), alg=self._alg)
            for key in unstack(keys, num=count)
        ]


def _key_counter_state(key, counter) -> np.ndarray:
    counter = [int(c) for c in np.asarray(counter).reshape(-1)]
    if len(counter) != 2:
        raise ValueError(f"a Philox counter has 2 words, got {len(counter)}")
    words = [c & 0xFFFFFFFFFFFFFFFF for c in counter] + [int(key) & 0xFFFFFFFFFFFFFFFF]
    return np.array(words, np.uint64).view(np.int64)


def _as_int64(value) -> Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name="delta")


_GLOBAL_GENERATORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_global_generator() -> Generator:
    """The default graph's generator, made from non-deterministic state on first use (with op
    determinism on, one must have been set first, as in TensorFlow)."""
    graph = get_default_graph()
    generator = _GLOBAL_GENERATORS.get(graph)
    if generator is None:
        if is_op_determinism_enabled():
            raise RuntimeError(
                '"get_global_generator" cannot be called if determinism is enabled, unless '
                '"set_global_generator" has already been called. Please call '
                '"set_global_generator" first.'
            )
        generator = _GLOBAL_GENERATORS[graph] = Generator.from_non_deterministic_state()
    return generator


def set_global_generator(generator: Generator) -> None:
    """Makes ``generator`` the one `get_global_generator` gives in its graph."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator takes a Generator, got {generator!r:.80}")
    _GLOBAL_GENERATORS[generator.state.graph] = generator
