"""The dataflow machine: one `_Run` executes a `Plan` once, by docs/control-flow-semantics.md.

Scheduler state (all of it belongs to one run; a `Plan` is shared and never written):

- **frame instance** (`FrameInstance`): one activation of a static frame, keyed by (parent
  frame instance, parent iteration, frame name).  The root instance exists from the start;
  a child instance is created when the first value (live or dead) reaches one of its Enters,
  and is stored in ``children`` of the parent `IterationState`.
- **iteration** (`IterationState`): one iteration of one frame instance.  It owns
  ``pending`` (per node: inputs and control inputs still to arrive; copied from the frame's
  template when the iteration is created), ``slots`` (input values waiting for their node),
  ``dead`` (nodes that received a dead input, so they will fire dead), ``ready`` (a LIFO stack
  of nodes whose inputs have all arrived) and ``running`` (kernels of this iteration executing
  with the lock released).
- **ready iterations** (``_Run.ready_iterations``): a stack (an insertion-ordered dict) of the
  iterations that have nodes on their ``ready`` stack.  ``IterationState.scheduled`` keeps an
  iteration from being pushed twice: it is True while the iteration is on the stack and,
  without a pool, also while it is being drained (the one thread sees the new work itself).
  With a pool it is cleared when a thread pops the iteration, so that work another thread adds
  to it while a kernel of it runs with the lock released is put back on the stack for any
  thread to take.  An entry whose ``ready`` has been emptied meanwhile is harmless: popping it
  finds nothing to do, and an iteration that completes is taken off the stack, so the stack
  never holds more than the iterations alive.
- **outstanding ops**: ``ready`` + ``running`` of each iteration, and ``_Run.in_flight``
  (kernels submitted to the pool or waiting for an asynchronous completion, counted until the
  thread that finishes them has propagated their outputs and fired what those made ready, so
  that it counts every thread that may still fire a node of the run).

The loop (`_Run._drain`): pop an iteration, pop its ready nodes one by one and fire them.  An
ordinary single-output op with ordinary consumers takes the *fast path* written out inline:
call the kernel with its slots, clear the slots, write the output into each consumer's slot,
decrement the consumer's pending count and push it when the count reaches zero.  Every other
node goes to its kind's method (`_HANDLERS`: ``_fire_op``, ``_fire_switch``, ...).

Instrumented runs.  A run given statistics (`RunStats`) or an observer (`RunObserver`) uses the
all-slow table, so that every node goes through its kind's method, and the instrumented
methods (`_INSTRUMENTED_HANDLERS`): ``_fire_op`` times the kernel and reports its outputs
itself (it may run on the pool); every other firing, and a dead OP firing, is timed and
reported around the method by ``_fire_instrumented``.  An ordinary run never reaches any of
this: its fast path and tables are those of an uninstrumented executor.

Invariants:

- A value is referenced by the slot of each consumer that has not fired yet, and by nothing
  else of the run (fetch sinks hold the fetched values).  A node clears its slots when it
  fires, so a value is released when its last consumer in its (instance, iteration) fires.
- An iteration is *complete* when its ``ready`` is empty, ``running`` is zero, its child
  instances are all complete (``children`` is empty) and the previous iteration is complete
  (iteration 0: every Enter of the instance has fired).  Iterations complete in order, the
  oldest first (`_Run._try_complete`); a complete iteration's state is dropped.
- At most ``parallel_iterations`` iterations of an instance exist at once: a live
  NextIteration value that would create iteration ``oldest + N`` waits in ``deferred`` until
  the oldest iteration completes.  A value waiting there belongs to the iteration it waits to
  enter, so it never holds an existing iteration open.  As in TensorFlow, a node that has
  received some but not all of its inputs does not hold its iteration open either: in a
  well-formed program its other inputs always arrive before the iteration's outstanding work
  drains; in a malformed one the iteration still completes and the run cannot stall on it.
- An instance is complete when all its Enters have fired and all its iterations are complete;
  then every Exit of it that never delivered a value delivers one dead value to the parent
  iteration, the instance leaves the parent's ``children`` and the parent is checked in turn.
- The run ends when no iteration is ready and nothing is in flight.

Threads.  Without a pool one thread (the caller, or the driver of a run with a deadline) does
everything and takes no lock.  With a pool, the state is guarded by ``_Run.lock``: the thread
that drives the run holds it while draining; a kernel sent to the pool runs without it; the
pool thread then takes the lock, propagates the outputs and drains whatever became ready, like
the driving thread does.  While pool work is in flight, every kernel run inline is run with the
lock released (the all-slow table is used so that this happens in one place); while nothing is
in flight no other thread can touch the run, and the draining thread keeps the lock across
inline kernels rather than paying for a release and an acquire per node.  A pool that refuses
a submission (shut down) gets none: the kernel runs inline; a submitted kernel that the pool
cancels stops the run with a `RunCancelledError`.  A kernel that itself waits for work on the
same pool can starve it, as in any thread pool.

Kernels that wait for another run.  A ``blocking`` kernel is sent to a waiter thread of its own
(`_waiters`).  An ``asynchronous`` one is called under the lock with a `_Completion` callback and
counted in flight: completed during the call, its outputs go on inline; completed later from
another thread, that thread passes the outputs on and, when the run's lock is free and it is not
already doing so for another run, fires what they made ready itself (`_async_completed`), so a
value handed from one run to another costs no thread switch.

Stopping.  A kernel error sets ``error`` and ``stopped``: no thread schedules anything after
that, late pool completions are dropped, and `Plan.run` waits for kernels still in flight
(until the deadline, if one was given) before raising `KernelError`.  Except in a loop whose
earlier iterations are still going on (``parallel_iterations > 1``): the error names the
lowest failing iteration, as when the iterations run one after the other (and as compiled
code does), so the run goes on with those earlier iterations only (`_kernel_failed`):
``error_bound`` holds the path of the failing iteration, `_drain` fires nothing in an
iteration that does not come before it (`_comes_before`), the failing iteration is held open
(one more ``running``) so that nothing after it completes, and an error in an earlier
iteration takes the place of the one found.  The run ends when those earlier iterations have
nothing left to do; the error it raises is then the same whatever the order of firings.
A run whose context carries a `Cancellation` (``context.cancellation``) stops in the same way
when it is cancelled (its Session closed), with a `RunCancelledError`.

Deadlines.  A run without a deadline is driven by the thread that calls `Plan.run` and never
looks at the clock.  A run with one is driven by a *driver thread* (of `_drivers`, kept between
runs while they come more often than an idle thread ends), while the calling thread waits for
the run to finish, at most until the deadline.  The driver looks at the clock after every firing
(not every `_BATCH_SIZE` of them) and at every new iteration, so a loop that spins forever stops
by itself.  A kernel that blocks (a ``py_func`` that sleeps or waits on an event) cannot be
interrupted by any thread; when the deadline passes, the calling thread sets ``stopped`` (no op
starts after that, on any thread), reads which firings are in progress from the stacks of the
run's threads (`_Run._firings_in_progress`, so that the hot loop records nothing), and raises
`DeadlineExceededError` naming them, without waiting for them.  The blocked kernel goes on in the
background, on the driver or pool thread it runs on, until it returns; its results are then
dropped and that thread is free again.  A driver thread never holds up interpreter exit.

Decisions where the contract is silent (TensorFlow 1.x's behaviour unless said otherwise):

- A Merge fires when all its control inputs have arrived and one expected data input arrived
  live (or all expected ones dead), as in TensorFlow; unlike TensorFlow, which ignores the
  liveness of a Merge's control inputs, a dead control input makes both outputs dead, because
  the contract says a dead control input makes any dependent dead.  A Merge that is still
  waiting for a control input when a second live data input arrives keeps the first; it fires
  once per iteration, and every data input that arrives after the first live one is dropped.
- A control edge out of a node carries the node's liveness: for a Switch, live when both its
  inputs were live (even though one of its outputs is dead); for a Merge, live when it fired
  live.
- An Exit delivers at most one live value per instance; a second one is dropped.
- A Switch's predicate is read with ``bool(pred)``; a predicate that has no truth value (an
  array of several elements) stops the run with a `KernelError` of the Switch node.
- Where a kernel runs (TensorFlow's inline rule, with measured costs: `costs`).  A node whose
  ``inline`` is True, or None and measured cheap, runs on the thread that made it ready, in the
  hot loop: a run whose ready nodes are all cheap never wakes a pool thread.  A node whose
  ``inline`` is None and that counts as expensive (measured so, or not measured yet and with
  large inputs) goes to the pool only when another expensive node is ready for this thread to
  run meanwhile (`_expensive_work_beside`); when only cheap work is ready beside it, it waits
  once under that work (`_defer`), which may ready a partner for it; otherwise it runs here.
  A node whose ``inline`` is False goes to the pool whenever any other work is ready.
  A kernel run here while pool work is in flight runs with the lock released, so it still
  overlaps with that work.
- Ready nodes are a LIFO stack per iteration, consumers pushed highest index first: without a
  pool the run is depth first and, among siblings, in program order.  This keeps few values
  alive and makes single-threaded runs deterministic.
"""

from __future__ import annotations

import contextvars
import gc
import sys
import threading
import time
from concurrent import futures
from typing import Any, Optional

from .errors import (
    DeadlineExceededError,
    FetchNotLiveError,
    KernelError,
)
from .frames import _MERGE_FIRED, ControlFlowFiring, FrameInstance, IterationState  # noqa: F401
from .observe import RunObserver
from .pool import AsynchronousFiring, _any_dead, _completing, _Completion, _outputs  # noqa: F401
from .program import NodeKind
from .stats import NodeRecord, RunStats, output_records
from .tables import (
    DEAD,
    FAST_BINARY,
    FAST_NARY,
    FAST_UNARY,
    FETCH_SINK,
    INLINE_TABLE,
    MEASURE_TABLE,
    NOT_PRODUCED,
    POOL_TABLE,
    SLOW_TABLE,
    NodeInfo,
)
from .threads import DaemonThreadPool

# How many ready nodes `_Run._expensive_work_beside` looks at, at most, for an expensive one.
_READY_SCAN_LIMIT = 64
# Firings between two looks at the clock.
_BATCH_SIZE = 256
_BATCH = range(_BATCH_SIZE)
# A run with a deadline looks at the clock after every firing, so that none starts after it.
_EVERY_FIRING = range(1)

_OP = NodeKind.OP
_monotonic = time.monotonic
_perf_counter = time.perf_counter


class _Run(ControlFlowFiring, AsynchronousFiring):
    """The state of one `Plan.run`; see the module docstring.

    Call tree::

        execute
          _drain                    the loop; fast path inline, else by kind (_HANDLERS):
              _fire_op / _fire_arg / _fire_switch / _fire_merge
              _fire_enter / _fire_exit / _fire_next_iteration
                _deliver / _deliver_control   values into a target iteration
                  _arrive_merge / _control_to_merge
                _new_instance / _new_iteration
            _try_complete           iteration and instance completion
              _complete_instance
          _run_on_pool              a kernel on a pool thread, then propagate and _drain
    """

    def __init__(
        self,
        plan,  # the `plan.Plan` this run executes (plan imports this module)
        args,
        context: Any,
        pool,
        deadline: Optional[float],
        stats: Optional[RunStats],
        observer: Optional[RunObserver] = None,
    ):
        self.plan = plan
        self.args = args
        self.context = context
        self.cancellation = getattr(context, "cancellation", None)
        self.pool = pool
        self.deadline = deadline
        self.stats = stats
        self.observer = observer
        # Node indices whose firings the observer wants (None: all of them).
        self.observed = None if observer is None or observer.nodes is None else set(observer.nodes)
        self.instrumented = stats is not None or observer is not None
        # The plan's cost model (`costs`), and whether this run times every kernel it may send
        # to the pool (one run in `costs.MEASURE_EVERY`), also those measured cheap.
        self.costs = plan.costs
        self.measuring = pool is not None and self.costs.next_run_measures()
        # (iteration, local) of the expensive nodes put under cheap work (`_defer`), made
        # when first needed.
        self.deferred: Optional[set] = None
        if self.instrumented:
            self.table_kind = SLOW_TABLE
            self.handlers = _INSTRUMENTED_HANDLERS
        else:
            if pool is None:
                self.table_kind = INLINE_TABLE
            else:
                self.table_kind = MEASURE_TABLE if self.measuring else POOL_TABLE
            self.handlers = _HANDLERS
        # Other threads touch the run's state (pool threads, threads blocked kernels wait on):
        # it is guarded by the lock.
        self.sharing = pool is not None or plan.has_blocking_nodes
        self.lock = threading.Lock()
        self.condition = threading.Condition(self.lock)
        self.in_flight = 0
        self.stopped = False
        self.deadline_passed = False
        self.error: Optional[BaseException] = None
        # The iterations from the root's down to the one whose kernel error is ``error``,
        # while earlier iterations of a loop go on (see "Stopping"); None otherwise.
        self.error_bound: Optional[list[IterationState]] = None
        # Where the deadline was noticed: (iteration, node info or None), and the kernels that
        # were running on the pool then (see `DeadlineExceededError`).
        self.deadline_where: Optional[tuple] = None
        # Kernels submitted to the pool and not yet finished: id(holder) -> (iteration, info).
        self.pool_kernels: dict[int, tuple] = {}
        # (holder, thread id) while `_submit` adds the done-callback of a pool task.
        self.submitting: Optional[tuple] = None
        # An insertion-ordered set used as a stack (``popitem`` takes the newest), so that a
        # completing iteration can be taken off it wherever it is.
        self.ready_iterations: dict[IterationState, None] = {}
        self.root_instance = FrameInstance(plan.root_frame, None)
        root = IterationState(self.root_instance, 0)
        self.root_instance.iterations[0] = root
        self.root_instance.newest = 0
        self.root_iteration = root
        root.ready.extend(plan.root_frame.sources)
        if root.ready:
            root.scheduled = True
            self.ready_iterations[root] = None

    # -- top level --------------------------------------------------------------------------------

    def execute(self) -> list[Any]:
        cancellation = self.cancellation
        key = None if cancellation is None else cancellation.register(self.cancel)
        try:
            if self.deadline is not None:
                return self._execute_until_deadline()
            return self._run_to_end()
        finally:
            if cancellation is not None:
                cancellation.deregister(key)

    def cancel(self) -> None:
        """Stops the run from another thread (its context's `Cancellation`): nothing fires
        after this, and the run raises `RunCancelledError` once the kernels running return.
        The lock may be held by a thread in a kernel: the flags are set without it, as at a
        deadline, and a thread waiting for pool work is woken if the lock is free."""
        if self.error is None and not self.deadline_passed:
            self.error = self.cancellation.error()
        self.stopped = True
        if self.sharing and self.lock.acquire(blocking=False):
            try:
                self.condition.notify_all()
            finally:
                self.lock.release()

    def _run_to_end(self) -> list[Any]:
        """Drives the run on this thread until it ends; returns the fetched values."""
        if not self.sharing:
            try:
                self._drain()
                while self.error_bound is not None and self.ready_iterations and not self.stopped:
                    self._drain()  # the earlier iterations of a loop that failed
            except BaseException:
                self.stopped = True
                raise
        else:
            self._execute_with_pool()
        error = self.error
        if error is not None:
            self.error = None
            _raise(error)
        if self.deadline_passed:
            raise self._deadline_error()
        return self._collect_fetches()

    def _execute_until_deadline(self) -> list[Any]:
        """Drives the run on a driver thread and waits for it at most until the deadline (see
        "Deadlines" in the module docstring).  The driver runs in a copy of the caller's
        context, so that context variables (numpy's error state among them) apply to the
        kernels as they would on the calling thread."""
        run = _drivers.submit(contextvars.copy_context().run, self._run_to_end)
        try:
            remaining = self.deadline - _monotonic()
            done, _ = futures.wait([run], min(max(0.0, remaining), threading.TIMEOUT_MAX))
        except BaseException:  # KeyboardInterrupt while waiting: stop the run as well
            self.stopped = True
            raise
        if not done:
            # The lock may be held by a thread blocked in a kernel: set the flags without it
            # (each is a single store; every thread reads them before firing anything).
            error = self.error
            self.deadline_passed = True
            self.stopped = True
            if error is not None:
                # A kernel failed before the deadline; the driver was waiting for the kernels
                # still running.  The failure is what the run reports, as without a deadline.
                _raise(error)
            raise self._deadline_error()
        return run.result()  # the fetched values, or the exception the run raised

    def _execute_with_pool(self) -> None:
        condition = self.condition
        with self.lock:
            try:
                self._drain()
                while not self.stopped:
                    if self.ready_iterations:
                        self._drain()
                        continue
                    if not self.in_flight:
                        break
                    if self.deadline is None:
                        condition.wait()
                        continue
                    remaining = self.deadline - _monotonic()
                    if remaining <= 0:
                        self._deadline_reached()
                        break
                    condition.wait(remaining)
                if self.error is not None:
                    # Let kernels already running finish before reporting the error.
                    while self.in_flight:
                        if self.deadline is None:
                            condition.wait()
                            continue
                        remaining = self.deadline - _monotonic()
                        if remaining <= 0:
                            break
                        condition.wait(remaining)
            except BaseException:
                self.stopped = True
                raise

    def _collect_fetches(self) -> list[Any]:
        plan = self.plan
        slots = self.root_iteration.slots
        values = []
        missing = []
        for position, slot in enumerate(plan.fetch_slots):
            value = NOT_PRODUCED if slot is None else slots[slot]
            if value is NOT_PRODUCED or value is DEAD:
                node_index = int(plan.program.fetches[position][0])
                missing.append(
                    (position, node_index, "dead" if value is DEAD else "never produced")
                )
            values.append(value)
        if missing:
            nodes = plan.node_infos
            details = "; ".join(
                f"fetch {position} (node {nodes[index].name!r}, output "
                f"{int(plan.program.fetches[position][1])}) is {state}"
                for position, index, state in missing
            )
            raise FetchNotLiveError(missing, f"fetched values are not live: {details}")
        return values

    # -- the loop ---------------------------------------------------------------------------------

    def _drain(self) -> None:
        """Fires ready nodes until none is left (or the run stops).

        Called with the lock held when the run has a pool.  The fast path below is the ordinary
        op; its locals are rebound per iteration and its output is dropped (``value = None``)
        as soon as it has been written to the consumers' slots.  The clock (and ``stopped``,
        set by another thread) is read after every `_BATCH_SIZE` firings, or after every
        firing in a run with a deadline.
        """
        ready_iterations = self.ready_iterations
        table_kind = self.table_kind
        deadline = self.deadline
        root_instance = self.root_instance
        handlers = self.handlers
        batch = _BATCH if deadline is None else _EVERY_FIRING
        sharing = self.sharing
        node = None
        while ready_iterations:
            if self.stopped:
                return
            # ``node`` is None until a node of the new iteration is popped, so that a stack
            # read by `_firings_in_progress` never pairs it with the wrong iteration.
            node = None
            iteration = ready_iterations.popitem()[0]
            if iteration.done:
                continue
            if self.error_bound is not None and not _comes_before(iteration, self.error_bound):
                continue  # a kernel failed in or before it (see "Stopping")
            if sharing:
                # Other threads may push work into this iteration while a kernel of it runs
                # with the lock released: let them put it back on the stack for any thread.
                iteration.scheduled = False
            ready = iteration.ready
            pending = iteration.pending
            slots = iteration.slots
            dead = iteration.dead
            infos = iteration.frame.nodes
            tables = iteration.frame.tables
            table = tables[SLOW_TABLE if self.in_flight else table_kind]
            while ready:
                for _ in batch:
                    if not ready:
                        break
                    node = ready.pop()
                    code, kernel, first, second, consumer, slot = table[node]
                    if code > FAST_NARY or (dead and node in dead):
                        # SLOW, or POOLABLE (timed, and maybe sent to the pool), or dead.
                        info = infos[node]
                        handlers[info.kind](self, iteration, info)
                        if self.stopped:
                            return
                        table = tables[SLOW_TABLE if self.in_flight else table_kind]
                        continue
                    if code == FAST_BINARY:
                        try:
                            value = kernel(slots[first], slots[second])
                        except Exception as exc:
                            self._kernel_failed(iteration, node, exc, (slots[first], slots[second]))
                            return
                        slots[first] = slots[second] = None
                    elif code == FAST_UNARY:
                        try:
                            value = kernel(slots[first])
                        except Exception as exc:
                            self._kernel_failed(iteration, node, exc, (slots[first],))
                            return
                        slots[first] = None
                    else:
                        try:
                            value = kernel(*slots[first:second])
                        except Exception as exc:
                            self._kernel_failed(iteration, node, exc, slots[first:second])
                            return
                        for position in range(first, second):
                            slots[position] = None
                    if slot >= 0:
                        slots[slot] = value
                        count = pending[consumer] - 1
                        pending[consumer] = count
                        if not count:
                            ready.append(consumer)
                    else:
                        targets = consumer
                        for consumer, slot in targets:
                            slots[slot] = value
                            count = pending[consumer] - 1
                            pending[consumer] = count
                            if not count:
                                ready.append(consumer)
                    value = None
                if self.stopped:  # cancelled, or failed on another thread
                    return
                if deadline is not None and _monotonic() > deadline:
                    self._deadline_reached(iteration, infos[node])
                    return
            if not sharing:
                iteration.scheduled = False  # with a pool it means "on the stack" only
            if (
                not iteration.running
                and iteration.instance is not root_instance
                and not iteration.done
            ):
                self._try_complete(iteration.instance)

    def _fire_instrumented(self, iteration: IterationState, info: NodeInfo) -> None:
        """Fires a node other than a live OP, timing it for the statistics and showing its
        outputs to the observer (instrumented runs only)."""
        observed = self.observer is not None and (
            self.observed is None or info.index in self.observed
        )
        kind = info.kind
        if observed:
            # What the node will pass on if it fires live (its inputs, still in their slots).
            inputs = iteration.slots[info.slot_base : info.slot_end]
            if kind == NodeKind.ARG:
                inputs = [self.args[info.arg_position]]
        start = _perf_counter()
        live = _HANDLERS[kind](self, iteration, info)
        if kind == NodeKind.OP:
            live = False  # a live OP reports itself from _fire_op; this firing was dead
        if (self.stopped or self.error is not None) and not live:
            return  # it failed (a Switch whose predicate has no truth value), not fired dead
        stats = self.stats
        if stats is not None and (live or stats.record_dead):
            self._record(iteration, info, start, _perf_counter(), live)
        if observed and live and not self.stopped:
            self.observer.node_fired(
                info.index,
                _live_outputs(info, inputs),
                iteration.instance.description,
                iteration.number,
            )

    def _fire_op_instrumented(self, iteration: IterationState, info: NodeInfo) -> None:
        if info.local in iteration.dead:
            self._fire_instrumented(iteration, info)
        else:
            self._fire_op(iteration, info)

    def _kernel_done(self, iteration: IterationState, info: NodeInfo, start, end, outputs):
        """Records a kernel that ran and shows its outputs to the observer (instrumented)."""
        if self.stats is not None:
            self._record(iteration, info, start, end, True, output_records(outputs))
        observer = self.observer
        if observer is not None and (self.observed is None or info.index in self.observed):
            observer.node_fired(
                info.index,
                tuple(enumerate(outputs)),
                iteration.instance.description,
                iteration.number,
            )

    def _record(
        self,
        iteration: IterationState,
        info: NodeInfo,
        start: float,
        end: float,
        live: bool,
        outputs: tuple = (),
    ) -> None:
        record = NodeRecord(
            info.index,
            info.name,
            start,
            end,
            threading.current_thread().name,
            iteration.instance.description,
            iteration.number,
            outputs,
        )
        if live:
            self.stats.node_records.append(record)
        else:
            self.stats.dead_records.append(record)

    # -- stopping ---------------------------------------------------------------------------------

    def _kernel_failed(self, iteration, local_or_info, cause: BaseException, inputs) -> None:
        info = (
            local_or_info
            if isinstance(local_or_info, NodeInfo)
            else iteration.frame.nodes[local_or_info]
        )
        if info.wants_frame and inputs is not None:
            inputs = inputs[1:]  # the (frame instance, iteration) the kernel was given
        error = KernelError(
            info.index,
            info.node,
            cause,
            tuple(inputs),
            iteration.instance.description,
            iteration.number,
        )
        if self.error is not None:
            if self.stopped or not _comes_before(iteration, self.error_bound):
                return  # the error found first, or in an earlier iteration, is the run's
        elif self.stopped or not _earlier_iterations_go_on(iteration):
            self._fail(error)
            return
        # Earlier iterations of a loop this one lies in may still fail: they go on, and the
        # run reports the lowest failing iteration (see "Stopping").
        self.error = error
        self.error_bound = _path_of(iteration)
        iteration.running += 1
        iteration.ready.clear()

    def _fail(self, error: BaseException) -> None:
        if self.error is None and not self.deadline_passed:
            self.error = error
        self.stopped = True

    def _deadline_reached(
        self, iteration: Optional[IterationState] = None, info: Optional[NodeInfo] = None
    ) -> None:
        if not self.deadline_passed:
            self.deadline_where = (iteration, info)
        self.deadline_passed = True
        self.stopped = True
        if self.sharing:
            self.condition.notify_all()

    def _deadline_error(self) -> DeadlineExceededError:
        iteration, info = self.deadline_where or (None, None)
        running = self._firings_in_progress()
        where = ""
        if info is not None:
            where = f"; it was noticed after node {info.name!r} fired"
        if iteration is not None:
            where += (
                f"{'' if info is not None else '; it was noticed'} in iteration "
                f"{iteration.number} of frame instance {iteration.instance.description}"
            )
        if running:
            names = ", ".join(repr(self.plan.node_infos[index].name) for index, _, _ in running)
            where += f"; still running: {names}"
        return DeadlineExceededError(
            f"the run did not finish before its deadline; nothing further was scheduled{where}",
            None if info is None else info.index,
            None if iteration is None else iteration.instance.description,
            None if iteration is None else iteration.number,
            running,
        )

    def _firings_in_progress(self) -> list[tuple[int, str, int]]:
        """``(node index, frame instance, iteration)`` of each kernel submitted to the pool and
        not finished, and of the node each other thread of this run is firing now.

        Called once the run has stopped at its deadline, possibly while another thread holds
        the lock in a kernel that never returns, so it takes no lock: it copies
        ``pool_kernels`` (one C-level call) and reads the stacks of the threads
        (``sys._current_frames``).  The innermost frame of `_fire_op`, `_run_on_pool` or
        `_drain` of this run on a stack says what that thread fires: ``info`` in the first two,
        node ``node`` of ``iteration`` in `_drain` (which calls the fast-path kernels itself).
        Reading stacks costs nothing until a deadline passes; recording each firing would cost
        every run.
        """
        found = list(dict(self.pool_kernels).values())
        me = threading.get_ident()
        for thread, frame in current_frames().items():
            if thread == me:
                continue
            while frame is not None:
                if frame.f_code in _FIRING_CODES and frame.f_locals.get("self") is self:
                    variables = frame.f_locals
                    iteration = variables.get("iteration")
                    info = variables.get("info")
                    if frame.f_code is _DRAIN_CODE:
                        node = variables.get("node")
                        info = None if node is None else iteration.frame.nodes[node]
                    if isinstance(iteration, IterationState) and isinstance(info, NodeInfo):
                        found.append((iteration, info))
                    break
                frame = frame.f_back
            frame = None
        running = []
        for iteration, info in found:
            entry = (info.index, iteration.instance.description, iteration.number)
            if entry not in running:
                running.append(entry)
        return running

    # -- ordinary ops -----------------------------------------------------------------------------

    def _fire_op(self, iteration: IterationState, info: NodeInfo) -> None:
        slots = iteration.slots
        first, end = info.slot_base, info.slot_end
        args = slots[first:end]
        slots[first:end] = info.empty_slots
        dead = iteration.dead
        fired_dead = False
        timed = False  # whether the kernel's time goes to the cost model
        if info.local in dead:
            dead.discard(info.local)
            if not info.fires_on_dead:
                self._send_dead(iteration, info)
                return
            fired_dead = True
        if info.talks:
            if info.wants_frame:
                args = [(iteration.instance.description, iteration.number), *args]
            if info.asynchronous:
                self._start_async(iteration, info, args, fired_dead)
                return
            if info.blocking:
                holder = [iteration, info, args]
                args = None
                if self._submit(holder, _waiters):
                    return
                args = holder[2]
                holder = None
        elif self.pool is not None and info.inline is not True:
            # The cost model (`costs`): an expensive kernel goes to the pool only when this
            # thread has other work to do meanwhile (TensorFlow keeps one expensive node for
            # the thread that made it ready); cheap kernels never leave this thread.
            if info.inline is False:
                send = iteration.ready or any(other.ready for other in self.ready_iterations)
            else:
                costs = self.costs
                timed = self.measuring or costs.needs_timing(info)
                send = False
                if costs.is_expensive(info, args):
                    send = self._expensive_work_beside(iteration)
                    if not send and iteration.ready and self._defer(iteration, info):
                        slots[first:end] = args  # it fires again once the cheap work is done
                        return
            if send:
                holder = [iteration, info, args]
                args = None
                if self._submit(holder):
                    return
                args = holder[2]
                holder = None
        instrumented = self.instrumented
        unlock = self.in_flight
        if unlock:
            iteration.running += 1
            self.lock.release()
        try:
            try:
                began = _perf_counter() if timed or instrumented else 0.0
                if info.wants_context:
                    result = info.kernel(self.context, *args)
                else:
                    result = info.kernel(*args)
                ended = _perf_counter() if timed or instrumented else 0.0
            finally:
                if unlock:
                    self.lock.acquire()
                    iteration.running -= 1
            outputs = _outputs(info, result)
        except Exception as exc:
            self._kernel_failed(iteration, info, exc, args)
            return
        args = result = None
        if timed:
            self.costs.record(info, ended - began)
        if self.stopped:
            return
        if instrumented:
            self._kernel_done(iteration, info, began, ended, outputs)
        if info.talks and (fired_dead or _any_dead(outputs)):
            self._send_dead(iteration, info)
        else:
            self._send(iteration, info, outputs)

    def _defer(self, iteration: IterationState, info: NodeInfo) -> bool:
        """Puts an expensive node that found only cheap work ready beside it under that work
        (at the bottom of its iteration's ready stack), once per firing: the cheap nodes run
        first and may make another expensive node ready, to run beside it on the pool (where
        TensorFlow sends the expensive node to the pool at once).  False when it was deferred
        already: it fires now."""
        deferred = self.deferred
        if deferred is None:
            deferred = self.deferred = set()
        key = (iteration, info.local)
        if key in deferred:
            deferred.discard(key)
            return False
        deferred.add(key)
        iteration.ready.insert(0, info.local)
        return True

    def _expensive_work_beside(self, iteration: IterationState) -> bool:
        """Whether a ready node that the cost model counts as expensive waits for this thread
        (in ``iteration`` or another ready iteration), so that an expensive kernel sent to the
        pool overlaps with it.  Cheap ready nodes do not count: they take less time than the
        hand-off to the pool, and a pool thread woken for nothing but to overlap them mostly
        waits for a core and for the GIL (see `costs`).  Looks at `_READY_SCAN_LIMIT` ready
        nodes at most, so that a wide fan-out of cheap nodes costs a bounded scan."""
        is_expensive = self.costs.is_expensive
        looked_at = 0
        for candidate in (iteration, *self.ready_iterations):
            if candidate is not iteration and candidate.done:
                continue
            infos = candidate.frame.nodes
            dead = candidate.dead
            for local in reversed(candidate.ready):
                info = infos[local]
                if (
                    info.kind == _OP
                    and not info.talks
                    and local not in dead
                    and is_expensive(info, candidate.slots[info.slot_base : info.slot_end])
                ):
                    return True
                looked_at += 1
                if looked_at >= _READY_SCAN_LIMIT:
                    return False
        return False

    def _fire_arg(self, iteration: IterationState, info: NodeInfo) -> bool:
        self._send(iteration, info, (self.args[info.arg_position],))
        return True

    # -- propagation ------------------------------------------------------------------------------

    def _send(self, iteration: IterationState, info: NodeInfo, outputs) -> None:
        """Delivers a live firing's outputs to their consumers in the same iteration."""
        for consumers, value in zip(info.consumers, outputs):
            if consumers:
                self._deliver(iteration, consumers, value)
        if info.control_consumers:
            self._deliver_control(iteration, info.control_consumers, True)

    def _send_dead(self, iteration: IterationState, info: NodeInfo) -> None:
        for consumers in info.consumers:
            if consumers:
                self._deliver(iteration, consumers, DEAD)
        if info.control_consumers:
            self._deliver_control(iteration, info.control_consumers, False)

    def _send_one(self, target: IterationState, info: NodeInfo, value) -> None:
        """Delivers the single output of an Enter, Exit or NextIteration into ``target``."""
        consumers = info.consumers[0]
        if consumers:
            self._deliver(target, consumers, value)
        if info.control_consumers:
            self._deliver_control(target, info.control_consumers, value is not DEAD)

    def _deliver(self, target: IterationState, consumers, value) -> None:
        pending = target.pending
        slots = target.slots
        for consumer, slot, merge_position in consumers:
            if merge_position != -1:
                if merge_position == FETCH_SINK:
                    slots[slot] = value
                else:
                    self._arrive_merge(target, consumer, merge_position, value)
                continue
            slots[slot] = value
            if value is DEAD:
                target.dead.add(consumer)
            count = pending[consumer] - 1
            pending[consumer] = count
            if not count:
                target.ready.append(consumer)
                if not target.scheduled:
                    target.scheduled = True
                    self.ready_iterations[target] = None

    def _deliver_control(self, target: IterationState, consumers, live: bool) -> None:
        pending = target.pending
        for consumer, is_merge in consumers:
            if is_merge:
                self._control_to_merge(target, consumer, live)
                continue
            if not live:
                target.dead.add(consumer)
            count = pending[consumer] - 1
            pending[consumer] = count
            if not count:
                self._push(target, consumer)

    def _push(self, target: IterationState, local: int) -> None:
        target.ready.append(local)
        if not target.scheduled:
            target.scheduled = True
            self.ready_iterations[target] = None


# The firing method of each node kind, indexed by `NodeKind` (a tuple: hashing an IntEnum
# member is a Python-level call).
_HANDLER_OF_KIND = {
    NodeKind.OP: _Run._fire_op,
    NodeKind.ARG: _Run._fire_arg,
    NodeKind.SWITCH: _Run._fire_switch,
    NodeKind.MERGE: _Run._fire_merge,
    NodeKind.ENTER: _Run._fire_enter,
    NodeKind.EXIT: _Run._fire_exit,
    NodeKind.NEXT_ITERATION: _Run._fire_next_iteration,
}
_HANDLERS = tuple(_HANDLER_OF_KIND[NodeKind(value)] for value in range(len(NodeKind)))
# With statistics or an observer: a live OP records and reports its own kernel (it may run on
# the pool); the others, and a dead OP, are timed and reported around their firing.
_INSTRUMENTED_HANDLERS = tuple(
    _Run._fire_op_instrumented if kind == NodeKind.OP else _Run._fire_instrumented
    for kind in sorted(NodeKind)
)


def current_frames() -> dict:
    """``sys._current_frames()`` with the garbage collector held off: in CPython 3.11 a
    collection that starts inside it (it allocates frame objects while holding the
    interpreter's list of threads) can finalize a ``threading.local``, which takes that list's
    lock again, and the thread then waits on itself holding the GIL (CPython gh-106883)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if collecting:
            gc.enable()


# The methods in whose frames a thread of a run calls kernels (see `_firings_in_progress`).
_DRAIN_CODE = _Run._drain.__code__
_FIRING_CODES = frozenset((_DRAIN_CODE, _Run._fire_op.__code__, _Run._run_on_pool.__code__))


# The threads that drive runs with a deadline (`_Run._execute_until_deadline`): a run hands its
# driving to an idle one rather than paying for a thread start; one blocked in a kernel that
# never returns is not idle, so the next run gets another.  An idle one ends after
# `threads.IDLE_TIMEOUT_SECONDS`, so many concurrent timed runs leave no threads behind.
_drivers = DaemonThreadPool(name="dataflow-run-driver")
# The threads blocking kernels wait on (`Node.blocking`): one per kernel waiting, never capped,
# since a kernel waiting for another run must never wait for a thread as well.
_waiters = DaemonThreadPool(name="dataflow-waiter")


def _raise(error: BaseException):
    """Raises the error that stopped a run (a `KernelError` from the kernel's exception)."""
    if isinstance(error, KernelError):
        raise error from error.cause
    raise error


def _path_of(iteration: IterationState) -> list[IterationState]:
    """The iterations from the root's down to ``iteration``, each in the instance of a frame
    nested in the one before."""
    path = []
    while iteration is not None:
        path.append(iteration)
        iteration = iteration.instance.parent_iteration
    path.reverse()
    return path


def _comes_before(iteration: IterationState, failing: list[IterationState]) -> bool:
    """Whether ``iteration`` lies in an iteration of a loop that comes before the one the path
    ``failing`` passes through (so that it runs first when iterations run one at a time)."""
    for mine, theirs in zip(_path_of(iteration), failing):
        if mine is not theirs:
            return mine.instance is theirs.instance and mine.number < theirs.number
    return False  # the failing iteration, one it lies in, or one inside it


def _earlier_iterations_go_on(iteration: IterationState) -> bool:
    """Whether an iteration before ``iteration`` or one it lies in has not completed."""
    while iteration.instance.parent_iteration is not None:
        if iteration.instance.oldest < iteration.number:
            return True
        iteration = iteration.instance.parent_iteration
    return False


def _live_outputs(info: NodeInfo, inputs) -> tuple:
    """``(output_index, value)`` of what a non-OP node passes on when it fires live, from the
    inputs it fired with (an ARG's ``inputs`` is its argument)."""
    kind = info.kind
    if kind == NodeKind.SWITCH:
        data, pred = inputs
        return ((1, data),) if bool(pred) else ((0, data),)
    if kind == NodeKind.MERGE:
        value, position = inputs
        return ((0, value), (1, info.value_indices[position]))
    return ((0, inputs[0]),)
