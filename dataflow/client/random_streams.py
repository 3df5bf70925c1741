"""The random streams of a Session: where each random op's values come from.

A random op (its OpDef has ``extra["random_stream"]``) draws from a numpy ``Generator`` on a
``Philox`` bit generator.  Philox is counter-based, so a stream is fully described by a key and
a counter, and nothing but two integers per op has to be kept between runs:

- **key**: the op's ``(seed, seed2)`` attributes (`dataflow.framework.random_seed`) as
  Philox's two 64-bit key words.  Ops with ``(0, 0)`` (no seed anywhere) get a key made from
  their name and the Session's own entropy (drawn from the operating system when the Session
  is made): two such ops differ, and each Session draws other values.
- **run index**: how many runs of this Session have drawn from the op.  Run number ``k`` draws
  from the counter ``k * 2**128``, a block of its own that no other run reaches.

State across runs belongs to the Session (`RandomStreams`, keyed by op name and seeds), not to
the graph or a run plan.  So:

- each run draws fresh values; a run that fires the op several times (in a ``while_loop``) takes
  consecutive values of its block, in the order the op fires;
- a new Session with the same graph and seeds repeats the sequence, run for run, as TensorFlow
  1.x does; two ops with equal seeds draw equal values, as in TensorFlow;
- new fetches in the same Session (a rebuilt plan) continue an op's sequence, as TensorFlow's
  Session shares stateful kernels between the executors of one graph;
- a run that fails gives back the run indices it reserved, so the next run draws what the failed
  one would have: the n-th successful run that draws from an op gets the same values in every
  Session with the same seeds, whatever runs failed in between.  Runs made concurrently take
  indices in the order they first fire the op; an index given back after a later run took the
  next one is skipped.

The values are not TensorFlow's: its Philox kernels and distributions are not reproduced bit for
bit, only their distributions and the rules above.  Iterations that run in parallel
(``parallel_iterations > 1``) with expensive ops may fire one random op in a different order from
run to run, as in TensorFlow; ``parallel_iterations=1`` keeps the order.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

_RUN_BLOCK_SHIFT = 128  # run k starts at Philox counter k << 128 (the counter has 256 bits)
_KEY_MASK = (1 << 64) - 1


class RandomStreams:
    """A Session's random streams: per random op, its Philox key and the next run index."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entropy: int = np.random.SeedSequence().entropy
        # (op name, seed, seed2) -> [key, next run index]
        self._streams: dict[tuple, list] = {}

    def generator_for_run(self, run_draws: dict, name: str, seed: int, seed2: int):
        """The generator op ``name`` draws from in the run whose draws so far are
        ``run_draws`` (a dict the run owns); the first call in a run reserves a run index."""
        stream_id = (name, seed, seed2)
        drawn = run_draws.get(stream_id)
        if drawn is not None:
            return drawn[0]
        with self._lock:
            drawn = run_draws.get(stream_id)  # another of the run's threads was first
            if drawn is not None:
                return drawn[0]
            stream = self._streams.get(stream_id)
            if stream is None:
                stream = self._streams[stream_id] = [self._key(name, seed, seed2), 0]
            index = stream[1]
            stream[1] += 1
            generator = np.random.Generator(
                np.random.Philox(key=stream[0], counter=index << _RUN_BLOCK_SHIFT)
            )
            run_draws[stream_id] = (generator, index)
        return generator

    def give_back(self, run_draws: dict) -> None:
        """Returns the run indices a failed run reserved, where no later run took one since."""
        with self._lock:
            for stream_id, (_, index) in run_draws.items():
                stream = self._streams.get(stream_id)
                if stream is not None and stream[1] == index + 1:
                    stream[1] = index

    def _key(self, name: str, seed: int, seed2: int) -> np.ndarray:
        if seed == 0 and seed2 == 0:
            name_words = list(hashlib.blake2b(name.encode(), digest_size=16).digest())
            return np.random.SeedSequence([self._entropy, *name_words]).generate_state(2, np.uint64)
        return np.array([seed & _KEY_MASK, seed2 & _KEY_MASK], np.uint64)

    def snapshot(self) -> tuple:
        """A copy of the state, which `restore` puts into another Session to draw the same."""
        with self._lock:
            return self._entropy, {k: list(v) for k, v in self._streams.items()}

    def restore(self, state: tuple) -> None:
        with self._lock:
            self._entropy = state[0]
            self._streams = {k: list(v) for k, v in state[1].items()}
