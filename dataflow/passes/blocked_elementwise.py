"""A large fused elementwise chain runs in cache-sized blocks, on several threads.

The one-thread ``FusedElementwise`` kernel (`dataflow.passes.elementwise_fusion`) runs each
step of its chain over the whole array: twenty steps on 100 MB stream 100 MB from memory and
back twenty times.  `BlockedChain` splits the output into blocks of `BLOCK_BYTES` (a quarter
of a core's 2 MiB L2 cache here, chosen by measurement) and runs every step of the chain on one
block before the next, into a scratch buffer of the block's size that stays in the cache: the
inputs are read once and the output written once.  The blocks are shared out among a few
threads, numpy releasing the GIL inside its ufunc loops; each thread takes the next block not
yet taken, so a thread the machine slows down takes fewer.

Why numpy itself, and not numexpr or numba (the `fast` extra): a block runs the same
ufuncs, with the same operand layouts, on the same elements as the one-thread kernel, so its
values are those bits by construction, for every op and dtype.  numexpr computes ``tanh``,
``exp`` and ``log`` with its own functions, which differ from numpy's in the last bit on about
a quarter, a twentieth and a thousandth of random inputs, and on the 20-op benchmark chain it
ran about ten times slower than blocked numpy on this machine; numba's parallel loops call
LLVM's or the C library's transcendental functions, with the same problem.  Neither is used.

Invariants the blocked run keeps, so that it gives what the one-thread kernel gives:

- **Values and dtypes.**  A step whose whole-array value has the output's shape writes into the
  block's scratch with ``out=``; a step whose value is smaller (a broadcast operand not yet met)
  is computed at its own shape, as the one-thread kernel does.  The chain is run only when
  every input is a numpy value of the chain's dtype and every step keeps that dtype (checked
  once, on a one-element sample); block starts keep the arrays' alignment.
- **Broadcasting.**  Blocks split the output along its leading axes; an operand is sliced along
  an axis only where it has more than one element, so a scalar, a row or a column is seen
  whole by each block.
- **In-place reuse.**  The output is the ``inplace_input`` array when the one-thread kernel would
  write into it, else a new array.  A block is written to the output only after its last
  step, so its inputs are intact while it runs.
- **Floating-point warnings and errors.**  A "quiet" chain runs with numpy's errors ignored, as
  today.  Otherwise each thread records which steps raised which floating-point flags, instead
  of warning (numpy's error state belongs to each thread).  A block that raised a flag not
  seen before keeps a copy of its operands; at the end, the one-thread kernel is run on those
  copies, in the caller's error state: since each element raises the same flags wherever it is
  computed, it warns or raises for exactly the steps and flags the whole array would, in order,
  from the same line.  An error then names the step and the shapes and dtypes of the operands
  it had over the whole array (their values are gone: later blocks overwrote them).
- **Errors of other kinds** cannot depend on the data once the sample ran: a chain whose ufunc
  can raise on some values (integer ``power``) keeps the one-thread kernel.

Thread budget.  A kernel made for a Session uses at most its ``intra_op_parallelism_threads``
(default: one per core), counting the thread that calls it.  Helper threads come from one pool
per process (`dataflow.framework.intra_op`), which also counts the cores that blocked kernels
occupy: a kernel takes helpers only while cores are free, so two large chains running at once
on two inter-op threads of a 2-core machine each keep to their own thread instead of starting
two each.
Chains with fewer than `MIN_PARALLEL_ELEMENTS` output elements, where starting helpers costs
more than it saves, run as today on one thread.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from ..framework.intra_op import IntraOpPool, shared_pool

# Bytes of one block (one scratch buffer per thread): blocks of 256 KiB to 1 MiB ran the
# benchmark chain fastest on this machine's 1 MiB-per-core L2; smaller ones pay Python's
# per-step overhead, larger ones spill out of the cache.
BLOCK_BYTES = 512 * 1024

# Output elements below which a chain runs on one thread.  Measured with 4-step chains (add and
# multiply; and with tanh) on this 2-core machine while shared: at 128K-256K elements a second
# thread made them 2-5x slower (a helper the OS runs late holds up the last block), at 512K
# the tanh chain gained; so from 1M elements (8 MB of float64) on.
MIN_PARALLEL_ELEMENTS = 1 << 20

# Ufuncs that raise a Python exception on some values of an integer dtype (a negative
# exponent), which a blocked run could meet in a different block than the whole-array call.
_RAISING_ON_INTEGERS = (np.power,)


# Scratch buffers of BLOCK_BYTES, kept between runs (at most one per thread that ran blocks at
# once): a run allocates none once the process has made them.
_free_scratch: list[np.ndarray] = []


def _take_scratch() -> np.ndarray:
    try:
        raw = _free_scratch.pop()
    except IndexError:
        return np.empty(BLOCK_BYTES, np.uint8)
    return raw if raw.size == BLOCK_BYTES else np.empty(BLOCK_BYTES, np.uint8)


def _give_back_scratch(raw: np.ndarray) -> None:
    _free_scratch.append(raw)


class _Geometry:
    """How the output splits into blocks: ``axis`` is the first axis whose trailing block
    (the axes after it) fits in a block; a block is one index of each axis before it and
    ``chunk`` indices of ``axis``."""

    def __init__(self, shape: tuple, itemsize: int):
        self.shape = shape
        block_elements = max(1, BLOCK_BYTES // itemsize)
        axis = 0
        while math.prod(shape[axis + 1 :]) > block_elements:
            axis += 1
        inner = math.prod(shape[axis + 1 :])
        chunk = max(1, block_elements // inner)
        if inner == 1 and chunk < shape[axis]:
            chunk -= chunk % 64  # block starts keep the array's alignment to 64 elements
        self.axis, self.chunk, self.inner = axis, chunk, inner
        self.outer_shape = shape[:axis]
        self.chunks_per_row = -(-shape[axis] // chunk)
        self.count = math.prod(self.outer_shape) * self.chunks_per_row

    def block(self, number: int) -> tuple[tuple, int, int]:
        """(indices of the axes before ``axis``, first and end index along ``axis``)."""
        row, part = divmod(number, self.chunks_per_row)
        outer = tuple(int(i) for i in np.unravel_index(row, self.outer_shape)) if self.axis else ()
        start = part * self.chunk
        return outer, start, min(self.shape[self.axis], start + self.chunk)

    def key(self, operand_shape: tuple, outer: tuple, start: int, end: int) -> tuple:
        """The index that takes the part of an operand of ``operand_shape`` (broadcast to the
        output) that a block needs; a length-1 axis is kept whole, so it still broadcasts."""
        lead = len(self.shape) - len(operand_shape)
        key = []
        for k, extent in enumerate(operand_shape):
            axis = lead + k
            if axis < self.axis:
                key.append(outer[axis] if extent != 1 else 0)
            elif axis == self.axis:
                key.append(slice(start, end) if extent != 1 else slice(None))
            else:
                break
        return tuple(key)


class BlockedChain:
    """Runs one fused chain in blocks on several threads (see the module docstring).

    ``steps`` are ``(ufunc, operand positions)`` as the one-thread kernel has them, ``records``
    their step records (for errors), ``replay`` the one-thread kernel without its error-state
    wrapper (it warns and raises as the whole array would, see the module docstring).
    """

    def __init__(
        self,
        steps: Sequence[tuple],
        records: Sequence[list],
        quiet: bool,
        inplace_input: int,
        dtype: np.dtype,
        threads: int,
        replay: Callable,
        pool: Optional[Callable[[], IntraOpPool]] = None,
    ):
        self.steps = list(steps)
        self.records = list(records)
        self.quiet = quiet
        self.inplace_input = inplace_input
        self.dtype = np.dtype(dtype)
        self.threads = threads
        self.replay = replay
        self.pool = pool or shared_pool
        self.usable = threads > 1 and self._keeps_dtype_and_cannot_raise()

    def _keeps_dtype_and_cannot_raise(self) -> bool:
        """Whether every step returns the chain's dtype, and none can raise on some values."""
        if self.dtype.kind not in "biuf":
            return False
        if self.dtype.kind in "iu" and any(u in _RAISING_ON_INTEGERS for u, _ in self.steps):
            return False
        sample = np.zeros(1, self.dtype)
        value = None
        try:
            with np.errstate(all="ignore"):
                for ufunc, operands in self.steps:
                    value = ufunc(*(value if k < 0 else sample for k in operands))
                    if not isinstance(value, np.ndarray) or value.dtype != self.dtype:
                        return False
        except Exception:
            return False
        return True

    def run(self, inputs: Sequence) -> Optional[np.ndarray]:
        """The chain's value on ``inputs``, or None when they are for the one-thread kernel
        (small, not numpy values of the chain's dtype, or shapes that do not broadcast)."""
        dtype = self.dtype
        for x in inputs:
            if not isinstance(x, (np.ndarray, np.generic)) or x.dtype != dtype:
                return None
        shapes = [np.shape(x) for x in inputs]
        try:
            # every input is read by some step: the value is at most their broadcast's size
            if math.prod(np.broadcast_shapes(*shapes)) < MIN_PARALLEL_ELEMENTS:
                return None  # checked first: a small chain pays one call, not one per step
            step_shapes = self._step_shapes(shapes)
        except ValueError:
            return None
        out_shape = step_shapes[-1]
        if math.prod(out_shape) < MIN_PARALLEL_ELEMENTS:
            return None
        geometry = _Geometry(out_shape, dtype.itemsize)
        if geometry.count < 2:
            return None
        out = None
        if self.inplace_input >= 0:
            x = inputs[self.inplace_input]
            if type(x) is np.ndarray and x.flags.writeable and x.shape == out_shape:
                out = x
        if out is None:
            out = np.empty(out_shape, dtype)
        full = [shape == out_shape for shape in step_shapes]
        return _Run(self, inputs, shapes, full, geometry, out).go(step_shapes)

    def _step_shapes(self, shapes: list) -> list[tuple]:
        """The shape of each step's value over the whole arrays."""
        result, shape = [], None
        for _, operands in self.steps:
            shape = np.broadcast_shapes(*(shape if k < 0 else shapes[k] for k in operands))
            result.append(shape)
        return result


class _Run:
    """One blocked run: the blocks still to take, the flags seen, the samples kept."""

    def __init__(self, chain: BlockedChain, inputs, shapes, full, geometry: _Geometry, out):
        self.chain = chain
        self.inputs = inputs
        self.shapes = shapes
        self.full = full
        self.geometry = geometry
        self.out = out
        self.lock = threading.Lock()
        self.blocks_done = threading.Condition(self.lock)
        self.next_block = 0  # the blocks before it are taken
        self.in_flight = 0  # taken and not finished
        self.stopped = False  # a block failed: take no more
        self.errors: list[BaseException] = []
        self.flags_seen: set[tuple[int, int]] = set()
        self.samples: list[list[np.ndarray]] = []

    def go(self, step_shapes: list) -> np.ndarray:
        """Runs every block (on this thread and the helpers granted) and returns the output.
        This thread waits for the blocks taken, never for a helper that has not started: a
        helper that starts late finds no block left and ends."""
        chain = self.chain
        pool = chain.pool()
        granted = pool.enter(min(chain.threads, self.geometry.count) - 1)
        try:
            for _ in range(granted):
                pool.submit(self.work)
            self.work()
            with self.lock:
                while self.in_flight:
                    self.blocks_done.wait()
        finally:
            pool.leave(granted)
        if self.errors:
            raise self.errors[0]
        if self.samples:
            self._replay(step_shapes)
        return self.out

    def work(self) -> None:
        """Takes blocks until none is left, under the error state the chain runs in."""
        chain = self.chain
        raw = _take_scratch()
        try:
            scratch = raw[: BLOCK_BYTES - BLOCK_BYTES % chain.dtype.itemsize].view(chain.dtype)
            self._work_in(scratch)
        finally:
            _give_back_scratch(raw)

    def _work_in(self, scratch: np.ndarray) -> None:
        chain = self.chain
        if chain.quiet:
            with np.errstate(all="ignore"):
                self._take_blocks(scratch, None)
            return
        seen: set[tuple[int, int]] = set()
        position = [0]

        def record(_kind: str, flags: int) -> None:
            seen.add((position[0], flags))

        with np.errstate(all="call", call=record):
            self._take_blocks(scratch, (seen, position))

    def _take_blocks(self, scratch: np.ndarray, recording) -> None:
        """Takes the next block not taken and runs it, until none is left or one failed."""
        geometry = self.geometry
        while True:
            with self.lock:
                if self.stopped or self.next_block >= geometry.count:
                    return
                number = self.next_block
                self.next_block += 1
                self.in_flight += 1
            try:
                self._run_block(number, scratch, recording)
            except BaseException as error:
                with self.lock:
                    self.stopped = True
                    self.errors.append(error)
                return
            finally:
                with self.lock:
                    self.in_flight -= 1
                    if not self.in_flight:
                        self.blocks_done.notify_all()

    def _run_block(self, number: int, scratch: np.ndarray, recording) -> None:
        geometry, steps, full, inputs = self.geometry, self.chain.steps, self.full, self.inputs
        position = recording[1] if recording is not None else [0]
        outer, start, end = geometry.block(number)
        out_key = geometry.key(geometry.shape, outer, start, end)
        operands = [
            x[key] if (key := geometry.key(s, outer, start, end)) else x
            for x, s in zip(inputs, self.shapes)
        ]
        target = self.out[out_key]
        buffer = scratch[: target.size].reshape(target.shape)
        value = None
        try:
            for step, (ufunc, positions) in enumerate(steps):
                position[0] = step
                args = [value if k < 0 else operands[k] for k in positions]
                value = ufunc(*args, out=buffer) if full[step] else ufunc(*args)
        except BaseException as error:
            self._mark(error, position[0])
            raise
        if recording is not None and recording[0]:
            self._keep_sample(recording[0], operands, target.shape)
            recording[0].clear()
        np.copyto(target, value)

    def _keep_sample(self, seen: set, operands: list, block_shape: tuple) -> None:
        """Keeps a copy of a block's operands if it raised a flag at a step no block did."""
        with self.lock:
            if seen <= self.flags_seen:
                return
            self.flags_seen |= seen
        sample = [np.broadcast_to(x, block_shape).flatten() for x in operands]
        with self.lock:
            self.samples.append(sample)

    def _replay(self, step_shapes: list) -> None:
        """Runs the one-thread kernel on the kept samples, in the caller's error state, for
        the warnings and errors the whole arrays would have given."""
        samples = list(zip(*self.samples))
        try:
            self.chain.replay(*(np.concatenate(parts) for parts in samples))
        except BaseException as error:
            step = getattr(error, "fused_step", None)
            if step is not None:
                position = next(i for i, r in enumerate(self.chain.records) if r is step[0])
                self._mark(error, position, step_shapes)
            raise

    def _mark(self, error: BaseException, step: int, step_shapes: Optional[list] = None) -> None:
        """Marks ``error`` with the failed step and stand-ins of the operands it had over the
        whole arrays (their dtype and shape; the values are not kept)."""
        if step_shapes is None:
            step_shapes = self.chain._step_shapes(self.shapes)
        args = tuple(
            np.broadcast_to(np.zeros((), self.chain.dtype), step_shapes[step - 1])
            if k < 0
            else self.inputs[k]
            for k in self.chain.steps[step][1]
        )
        try:
            error.fused_step = (self.chain.records[step], args)
        except Exception:  # an exception that takes no attributes: it says what it can
            pass
