"""Synchronous data-parallel training (TF1's ``tf.train.SyncReplicasOptimizer``).

Replicas (threads running the train op in one Session, or workers of a cluster) compute
gradients on their own data; each gradient goes into an accumulator per variable, which keeps
it only if it was computed at the current global step (stale ones are dropped).  The chief's
queue runner takes the average of ``replicas_to_aggregate`` gradients from each accumulator,
applies it with the wrapped optimizer (incrementing the global step), and puts one token per
replica, the new global step, into the token queue; a replica's train op ends by taking a token,
which becomes its local step.  So each step applies one averaged update.

The accumulators are TF1's ``ConditionalAccumulator`` and ``SparseConditionalAccumulator``
(`dataflow.ops.accumulator_ops`; ``IndexedSlices`` gradients: each row averaged over the
gradients that hold it), which live in the Session as queues do.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import logging as _logging
from ..framework.graph import Tensor, control_dependencies, get_default_graph
from ..framework.graph_keys import GraphKeys
from ..framework.indexed_slices import IndexedSlices
from ..ops.accumulator_ops import ConditionalAccumulator, SparseConditionalAccumulator
from ..ops.queue_ops import FIFOQueue
from ..ops.variables import Variable
from .hooks import SessionRunHook
from .queue_runner import QueueRunner
from .train import Optimizer

__all__ = ["SyncReplicasOptimizer"]


# -- the optimizer ---------------------------------------------------------------------------------
class SyncReplicasOptimizer(Optimizer):
    """Wraps ``opt`` to aggregate the gradients of ``replicas_to_aggregate`` replicas per step
    (see the module docstring).  ``total_num_replicas`` (default ``replicas_to_aggregate``)
    replicas run; with more replicas than are aggregated, the fastest ones make each step.
    ``variable_averages`` (an `ExponentialMovingAverage`) is applied to
    ``variables_to_average`` after each update.  Use `make_session_run_hook` with a
    ``MonitoredSession`` (or run `chief_init_op`, `get_init_tokens_op` and the queue runner of
    `get_chief_queue_runner` yourself)."""

    def __init__(
        self,
        opt,
        replicas_to_aggregate,
        total_num_replicas=None,
        variable_averages=None,
        variables_to_average=None,
        use_locking=False,
        name="sync_replicas",
    ):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _logging.info(
            "SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
            replicas_to_aggregate,
            total_num_replicas,
        )
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients (averaged across replicas by `apply_gradients`)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The train op of a replica: puts its gradients into the accumulators and waits for the
        token of the next step; builds the chief's update too (see the module docstring)."""
        from ..ops.array_ops import fill
        from ..ops.misc_ops import group, no_op
        from ..ops.variables import global_variables

        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        train_ops, aggregated, var_list = [], [], []
        # The local step lives on this replica's task, next to an op the device function puts
        # there (a device setter would put a variable on a ps, where replicas would share it).
        local_anchor = no_op()
        with graph.name_scope(None), graph.colocate_with(local_anchor):
            self._local_step = Variable(
                np.zeros((), _dtypes.numpy_dtype(global_step.dtype.base_dtype)),
                trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = self._local_step.assign(global_step)
        chief_init_ops = [self.local_step_init_op]
        from .monitored_session import report_uninitialized_variables

        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        with graph.name_scope(self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                if grad is None:
                    aggregated.append(None)
                    continue
                sparse = isinstance(grad, IndexedSlices)
                if not sparse and not isinstance(grad, Tensor):
                    raise ValueError("Unknown grad type!")
                # A variable's accumulator lives with it, where every replica's gradient goes.
                with graph.device(var.device):
                    if sparse:
                        accumulator = SparseConditionalAccumulator(
                            grad.dtype, shape=var.shape, shared_name=var.name + "/grad_accum"
                        )
                        train_ops.append(
                            accumulator.apply_indexed_slices_grad(
                                grad, local_step=self._local_step.value()
                            )
                        )
                        aggregated.append(
                            accumulator.take_indexed_slices_grad(self._replicas_to_aggregate)
                        )
                    else:
                        accumulator = ConditionalAccumulator(
                            grad.dtype, shape=var.shape, shared_name=var.name + "/grad_accum"
                        )
                        train_ops.append(
                            accumulator.apply_grad(grad, local_step=self._local_step.value())
                        )
                        aggregated.append(accumulator.take_grad(self._replicas_to_aggregate))
                self._accumulator_list.append((accumulator, var.device))
            # The update, the token queue and the replicas' wait for a token live with the
            # global step, so that all replicas share one queue.
            with graph.name_scope(None), graph.device(global_step.device):
                update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)), global_step)
                self._sync_token_queue = FIFOQueue(
                    -1,
                    global_step.dtype.base_dtype,
                    shapes=[[]],
                    name="sync_token_q",
                    shared_name="sync_token_q",
                )
                with control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = self._local_step.assign(token)
                with control_dependencies([update_op]):
                    tokens = fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with control_dependencies([sync_op]):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(self._sync_token_queue, [sync_op])
            for accumulator, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(
                        accumulator.set_global_step(global_step, name="SetGlobalStep")
                    )
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        """The queue runner that applies the averaged gradients and hands out tokens (the
        chief runs it)."""
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """The op that puts the first step's tokens into the queue (``replicas_to_aggregate``
        of them by default); fewer than the first step needs is a ``ValueError``."""
        from ..ops.array_ops import fill
        from ..ops.misc_ops import no_op

        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                f"{tokens_needed} (needed)"
            )
        if num_tokens > 0:
            tokens = fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))
        return no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook that runs the initialization (and, on the chief, the tokens and the queue
        runner) when a ``MonitoredSession`` creates its session."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        if self._sync_optimizer._gradients_applied is False:
            raise ValueError(
                "SyncReplicasOptimizer.apply_gradient should be called before using the hook."
            )
        if self._is_chief:
            self._local_init_op = self._sync_optimizer.chief_init_op
            self._ready_for_local_init_op = self._sync_optimizer.ready_for_local_init_op
            self._q_runner = self._sync_optimizer.get_chief_queue_runner()
            self._init_tokens_op = self._sync_optimizer.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = self._sync_optimizer.local_step_init_op
            self._ready_for_local_init_op = self._sync_optimizer.ready_for_local_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        from .monitored_session import _ready

        success, message = _ready(
            self._ready_for_local_init_op,
            session,
            "Model is not ready for SyncReplicasOptimizer local init.",
        )
        if not success:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer "
                f"local_init. Init op: {self._local_init_op.name}, error: {message}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
