"""The cost model that decides which kernels may leave the run's thread: measured kernel times,
kept per node of a `Plan` as an exponential average, as TensorFlow's executor keeps them
(``KernelStats::UpdateCostEstimate`` and ``IsExpensive`` in its ``executor.cc``).

Handing a kernel to the inter-op pool costs a thread wake-up, a lock or two and a hand-over of
Python's GIL: some 30-100 µs on an idle machine, and several milliseconds when other processes
keep the cores busy (a woken thread waits for a core, then for the GIL, up to
``sys.getswitchinterval()``).  So only a kernel that takes much longer than that is worth a
pool thread.  A node whose ``inline`` is None is *expensive* while its average time is at
least `EXPENSIVE_KERNEL_SECONDS`; until its first time is known, when its inputs hold more than
`UNMEASURED_LIMIT_BYTES` (the size is all there is to go by then).  ``inline=False`` declares a
node expensive whatever it measures, ``inline=True`` cheap (neither is measured).

Invariants:

- ``estimates[node index]`` is `UNMEASURED` or the average of the node's kernel times in
  seconds: the first time sets it, each later one moves it a ``1 / COST_DECAY`` of the way
  (TensorFlow's decay).  A time counts for at most `SAMPLE_CAP` times the average (or the
  threshold, when that is more): a call that took long because the process waited for a core
  (another process ran) or for the GIL (another thread of it ran) does not make a cheap kernel
  expensive, while a kernel whose inputs grew crosses the threshold within a few measurements.
- The pool table of each frame (``FrameInfo.tables[POOL_TABLE]``) follows the estimates: a node
  measured cheap has the plain fast entry of the inline table there (it runs in the hot loop,
  untimed, and never leaves the thread that made it ready); any other node of ``inline=None``
  has its POOLABLE entry, which sends it to `runner._Run._fire_op` to be timed and scheduled.
  The measuring table (``MEASURE_TABLE``) always has the POOLABLE entries: one run in
  `MEASURE_EVERY` uses it, so a node measured cheap is timed again from time to time.
- Runs of a plan on several threads update the estimates without a lock: a store of a list item
  is atomic under the GIL, and a lost update only leaves an average one sample behind.
"""

from __future__ import annotations

from .tables import INLINE_TABLE, MEASURE_TABLE, POOL_TABLE, NodeInfo

# A kernel whose average time is at least this is worth a pool thread (about ten hand-offs to
# the pool on an idle machine; see the module docstring).
EXPENSIVE_KERNEL_SECONDS = 0.5e-3
# Each new time moves the average this fraction of the way: 1 / COST_DECAY (TensorFlow's 10).
COST_DECAY = 10
# A time counts for at most this many times the average (or the threshold, if more).
SAMPLE_CAP = 8
# One run of a plan in this many times every kernel of ``inline=None`` again.
MEASURE_EVERY = 64
# The estimate of a node not measured yet.
UNMEASURED = -1.0
# Until it is measured, a node whose inputs hold more bytes than this counts as expensive.
UNMEASURED_LIMIT_BYTES = 64 * 1024


class KernelCosts:
    """The measured cost of each node's kernel in one `Plan` (see the module docstring)."""

    __slots__ = ("estimates", "runs")

    def __init__(self, node_count: int):
        self.estimates = [UNMEASURED] * node_count
        # Runs started, to pick the measuring ones (racy across threads, harmlessly so).
        self.runs = 0

    def next_run_measures(self) -> bool:
        """Counts a run; True when it should time every kernel of ``inline=None``."""
        runs = self.runs
        self.runs = runs + 1
        return runs % MEASURE_EVERY == 0

    def is_expensive(self, info: NodeInfo, inputs) -> bool:
        """Whether ``info``'s kernel, about to run on ``inputs``, may be worth a pool thread."""
        inline = info.inline
        if inline is None:
            estimate = self.estimates[info.index]
            if estimate < 0.0:
                return _total_nbytes(inputs) > UNMEASURED_LIMIT_BYTES
            return estimate >= EXPENSIVE_KERNEL_SECONDS
        return inline is False

    def needs_timing(self, info: NodeInfo) -> bool:
        """Whether a firing of ``info`` (a node of ``inline=None``) is timed outside a
        measuring run: while it is unmeasured or expensive (a cheap one runs untimed)."""
        estimate = self.estimates[info.index]
        return estimate < 0.0 or estimate >= EXPENSIVE_KERNEL_SECONDS

    def record(self, info: NodeInfo, seconds: float) -> None:
        """Adds one measured kernel time of ``info`` (a node of ``inline=None``) and moves the
        node's pool-table entry to the side of the threshold its average now lies on."""
        index = info.index
        previous = self.estimates[index]
        if previous < 0.0:
            estimate = seconds
        else:
            cap = SAMPLE_CAP * previous
            if cap < EXPENSIVE_KERNEL_SECONDS:
                cap = EXPENSIVE_KERNEL_SECONDS
            if seconds > cap:
                seconds = cap
            estimate = previous + (seconds - previous) / COST_DECAY
        self.estimates[index] = estimate
        # The entry is compared, not the side the previous average was on: two runs that
        # record at once may have written their entries in either order.
        tables = info.frame.tables
        wanted = tables[MEASURE_TABLE if estimate >= EXPENSIVE_KERNEL_SECONDS else INLINE_TABLE]
        pool_table = tables[POOL_TABLE]
        local = info.local
        if pool_table[local] is not wanted[local]:
            pool_table[local] = wanted[local]

    def estimate_of(self, info: NodeInfo) -> float:
        """The node's average kernel time in seconds, or `UNMEASURED`."""
        return self.estimates[info.index]


def _total_nbytes(values) -> int:
    total = 0
    for value in values:
        total += getattr(value, "nbytes", 0)
    return total
