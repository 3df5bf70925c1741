"""`Session`: runs parts of a graph, holding the values of variables between runs.

A ``run(fetches, feed_dict)`` goes through four steps (see ``docs/architecture.md``):

1. **Prune**: keep the ops the fetches need (`graph.needed_ops`), following data and control
   inputs backwards and stopping at fed tensors (a fed tensor's producer does not run for it).
   Between steps 1 and 2, the graph passes (`dataflow.passes`) chosen by
   ``ConfigProto.graph_options`` or ``RunOptions.rewrite_options`` rewrite a copy of the kept
   ops; the user's graph is never changed, and errors still name the user's ops.  A run that
   watches tensors (``RunOptions.debug_options``) runs no pass unless its ``rewrite_options``
   choose some.
2. **Lower**: number the kept ops as executor nodes, each with its kernel built from its
   `OpDef`; every fed tensor becomes an ``ARG`` node.  Steps 1-2 and the executor's static
   analysis are cached per (graph version, fetches, fed tensors, passes), so a run whose plan is
   cached does neither.
3. **Execute** the plan with this run's feed values, a `RunContext` (variable writes of this run,
   kept apart until the run succeeds) and the inter-op thread pool.
4. **Return** the values in the structure of ``fetches``, and commit the variable writes.

A failed run raises an `errors.OpError` naming the op and the user's line that created it, and
leaves the Session usable and every variable as it was before the run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Optional

import numpy as np

import executor
from executor.program import NodeKind, Program

from ..framework import composites, errors, intra_op, nest
from ..framework import dtypes as _dtypes
from ..framework.determinism import is_op_determinism_enabled
from ..framework.device import HOST_DEVICE
from ..framework.graph import Graph, Operation, Tensor, _user_location, get_default_graph
from ..framework.graph_walk import gc_paused, needed_ops
from ..framework.session_stack import (  # noqa: F401 - get_default_session is offered here too
    _session_for_eval,
    _session_stack,
    get_default_session,
)
from ..framework.traceback_utils import _filtered_traceback, is_traceback_filtering_enabled
from ..ops.variables import VariableRef
from ..passes.config import pipeline_for
from ..passes.lower_functional_ops import LOWER_FUNCTIONAL_OPS
from . import compiler
from . import debug_watcher as _debug_watcher
from .lower import (  # noqa: F401 - defined there, reached here too
    _compiled,
    _lower_op,
    lower_graph,
    numerics_error,
    run_inside,
)
from .options import (  # noqa: F401 - defined there, reached here too
    DEFAULT_EXECUTOR,
    SINGLE_THREADED_EXECUTOR,
    ConfigProto,
    GPUOptions,
    RunMetadata,
    RunOptions,
    process_config,
)
from .placer import place
from .plan import (  # noqa: F401 - defined there, reached here too
    _Plan,
)
from .random_streams import RandomStreams
from .run_context import (  # noqa: F401 - defined there, reached here too
    _CLOSED_DURING_RUN,
    RunContext,
    _closed_during_run,
)
from .run_errors import (  # noqa: F401 - defined there, reached here too
    _INVALID_ARGUMENT_CAUSES,
    _dead_fetch_error,
    _deadline_error,
    _describe_value,
    _explain_invalid_program,
    _kernel_error,
    _op_of_node,
    _user_op,
    _where,
)
from .step_stats import NodeExecStats, StepStats

# Makes the plan of a step placed on several devices (`dataflow.distribute.local.make_plan`,
# which registers itself), or None when everything lands on one.
_partitioned_steps: Optional[Callable] = None


def register_partitioned_steps(make_plan: Callable) -> None:
    global _partitioned_steps
    _partitioned_steps = make_plan


# Session targets other than "": a prefix -> function(target, graph, config) making the object
# that runs the Session's steps elsewhere (`register_target`; `dataflow.distribute` registers
# "ray://" and "grpc://").
_TARGETS: dict[str, Callable] = {}


def register_target(prefix: str, make_master: Callable) -> None:
    """Makes a ``Session(target)`` whose target starts with ``prefix`` run its steps through
    ``make_master(target, graph, config)``, an object with ``run(session, fetches, feed_dict,
    options, location, run_metadata)``, ``load_variable(session, variable, value)`` and
    ``close()`` (which stops the steps it runs, when the Session closes)."""
    _TARGETS[prefix] = make_master


class Session:
    """Runs fetches of one graph; holds that graph's variable values between runs.

    Several threads may call `run` on one Session at once.  Each run's variable writes are
    committed when it succeeds; ``assign_add`` and ``assign_sub`` of concurrent runs are atomic
    (none is lost, see `dataflow.ops.variables`), and an ``assign`` replaces the value as a whole.
    `close` stops the runs still going on with ``errors.CancelledError``.
    """

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        _check_argument("target", target, str, "a str")
        _check_argument("graph", graph, (Graph, type(None)), "a df.Graph or None")
        _check_argument("config", config, (ConfigProto, type(None)), "a df.ConfigProto or None")
        self._graph = graph if graph is not None else get_default_graph()
        if self._graph._eager:
            raise RuntimeError(
                f"df.Session() is not compatible with eager execution ({_user_location()}): "
                "eager ops run at once and have their values; build a graph inside "
                "`with df.Graph().as_default():` to run it in a Session."
            )
        if config is None:  # the process's options, as `df.config` set them
            config = process_config()
        self._config = config
        executor_type = self._config.experimental.executor_type
        if executor_type not in ("", DEFAULT_EXECUTOR, SINGLE_THREADED_EXECUTOR):
            raise ValueError(
                f"No executor of type {executor_type!r} ({_user_location()}): "
                "ConfigProto.experimental.executor_type is one of '', "
                f"'{DEFAULT_EXECUTOR}' and '{SINGLE_THREADED_EXECUTOR}'."
            )
        single_threaded = executor_type == SINGLE_THREADED_EXECUTOR
        # Lowering functional ops is not a rewrite option: it runs whatever they say, as
        # TensorFlow's does, unless the single-threaded executor runs those ops as calls.
        self._lowering = () if single_threaded else (LOWER_FUNCTIONAL_OPS,)
        self._variable_values: dict[str, Any] = {}
        self._resources: dict[str, Any] = {}  # queues, iterators: see RunContext.resource
        self._random_streams = RandomStreams()
        self._plans: dict[tuple, _Plan] = {}
        self._lock = threading.Lock()
        self._closed = False
        # Stops the runs in progress, and the functions their ops call, on `close`.
        self._cancellation = executor.Cancellation()
        threads = self._config.inter_op_parallelism_threads or (os.cpu_count() or 1)
        self._inter_op_threads = 1 if single_threaded else threads
        self._intra_op_threads = self._config.intra_op_parallelism_threads or (os.cpu_count() or 1)
        self._pool: Optional[executor.DaemonThreadPool] = None
        self._default_context = None
        self._default_graph_context = None
        self._pipeline_of_config = pipeline_for(self._config.graph_options)
        self._logged_placements: set[Operation] = set()
        self._target = target
        self._master = None  # runs the steps on a cluster, for a registered target
        for prefix, make_master in _TARGETS.items():
            if target.startswith(prefix):
                self._master = make_master(target, self._graph, self._config)

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self):
        """The Session's graph as a TensorFlow ``GraphDef`` (`Graph.as_graph_def`)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    def close(self) -> None:
        """Releases the thread pool and the variable values; the Session can't run any more.

        Runs still going on in other threads stop with ``errors.CancelledError`` and change no
        variable: no op starts after this, and a compiled loop stops at its next look at the
        clock (an op that is running goes on until it returns)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        self._cancellation.cancel(_CLOSED_DURING_RUN)
        if self._master is not None:
            self._master.close()  # the steps it runs on a cluster stop too
        for resource in self._resources.values():
            cancel = getattr(resource, "cancel", None)
            if cancel is not None:
                cancel()  # wakes kernels waiting on it, so that the pool can shut down
        if pool is not None:
            pool.shutdown(wait=True)
        self._variable_values = {}
        self._resources = {}
        self._random_streams = RandomStreams()
        self._plans = {}

    def __enter__(self) -> Session:
        """``with Session(graph=g) as sess:`` makes the session and, as TF1 does, its graph the
        defaults, so ops built in the block go into ``g``."""
        self._default_graph_context = self.graph.as_default()
        self._default_graph_context.__enter__()
        self._default_context = self.as_default()
        self._default_context.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        context, self._default_context = self._default_context, None
        if context is not None:
            context.__exit__(exc_type, exc, tb)
        graph_context, self._default_graph_context = self._default_graph_context, None
        if graph_context is not None:
            graph_context.__exit__(None, None, None)
        self.close()

    def as_default(self):
        """``with sess.as_default():`` makes ``Tensor.eval()``/``Operation.run()`` use it."""
        session = self

        class _DefaultSession:
            def __enter__(self_inner):
                _session_stack().append(session)
                return session

            def __exit__(self_inner, *exc):
                stack = _session_stack()
                if stack and stack[-1] is session:
                    stack.pop()

        return _DefaultSession()

    def _thread_pool(self) -> Optional[executor.DaemonThreadPool]:
        # With op determinism on, each step runs on one thread, in the executor's program
        # order: a pool could reorder stateful ops (`dataflow.framework.determinism`).
        if self._inter_op_threads <= 1 or is_op_determinism_enabled():
            return None
        pool = self._pool
        if pool is None:
            with self._lock:
                if self._closed:  # closed since the run began: no new pool that none closes
                    raise _closed_during_run()
                pool = self._pool
                if pool is None:
                    pool = self._pool = executor.DaemonThreadPool(
                        self._inter_op_threads, "dataflow-inter-op"
                    )
        return pool

    def _retire_pool(self, pool: executor.DaemonThreadPool) -> None:
        """Stops using ``pool`` (one of its threads may be blocked in an op of a run that went
        past its deadline): later runs get a new pool, and ``close`` does not wait for the old
        one.  Runs using it still finish: it takes no new work, which they then run inline."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False)

    # -- running ----------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Computes ``fetches`` (tensors, ops, names, in any nesting of lists, tuples,
        namedtuples and dicts) and returns their values in the same structure.

        ``feed_dict`` may give a value to any tensor that lies outside every while loop: a
        placeholder, a computed tensor (whose op then does not run for it), a tensor in a
        ``cond`` branch (used when the branch is taken), or a loop's result.  A tensor inside a
        while loop (built in its ``cond`` or ``body``, a loop variable as the loop sees it, or
        the result of a loop nested in another) may not be fed: ``ValueError``, as TensorFlow
        1.x raises for the tensors it marks unfeedable.  Nor may such a tensor, or an op
        inside a while loop, be fetched: `errors.InaccessibleTensorError` (a ``ValueError``),
        raised before anything runs, as TensorFlow does for the ops it marks unfetchable.

        Feeding replaces a tensor, not its op: an op with a control consumer still runs for
        it when its outputs are fed (an ``assign`` still assigns), except a fed
        ``Placeholder``, which the feed replaces whole, so that a control edge from it waits
        for the feed, as in TensorFlow."""
        try:
            return self._run(fetches, feed_dict, options, run_metadata, _user_location())
        except Exception as e:
            if not is_traceback_filtering_enabled():
                raise
            raise e.with_traceback(_filtered_traceback(e.__traceback__))  # noqa: B904

    def _run(self, fetches, feed_dict, options, run_metadata, location):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._master is not None:
            return self._master.run(self, fetches, feed_dict, options, location, run_metadata)
        if feed_dict is not None and type(feed_dict) is not dict:
            _check_argument(
                "feed_dict", feed_dict, Mapping, "a dict from tensors to values", location
            )
        if options is not None:
            _check_argument("options", options, RunOptions, "a df.RunOptions", location)
        if run_metadata is not None:
            _check_argument("run_metadata", run_metadata, RunMetadata, "a df.RunMetadata", location)
        flat = nest.flatten(fetches)
        composite = any(composites.is_composite(f) for f in flat)
        if composite:  # IndexedSlices, SparseTensor: fetched as a structure of their tensors
            if any(f is None for f in flat):
                self._as_fetch(None, location)  # the error a None fetch gets
            fetches = composites.expand_for_fetch(fetches)
            flat = nest.flatten(fetches)
            expanded_count = len(flat)
            present = [i for i, f in enumerate(flat) if f is not None]
            flat = [flat[i] for i in present]
        flat_fetches = [self._as_fetch(f, location) for f in flat]
        feed_tensors, feed_values = self._prepare_feeds(feed_dict, location)
        if self._graph._unfeedable_tensors or self._graph._unfetchable_ops:
            _check_allowed(self._graph, flat_fetches, feed_tensors, location)
        pipeline = self._pipeline(options)
        key = (self._graph.plan_version, tuple(flat_fetches), feed_tensors, pipeline)
        plan = self._plans.get(key)
        if plan is None:
            with gc_paused():
                _check_feedable(feed_tensors, location)
                placement = self._place(needed_ops(flat_fetches, feed_tensors))
                plan = None
                if len(set(placement.values())) > 1 and _partitioned_steps is not None:
                    plan = _partitioned_steps(
                        self._graph,
                        flat_fetches,
                        feed_tensors,
                        pipeline,
                        # A fed op is not placed (the feed replaces it): its value stays with
                        # the client, the host's first CPU.
                        lambda op: placement.get(op.name, HOST_DEVICE),
                    )
                if plan is None:
                    plan = self._make_plan(flat_fetches, feed_tensors, pipeline)
                plan.placement = placement
            if isinstance(plan, _Plan):
                _check_fetchable(plan, flat_fetches, location)
            with self._lock:  # threads that lowered it at once all run the first one stored
                if len(self._plans) > 256:
                    self._plans.clear()
                plan = self._plans.setdefault(key, plan)
        values = self._execute(plan, feed_values, options, run_metadata, location)
        flat_results = [None if p is None else values[p] for p in plan.fetch_positions]
        for i, value in enumerate(flat_results):
            if type(value) is np.ndarray:
                flat_results[i] = _as_result(value)
            elif type(value) is VariableRef:
                value = self._variable_values.get(value.key)
                flat_results[i] = value if value is None else _as_result(value)
        if composite:
            results = [None] * expanded_count
            for i, value in zip(present, flat_results):
                results[i] = value
            flat_results = results
        if not nest.is_nested(fetches):
            return flat_results[0]
        return nest.pack_sequence_as(fetches, flat_results)

    def make_callable(self, fetches, feed_list=None, accept_options: bool = False) -> Callable:
        """A function that runs ``fetches`` with positional values for ``feed_list``.  As in
        TensorFlow, it takes ``options=`` and ``run_metadata=`` keywords only when made with
        ``accept_options=True``."""
        location = _user_location()
        _check_argument(
            "feed_list", feed_list, (list, tuple, type(None)), "a list or tuple", location
        )
        feed_list = [self._as_feed_key(k, location) for k in (feed_list or ())]
        for f in nest.flatten(fetches):
            self._as_fetch(f, location)

        def call(*feed_values, options=None, run_metadata=None):
            if not accept_options and (options is not None or run_metadata is not None):
                raise TypeError(
                    "This callable takes no options or run_metadata: make it with "
                    f"make_callable(..., accept_options=True) (callable made at {location})"
                )
            if len(feed_values) != len(feed_list):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Expected {len(feed_list)} feed values, got {len(feed_values)} (callable "
                    f"made at {location})",
                )
            feed = dict(zip(feed_list, feed_values))
            return self._run(fetches, feed, options, run_metadata, _user_location())

        return call

    # -- fetches and feeds ------------------------------------------------------------------------
    def _as_fetch(self, fetch, location):
        if fetch is None:
            raise TypeError(f"Fetch argument None has invalid type (at {location}).")
        try:
            element = self._graph.as_graph_element(fetch)
        except (KeyError, ValueError, TypeError) as e:
            # As TensorFlow: an unknown name is a ValueError, a value of a wrong type a TypeError.
            message = e.args[0] if e.args else str(e)
            raise (TypeError if isinstance(e, TypeError) else ValueError)(
                f"Fetch argument {fetch!r} cannot be interpreted as a Tensor or Operation "
                f"of this Session's graph ({message}) (at {location})."
            ) from None
        return element

    def _as_feed_key(self, key, location) -> Tensor:
        try:
            element = self._graph.as_graph_element(key, allow_operation=False)
        except (KeyError, ValueError, TypeError) as e:
            message = e.args[0] if e.args else str(e)
            raise TypeError(  # whatever the reason, as TensorFlow
                f"Cannot interpret feed_dict key {key!r} as a Tensor of this Session's graph "
                f"({message}) (at {location})."
            ) from None
        if not isinstance(element, Tensor):
            raise TypeError(f"The feed_dict key {key!r} is not a Tensor (at {location}).")
        return element

    def _prepare_feeds(self, feed_dict, location):
        if not feed_dict:
            return (), ()
        pairs = []
        items = feed_dict.items()
        if any(type(key) is not Tensor and isinstance(key, tuple) for key in feed_dict):
            items = _flat_feed_items(feed_dict, location)
        for key, value in items:
            if composites.is_composite(key):  # IndexedSlices, SparseTensor: by their parts
                for tensor, part in key._feed_pairs(value):
                    tensor = self._as_feed_key(tensor, location)
                    pairs.append((tensor, _convert_feed(tensor, part, location)))
                continue
            tensor = self._as_feed_key(key, location)
            pairs.append((tensor, _convert_feed(tensor, value, location)))
        if len(pairs) > 1:
            pairs.sort(key=lambda p: p[0].name)
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    # -- plans: graph passes, pruning and lowering -------------------------------------------------
    def _pipeline(self, options) -> tuple:
        """The graph passes for a run: ``options.rewrite_options`` when given; else none when
        the run watches tensors, so that every watched tensor is computed as the user's graph
        says (the values are the same either way: passes never change one); else the
        Session's.  Each starts with the lowering of functional ops (``If``) unless the
        single-threaded executor was chosen, which runs them as calls."""
        rewrite = getattr(options, "rewrite_options", None)
        if rewrite is not None:
            return self._lowering + pipeline_for(self._config.graph_options, rewrite)
        if _debug_watcher.requested_watches(options):
            return self._lowering
        return self._lowering + self._pipeline_of_config

    def _place(self, ops: list) -> dict[str, str]:
        """The device of each op of a run (`dataflow.client.placer.place`) and, with
        ``log_device_placement``, a line on stderr for each op this Session has not placed
        before, as TensorFlow prints it (``name: (Type): /job:localhost/.../device:CPU:0``)."""
        placement = place(self._graph, ops, self._config)
        if self._config.log_device_placement:
            lines = []
            for op in ops:
                if op not in self._logged_placements:
                    self._logged_placements.add(op)
                    lines.append(f"{op.name}: ({op.type}): {placement[op.name]}\n")
            if lines:
                sys.stderr.write("".join(lines))
        return placement

    def _make_plan(self, flat_fetches, feed_tensors, pipeline: tuple) -> _Plan:
        return lower_graph(
            self._graph, flat_fetches, feed_tensors, pipeline, self._intra_op_threads
        )

    def _compiled_regions(self, fetches, feed_keys) -> list:
        """The compiled regions (`dataflow.client.compiler.CompiledRegion`) of the plan that runs
        ``fetches`` fed ``feed_keys``, as the compilation mode makes them (``"off"`` is shown
        as ``"auto"``); nothing runs."""
        return self._compile_report(fetches, feed_keys)[0]

    def _compile_report(self, fetches, feed_keys) -> tuple[list, dict]:
        """`_compiled_regions`, and why each other cond and loop of the plan stays
        interpreted (``{"loop <name>": reason}``)."""
        location = _user_location()
        flat_fetches = [self._as_fetch(f, location) for f in nest.flatten(fetches)]
        feed_tensors = [self._as_feed_key(k, location) for k in feed_keys]
        feed_tensors = tuple(sorted(feed_tensors, key=lambda t: t.name))
        plan = self._make_plan(flat_fetches, feed_tensors, self._pipeline(None))
        min_ops = 1 if compiler.mode() == "force" else compiler.AUTO_MIN_OPS
        refusals: dict = {}
        result = compiler.compile_program(plan.executable.program, min_ops, refusals)
        return ([] if result is None else result.regions), refusals

    # -- execution --------------------------------------------------------------------------------
    def _execute(
        self,
        plan: _Plan,
        feed_values,
        options,
        run_metadata,
        location,
        rendezvous=None,
        commit: Optional[Callable] = None,
    ):
        """Runs ``plan`` and commits its variable writes (`_commit`), or hands its `RunContext`
        to ``commit`` when given (a task of a cluster holds it until every task of the step
        succeeded); ``rendezvous`` is the step's, for a partition of a step of several tasks."""
        if run_metadata is None and type(plan) is _Plan:
            plan = _compiled(plan, options)
        timeout_ms = getattr(options, "timeout_in_ms", 0) or self._config.operation_timeout_in_ms
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        stats = executor.RunStats(record_dead=True) if run_metadata is not None else None
        # Tensor watches (dataflow.debug): None unless options.debug_options names some.
        watcher = _debug_watcher.start_watching(
            options, plan.nodes, plan.feed_tensors, self._graph, run_metadata, location
        )
        context = RunContext(self, deadline, rendezvous)
        pool = self._thread_pool()
        values = None
        try:
            with intra_op.blas_threads:  # the run's products on one BLAS thread each
                values = plan.executable.run(
                    feed_values,
                    context=context,
                    pool=pool,
                    deadline=deadline,
                    stats=stats,
                    observer=watcher,
                )
        except executor.KernelError as e:
            if isinstance(e.cause, executor.DeadlineExceededError):  # seen by a compiled loop
                e.cause.frame, e.cause.iteration = compiler.failed_where(
                    e.cause, e.frame, e.iteration
                )
                raise _deadline_error(e.cause, plan.reference or plan, timeout_ms) from None
            raise _kernel_error(e) from e.cause
        except executor.DeadlineExceededError as e:
            if e.running and pool is not None:
                self._retire_pool(pool)
            raise _deadline_error(e, plan, timeout_ms) from None
        except executor.FetchNotLiveError as e:
            raise _dead_fetch_error(e, plan) from None
        except executor.RunCancelledError as e:
            if e.node_index is None:  # the run as a whole: the Session was closed
                raise errors.CancelledError(None, None, str(e)) from None
            op = _user_op(plan.nodes[e.node_index].tag)
            raise errors.CancelledError(
                None, op, f"{errors.describe_op(op)}{_where(e.frame, e.iteration)}: {e}"
            ) from None
        finally:
            if values is None:
                context.finish()
            if values is None and context.random_draws:
                # A failed run gives its random draws back (`dataflow.client.random_streams`).
                self._random_streams.give_back(context.random_draws)
            if stats is not None:
                _fill_metadata(run_metadata, stats, plan)
            if run_metadata is not None and getattr(options, "output_partition_graphs", False):
                run_metadata.partition_graphs = list(getattr(plan, "partition_graphs", {}).values())
            if watcher is not None:
                watcher.finish(run_metadata)
        try:
            (self._commit if commit is None else commit)(context)
        finally:
            context.finish()
        return values

    def _commit(self, context: RunContext) -> None:
        """Makes the variable writes of a run that succeeded the Session's values."""
        # Closed while the run went on: the variables were released and its writes are
        # dropped, so the run reports that rather than a success that kept nothing.
        writes = context.pending_writes
        if writes:
            with self._lock:
                if self._closed:
                    raise _closed_during_run()
                if context.update_bases:
                    _rebase_updates(writes, context.update_bases, self._variable_values)
                self._variable_values.update(writes)
        elif self._closed:
            raise _closed_during_run()

    def _load_variable(self, variable, value) -> None:
        """Sets ``variable`` to a read-only copy of ``value`` (see `dataflow.ops.variables`)."""
        value = np.array(value, dtype=_dtypes.numpy_dtype(variable.dtype))
        if not variable.shape.is_compatible_with(value.shape):
            raise ValueError(
                f"Cannot load a value of shape {value.shape} into variable '{variable.name}' "
                f"of shape {variable.shape}"
            )
        value.flags.writeable = False
        if self._master is not None:  # the value lives on the variable's task of a cluster
            self._master.load_variable(self, variable, value)
            return
        with self._lock:
            self._variable_values[variable.op.name] = value


class InteractiveSession(Session):
    """A Session that makes itself the default session when it is created (for notebooks)."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        super().__init__(target, graph, config)
        self._default_context = self.as_default()
        self._default_context.__enter__()

    def close(self) -> None:
        context, self._default_context = self._default_context, None
        if context is not None:
            context.__exit__(None, None, None)
        super().close()


# -- helpers ---------------------------------------------------------------------------------------
def _check_argument(name: str, value, types, expected: str, location=None) -> None:
    """Raises a ``TypeError`` naming the argument ``name``, what it takes, what was given and
    the user's line (``location``, found here when not given), unless ``value`` is an instance
    of ``types``."""
    if not isinstance(value, types):
        raise TypeError(
            f"Argument `{name}` must be {expected}, got {value!r:.200} of type "
            f"{type(value).__name__} (at {location or _user_location()})."
        )


def _rebase_updates(writes: dict, bases: dict, values: dict) -> None:
    """Makes the commit of a run's updates (AssignAdd, AssignSub) apply the run's change to
    the value each variable has now, when another run committed one since this run read it
    (``bases``: the value each update of this run started from, see `RunContext`).  The change
    is ``written - base``; a variable of another kind, or whose shape another run changed,
    takes this run's value, as an assign would."""
    for key, base in bases.items():
        current = values.get(key)
        if current is None or current is base:
            continue
        written = writes[key]
        if (
            written.dtype.kind not in "iufc"
            or current.dtype != written.dtype
            or current.shape != written.shape
            or base.shape != written.shape
        ):
            continue
        with np.errstate(all="ignore"):
            value = np.asarray(current + (written - base), dtype=written.dtype)
        value.flags.writeable = False
        writes[key] = value


def _convert_feed(tensor: Tensor, value, location) -> Any:
    """A feed value as an array of ``tensor``'s dtype, converted as TensorFlow 1.x does:
    ``np.asarray(value, dtype)``, so ``1.5`` fed to an int32 placeholder is ``1`` and ``[1, 0]``
    fed to a bool one is ``[True, False]``, and ``str`` fed to a string one is encoded as UTF-8
    (`dtypes.string_array`); a Python int that the dtype cannot hold is a
    ``TypeError``; a value numpy cannot convert (``"abc"`` for a float) raises numpy's error
    class with the tensor named.  The value is handed to the run read-only."""
    dtype = tensor.dtype
    np_dtype = _dtypes.numpy_dtype(dtype)
    if isinstance(value, Tensor):
        raise TypeError(
            f"The value of a feed cannot be a df.Tensor object (feed for '{tensor.name}', at "
            f"{location}). Acceptable feed values include Python scalars, lists and numpy arrays."
        )
    if isinstance(value, int) and not isinstance(value, bool) and np_dtype.kind in "iub":
        try:
            fits = np_dtype.type(value) == value
        except OverflowError:
            fits = False
        if not fits:
            raise TypeError(
                f"Type of feed value {value} with type {type(value)} is not compatible with "
                f"Tensor type {dtype.name} of '{tensor.name}' (feed at {location}). Try "
                "explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
            )
    if dtype is _dtypes.string:
        try:
            converted = _dtypes.string_array(value)
        except TypeError as e:
            raise TypeError(
                f"Cannot feed value {value!r:.80} to tensor '{tensor.name}' of dtype string "
                f"(created at {tensor.op.location}; feed at {location}): {e}"
            ) from None
    elif isinstance(value, (np.ndarray, np.generic)) and value.dtype == np_dtype:
        converted = np.asarray(value)  # already of the dtype: nothing to convert, nothing to warn
    else:
        try:
            with np.errstate(all="ignore"):
                converted = np.asarray(value, dtype=np_dtype)
        except Exception as e:  # strings for numbers, ragged lists, out-of-range Python ints
            error = ValueError if isinstance(e, ValueError) else TypeError
            raise error(
                f"Cannot feed value {value!r} to tensor '{tensor.name}' of dtype {dtype.name} "
                f"(created at {tensor.op.location}; feed at {location}): {e}"
            ) from None
    static = tensor.shape
    if converted.shape != static.as_tuple() and not static.is_compatible_with(converted.shape):
        raise ValueError(
            f"Cannot feed value of shape {converted.shape} for Tensor '{tensor.name}', which "
            f"has shape {static} (created at {tensor.op.location}; feed at {location})."
        )
    if converted.flags.writeable:
        # The run sees the user's array through a read-only view: no kernel (an in-place one
        # in a graph optimized earlier, a py_func) can write into it.
        converted = converted.view()
        converted.flags.writeable = False
    return converted


def _as_result(value: np.ndarray):
    """What ``run`` hands back for an array: a numpy scalar for 0-d values (as TensorFlow
    does), and a copy of read-only buffers (constants, variables' values), so the caller may
    modify it."""
    if value.ndim == 0:
        return value[()]
    if not value.flags.writeable:
        return value.copy()
    return value


def _check_allowed(graph: Graph, flat_fetches: list, feed_tensors: tuple, location) -> None:
    """Raises for a feed of a tensor ``graph.prevent_feeding`` marked, or a fetch of an op
    ``graph.prevent_fetching`` marked, with TensorFlow's errors and the reason given when the
    mark was made (`cond` and `while_loop` mark what TensorFlow 1.x marks)."""
    for tensor in feed_tensors:
        if not graph.is_feedable(tensor):
            reason = graph._unfeedable_tensors[tensor] or (
                "it has been marked as not feedable (graph.prevent_feeding)"
            )
            raise ValueError(
                f"Tensor '{tensor.name}' may not be fed: {reason} (tensor created at "
                f"{tensor.op.location}; feed at {location})."
            )
    for element in flat_fetches:
        if not graph.is_fetchable(element):
            is_op = isinstance(element, Operation)
            op = element if is_op else element.op
            reason = graph._unfetchable_ops[op] or (
                "Typically this happens when it is defined in another function or code block. "
                "Use return values, explicit Python locals or collections to access it."
            )
            raise errors.InaccessibleTensorError(
                f"{'Operation' if is_op else 'Tensor'} '{element.name}' (created at "
                f"{op.location}) has been marked as not fetchable (run at {location}): {reason}"
            )


def _check_feedable(feed_tensors: tuple, location) -> None:
    """Raises ``ValueError`` for a fed tensor that lies inside a while loop (see `Session.run`).

    Where a tensor lies is the executor's frame analysis of the ops it depends on, as if it
    were fetched and nothing fed, so that loops built by hand from Enter and Exit count as
    ``while_loop``'s do.  A tensor of an op without inputs (a placeholder, a constant) lies
    outside every loop, so the usual feeds cost nothing here; the check runs when a run's plan
    is made, not on every run.
    """
    computed = [t for t in feed_tensors if t.op._inputs or t.op._control_inputs]
    if not computed:
        return
    ops = needed_ops(computed)
    node_of = {op: index for index, op in enumerate(ops)}
    program = Program(
        nodes=[_lower_op(op, node_of, {}, with_kernel=False) for op in ops],
        fetches=[(node_of[t.op], t.value_index) for t in computed],
    )
    try:
        analysis = executor.prepare(program)
    except executor.InvalidProgramError:
        return  # malformed above the feeds, which may cut that part off: the run's plan says
    for tensor in computed:
        frame = analysis.output_frame_of(node_of[tensor.op])
        if frame is not None and frame != "root":
            raise ValueError(
                f"Tensor '{tensor.name}' may not be fed: it lies inside the while loop frame "
                f"'{frame}' (created at {tensor.op.location}; feed at {location}). Only tensors "
                "outside every while loop can be fed, as in TensorFlow 1.x: a loop sees one "
                "value per iteration, and a feed gives one value per run. Feed a tensor the "
                "loop reads from outside, a loop variable's initial value, or the loop's result."
            )


def _check_fetchable(plan: _Plan, flat_fetches: list, location) -> None:
    """Raises `errors.InaccessibleTensorError` for a fetched tensor or op that lies inside a
    while loop, before anything runs (see `Session.run`).

    Where a fetch lies is the executor's frame analysis of the plan, done when the plan is
    made, so that loops built by hand from Enter and Exit count as ``while_loop``'s do; graph
    passes keep a fetch where it was, as they never change what a run returns.
    """
    executable = plan.executable
    fetch_edges = executable.program.fetches
    targets = iter(executable.program.targets)
    for element, position in zip(flat_fetches, plan.fetch_positions):
        if position is None:
            frame = executable.frame_of(next(targets))
        else:
            frame = executable.output_frame_of(fetch_edges[position][0])
        if frame is None or frame == "root":
            continue
        is_op = isinstance(element, Operation)
        built = next(
            (
                f" built at {_user_op(node.tag).location}"
                for node in plan.nodes
                if node.kind == NodeKind.ENTER and node.frame_name == frame
            ),
            "",
        )
        raise errors.InaccessibleTensorError(
            f"{'Operation' if is_op else 'Tensor'} '{element.name}' (created at "
            f"{(element if is_op else element.op).location}) cannot be fetched (run at "
            f"{location}): it lies inside the while loop '{frame}'{built}, which runs it once "
            "per iteration, while a run returns one value. Fetch the loop's results, or make "
            "the value a loop variable and fetch its final value."
        )


def _fill_metadata(run_metadata: RunMetadata, stats, plan: _Plan) -> None:
    run_metadata.step_stats = _exec_stats(stats.node_records, plan.nodes)
    run_metadata.dead_step_stats = _exec_stats(stats.dead_records, plan.nodes)
    run_metadata.loop_iterations = dict(stats.frame_iterations)
    run_metadata.rewritten_ops = dict(plan.taken_out)


def _exec_stats(records, nodes) -> StepStats:
    step_stats = StepStats()
    for record in records:
        node = nodes[record.node_index]
        op = node.tag
        is_op = isinstance(op, Operation)
        step_stats.append(
            NodeExecStats(
                node.name,
                op.type if is_op else node.kind.name,
                record.start,
                record.end,
                record.thread,
                record.frame,
                record.iteration,
                str(op.location) if is_op else "",
                _user_op(op).name if is_op and node.kind != NodeKind.ARG else node.name,
                record.outputs,
            )
        )
    step_stats.sort(key=lambda s: s.start)
    return step_stats


def _flat_feed_items(feed_dict, location) -> list:
    """The (key, value) pairs of ``feed_dict`` with each key that is a nested structure (a
    tuple of state tensors, as TF1's RNN states) taken apart with its value, part by part, as
    TensorFlow's ``nest.flatten_dict_items`` (which also takes a list in the value where the
    key has a tensor apart; here it is that tensor's value)."""
    items, seen = [], set()
    for key, value in feed_dict.items():
        if isinstance(key, tuple):
            keys = nest.flatten(key)
            try:
                values = nest.flatten_up_to(key, value)
            except ValueError:
                values = nest.flatten(value)
                raise ValueError(
                    f"Could not flatten dictionary. Key had {len(keys)} elements, but value had "
                    f"{len(values)} elements. Key: {keys}, value: {values} (at {location})."
                ) from None
        else:
            keys, values = [key], [value]
        for part, part_value in zip(keys, values):
            name = part.name if isinstance(part, Tensor) else part
            if name in seen:
                raise ValueError(
                    f"Cannot flatten dict because this key is not unique: {name!r} (at {location})."
                )
            seen.add(name)
            items.append((part, part_value))
    return items
