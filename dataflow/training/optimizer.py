"""``Optimizer``, the base of every optimizer: computing gradients, applying them (dense and
sparse, with slots), and the checks and helpers the optimizers share."""

from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from ..autodiff.gradients import gradients
from ..distribute.cluster import ClusterSpec  # noqa: E402, F401
from ..distribute.device_setter import replica_device_setter  # noqa: E402, F401
from ..framework import dtypes as _dtypes
from ..framework import nest
from ..framework.graph import (
    Graph,
    Operation,
    Tensor,
    TensorRef,
    _user_location,
    control_dependencies,
    get_default_graph,
)
from ..framework.graph_keys import GraphKeys
from ..framework.indexed_slices import IndexedSlices
from ..framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from ..framework.tensor_shape import TensorShape
from ..io.checkpoint_management import (  # noqa: E402, F401
    checkpoints_iterator,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    remove_checkpoint,
    update_checkpoint_state,
)
from ..io.checkpoint_utils import (  # noqa: E402, F401
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from ..io.graph_def import write_graph  # noqa: E402, F401
from ..io.saver import (  # noqa: E402, F401  # noqa: E402, F401
    CheckpointState,
    Saver,
    checkpoint_exists,
    export_meta_graph,
    get_checkpoint_state,
    import_meta_graph,
    latest_checkpoint,
)
from ..io.summary import summary_iterator  # noqa: E402, F401
from ..ops.array_ops import fill as _fill
from ..ops.array_ops import identity as _identity
from ..ops.array_ops import shape as _shape
from ..ops.gather_ops import gather as _gather
from ..ops.io_ops import match_filenames_once  # noqa: E402, F401
from ..ops.math_ops import (
    cast,
)
from ..ops.misc_ops import group
from ..ops.misc_ops import tuple as _tuple
from ..ops.segment_ops import unique, unsorted_segment_sum
from ..ops.state_ops import scatter_add, scatter_sub, scatter_update
from ..ops.variables import Variable
from .learning_rate_decay import (  # noqa: E402, F401
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    piecewise_constant_decay,
    polynomial_decay,
)
from .moving_averages import ExponentialMovingAverage  # noqa: E402, F401
from .training_util import (
    _lifted,
)

_VALID_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


class Optimizer:
    """Base class of the optimizers (``tf.compat.v1.train.Optimizer``).

    A subclass defines ``_prepare()`` (turn hyperparameters into tensors, once per
    ``apply_gradients``), ``_create_slots(var_list)`` and ``_apply_dense(grad, var)``, and may
    define ``_finish(update_ops, name_scope)`` and ``_apply_sparse(grad, var)``.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(
        self, use_locking: bool, name: str, use_own_namescope_for_non_slot_vars: bool = False
    ):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # With use_own_namescope_for_non_slot_vars, the non-slot variables (Adam's
        # beta1_power, ...) live in a variable scope of the optimizer's own, made unique here
        # ("Adam", "Adam_1", ...), at the root of the name scopes, as in TensorFlow.
        self._use_own_namescope_for_non_slot_vars = use_own_namescope_for_non_slot_vars
        if use_own_namescope_for_non_slot_vars:
            from ..ops.variable_scope import variable_scope

            with variable_scope(None, default_name=self._name) as vs:
                self._non_slot_variable_scope = vs
        # slot name -> ``var.ref()`` -> the slot variable of ``var`` (keyed through ``ref()``:
        # a variable made eagerly is unhashable, as in TensorFlow 2).
        self._slots: dict[str, dict[TensorRef, Variable]] = {}
        # (name, graph) -> variable: state shared by all variables, one per graph.
        self._non_slot_dict: dict[tuple[str, Graph], Variable] = {}

    def get_name(self) -> str:
        return self._name

    # -- public API -----------------------------------------------------------------------------
    def minimize(
        self,
        loss: Tensor,
        global_step: Optional[Variable] = None,
        var_list=None,
        gate_gradients: int = GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        name: Optional[str] = None,
        grad_loss=None,
    ) -> Operation:
        """``apply_gradients(compute_gradients(loss, var_list), global_step, name)``: the op
        that performs one training step.  ``ValueError`` when no variable gets a gradient."""
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            grad_loss=grad_loss,
        )
        if all(g is None for g, _ in grads_and_vars):
            names = [str(v) for _, v in grads_and_vars]
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {names} and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Tensor,
        var_list=None,
        gate_gradients: int = GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        grad_loss=None,
    ) -> list[tuple[Optional[Tensor], Any]]:
        """``[(gradient, variable), ...]`` of ``loss`` for each of ``var_list``.

        ``var_list`` (a list, possibly nested, of Variables or Tensors) defaults to the
        trainable variables of the loss's graph (TensorFlow takes the default graph's; the two
        are the same whenever TensorFlow's choice would work).  The gradient is None for a
        variable ``loss`` does not depend on.  ``GATE_GRAPH`` makes every gradient wait for all
        of them (an identity per gradient); ``GATE_OP`` and ``GATE_NONE`` add nothing, as
        gradients here read forward values, never a variable an update may already have
        changed.

        ``loss`` is a Tensor (or a Variable), or a function of no arguments that returns it.
        Eagerly it must be a function, which runs under a `GradientTape` that computes the
        gradients; ``var_list`` then defaults to the trainable variables the function read.  In
        a graph the function is called once and its result differentiated as a tensor would be.
        """
        eager = get_default_graph()._eager
        if callable(loss) and not isinstance(loss, (Tensor, Variable)):
            if eager:
                return self._compute_gradients_eagerly(loss, var_list, grad_loss)
            loss = loss()
        elif eager:
            raise RuntimeError(
                "`loss` passed to Optimizer.compute_gradients should be a function when eager "
                f"execution is enabled ({_user_location()}): its value is already computed, "
                "so no tape saw how; pass `lambda: <the loss>`."
            )
        if isinstance(loss, Variable):
            loss = loss.read_value()
        if not isinstance(loss, Tensor):
            raise TypeError(f"loss must be a Tensor or a function returning one, got {loss!r}")
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        _assert_valid_dtypes([loss])
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            _assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = nest.flatten(var_list)
        for v in var_list:
            if not isinstance(v, (Variable, Tensor)):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: pass Variables")
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(
            loss,
            var_list,
            grad_ys=None if grad_loss is None else [grad_loss],
            aggregation_method=aggregation_method,
        )
        if gate_gradients == Optimizer.GATE_GRAPH and any(g is not None for g in grads):
            grads = _tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        _assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def _compute_gradients_eagerly(self, loss_fn, var_list, grad_loss) -> list:
        """`compute_gradients` of the function ``loss_fn`` in eager mode, by a `GradientTape`
        that watches ``var_list`` (or, when it is None, every trainable variable read)."""
        from ..eager import GradientTape

        if var_list is not None:
            var_list = nest.flatten(var_list)
            for v in var_list:
                if not isinstance(v, (Variable, Tensor)):
                    raise TypeError(f"Trying to optimize unsupported type {v!r}: pass Variables")
        with GradientTape() as tape:
            if var_list is not None:
                tape.watch(var_list)
            loss = loss_fn()
        if isinstance(loss, Variable):
            loss = loss.read_value()
        if not isinstance(loss, Tensor):
            raise TypeError(f"The loss function returned {loss!r}, not a Tensor")
        _assert_valid_dtypes([loss])
        if var_list is None:
            var_list = list(tape.watched_variables())
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = tape.gradient(loss, var_list, output_gradients=grad_loss)
        grads_and_vars = list(zip(grads, var_list))
        _assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(
        self, grads_and_vars, global_step: Optional[Variable] = None, name: Optional[str] = None
    ) -> Operation:
        """The op that applies each gradient to its variable (pairs whose gradient is None are
        skipped) and then, when ``global_step`` is given, increments ``global_step`` by one.

        ``name`` (default: the optimizer's name) names the scope of the update ops and the
        returned op.  Eagerly the step runs at once and the result is None, as in TensorFlow.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        from ..distribute import strategy as _strategy

        replica = _strategy.replica_merging()
        if replica is not None:  # one of a strategy's replicas: sum the gradients, apply once
            merge = functools.partial(_strategy.merged_apply_gradients, optimizer=self)
            return replica.merge_call(merge, args=(grads_and_vars, global_step, name))
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"Gradient must be convertible to a Tensor or None: {g!r}"
                    ) from None
            if isinstance(v, Tensor):
                raise NotImplementedError(f"Trying to update a Tensor {v}: pass Variables")
            if not isinstance(v, Variable):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: pass Variables")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            names = [str(v) for _, v in converted]
            raise ValueError(f"No gradients provided for any variable: {names}.")
        if global_step is not None and not isinstance(global_step, Variable):
            raise TypeError(f"global_step must be a Variable, got {global_step!r}")
        graph = var_list[0].graph
        with graph.as_default(), _lifted(graph):
            self._create_slots(var_list)
        building = get_default_graph()
        if graph._eager and not building._eager:
            # A df.function being traced updates eager variables: its state (made above, on
            # the first trace only) is eager too, and the updates are ops of the trace.
            graph = building
        with graph.as_default():
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                update_ops = []
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name):
                        if isinstance(grad, IndexedSlices):
                            update_ops.append(self._apply_sparse_duplicate_indices(grad, var))
                        else:
                            update_ops.append(self._apply_dense(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with control_dependencies([self._finish(update_ops, "update")]):
                        apply_updates = global_step.assign_add(1, name=scope).op
            if graph._eager:
                return None
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        """The slot variable ``name`` (see `get_slot_names`) made for ``var``, or None.  For
        the rows of a variable (`_Rows`, in a sparse update) the same rows of the slot."""
        if isinstance(var, _Rows):
            slot = self._slots.get(name, {}).get(var.variable.ref())
            return None if slot is None else _Rows(slot, var.indices)
        return self._slots.get(name, {}).get(var.ref())

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's variables in the default graph (slots and non-slot state), sorted
        by name."""
        graph = get_default_graph()
        found = [v for v in self._non_slot_dict.values() if v.graph is graph]
        found += [s for slots in self._slots.values() for s in slots.values() if s.graph is graph]
        return sorted(found, key=lambda v: v.name)

    # -- for subclasses -------------------------------------------------------------------------
    def _prepare(self) -> None:
        pass

    def _create_slots(self, var_list: list) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable):
        raise NotImplementedError

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable):
        """`_apply_sparse` of ``grad`` with the values of repeated indices summed, so that each
        row is updated once (as TensorFlow's optimizers do)."""
        unique_indices, positions = unique(grad.indices)
        summed = unsorted_segment_sum(grad.values, positions, _shape(unique_indices)[0])
        return self._apply_sparse(IndexedSlices(summed, unique_indices, grad.dense_shape), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable):
        """The update for a gradient given as ``IndexedSlices`` with distinct indices: the
        dense update applied to those rows of ``var`` and of its slots only (see the module
        docstring)."""
        return self._apply_dense(grad.values, _Rows(var, grad.indices))

    def _finish(self, update_ops: list, name_scope: str) -> Operation:
        return group(*update_ops, name=name_scope)

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        """The slot ``slot_name`` of ``var``, made on first use: zeros like ``var``, named
        ``<var>/<op_name>`` at the top level of the name scopes (``<var>/<op_name>_1`` when
        another slot of ``var`` took that name first, as TensorFlow's unique names go)."""
        return self._filled_slot(var, slot_name, op_name, 0)

    def _filled_slot(self, var: Variable, slot_name: str, op_name: str, value) -> Variable:
        """`_zeros_slot` with every element ``value`` (in ``var``'s dtype) instead of zero."""
        slots = self._slots.setdefault(slot_name, {})
        key = var.ref()
        if key not in slots:
            graph = var.graph
            with graph.as_default(), _lifted(graph), graph.name_scope(None):
                if var.shape.is_fully_defined():
                    filled = np.full(
                        var.shape.as_list(), value, dtype=_dtypes.numpy_dtype(var.dtype)
                    )
                    slots[key] = Variable(
                        filled, trainable=False, name=f"{var.op.name}/{op_name}", dtype=var.dtype
                    )
                else:
                    slots[key] = Variable(
                        lambda: _fill(_shape(var.initial_value), cast(value, var.dtype)),
                        trainable=False,
                        name=f"{var.op.name}/{op_name}",
                        validate_shape=False,
                    )
        return slots[key]

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with: Variable):
        """The variable ``name`` shared by all of the optimizer's variables in the graph of
        ``colocate_with``, made on first use in the current name scope."""
        key = (name, colocate_with.graph)
        if key not in self._non_slot_dict:
            if self._use_own_namescope_for_non_slot_vars:
                from ..ops.variable_scope import get_variable, variable_scope

                graph = colocate_with.graph
                with graph.name_scope(None), variable_scope(self._non_slot_variable_scope):
                    self._non_slot_dict[key] = get_variable(
                        name, initializer=initial_value, trainable=False
                    )
            else:
                self._non_slot_dict[key] = Variable(initial_value, name=name, trainable=False)
        return self._non_slot_dict[key]

    def _get_non_slot_variable(self, name: str, graph: Optional[Graph] = None):
        """The non-slot variable ``name`` of ``graph`` (the default graph), or of the graph a
        function being traced there captures its variables from."""
        graph = graph or get_default_graph()
        while graph is not None:
            found = self._non_slot_dict.get((name, graph))
            if found is not None or not graph.building_function:
                return found
            graph = getattr(graph, "outer_graph", None)
        return None

    def _non_slot_variables(self) -> list[Variable]:
        return list(self._non_slot_dict.values())

    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param


class _Rows:
    """Rows ``indices`` of ``variable``, standing in for the variable in a dense update so that
    the update reads and writes those rows only: reads ``gather`` them, writes ``scatter`` into
    them and give back the rows' new value (as a variable's assign gives back its new value)."""

    def __init__(self, variable: Variable, indices: Tensor):
        self.variable = variable
        self.indices = indices

    @property
    def dtype(self):
        return self.variable.dtype

    @property
    def shape(self):
        return TensorShape([None]).concatenate(self.variable.shape[1:])

    @property
    def op(self):
        return self.variable.op

    @property
    def name(self) -> str:
        return self.variable.name

    def read_value(self) -> Tensor:
        return _gather(self.variable, self.indices)

    value = read_value

    def _written(self, scatter, updates, new_rows) -> Tensor:
        with control_dependencies([scatter(self.variable, self.indices, updates)]):
            return _identity(new_rows)

    def assign(self, value, use_locking=None, name=None, read_value=True) -> Tensor:
        value = convert_to_tensor(value, dtype=self.dtype)
        return self._written(scatter_update, value, value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True) -> Tensor:
        delta = convert_to_tensor(delta, dtype=self.dtype)
        return self._written(scatter_add, delta, self.read_value() + delta)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True) -> Tensor:
        delta = convert_to_tensor(delta, dtype=self.dtype)
        return self._written(scatter_sub, delta, self.read_value() - delta)


register_tensor_conversion_function(_Rows, lambda rows, dtype=None, name=None: rows.read_value())


def _assert_valid_dtypes(tensors) -> None:
    for t in tensors:
        if t.dtype not in _VALID_DTYPES:
            expected = [d.name for d in _VALID_DTYPES]
            raise ValueError(f"Invalid type {t.dtype.name} for {t.name}, expected: {expected}.")


def _hyperparameter(value, name: str) -> Tensor:
    """A hyperparameter as a tensor: a Python float becomes float32, as in TensorFlow."""
    return convert_to_tensor(Optimizer._call_if_callable(value), name=name)


__all__ = ["Optimizer"]
