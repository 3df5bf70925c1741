"""Training: optimizers that turn gradients into variable updates, the global step, and (from
their own modules) learning-rate schedules, moving averages and checkpoints.

An `Optimizer` mirrors ``tf.compat.v1.train.Optimizer``:

- ``compute_gradients(loss, var_list)`` calls `dataflow.autodiff.gradients` and pairs each variable
with
  its gradient (None where ``loss`` does not depend on it);
- ``apply_gradients(grads_and_vars, global_step)`` creates the slot variables, adds one update
  per variable that has a gradient (under ``<name>/update_<variable>``), groups them with the
  optimizer's own bookkeeping (``_finish``: Adam's beta powers) and, when ``global_step`` is
  given, increments it after all of that.  The returned op is named like the optimizer
  (``GradientDescent``) and is added to the ``train_op`` collection;
- ``minimize`` does both.

Everything is graph ops: running the returned op once performs one training step.  In eager
mode the same ops run as they are made, so ``apply_gradients`` performs the step at once (and
returns None, as TensorFlow's does), and ``minimize`` takes the loss as a function of no
arguments, which it runs under a `GradientTape` for the gradients.  The
optimizers are GradientDescent, Momentum, Adam, RMSProp, Adagrad, Adadelta, Ftrl,
ProximalGradientDescent and ProximalAdagrad as in ``tf.compat.v1.train``, and AdamW and
MomentumW (decoupled weight decay, from TensorFlow 1.x's ``tf.contrib.opt``).

Numbers follow TensorFlow's fused kernels (``ApplyGradientDescent``, ``ApplyMomentum``,
``ApplyAdam``, ``ApplyRMSProp``, ``ApplyFtrlV2``, ...) step for step, including where they
convert: a hyperparameter given as a Python number becomes a float32 tensor once per
``apply_gradients`` (``_prepare``) and is cast to each variable's dtype, so a float64 model
trained with ``learning_rate=0.1`` uses float32(0.1), as TensorFlow does.  Each kernel is
written as the composition of graph ops it computes (reads, arithmetic, assigns), so that a
picture of the step shows the update rule.

State, named as TensorFlow names it (so checkpoints line up):

- slot variables, one per trained variable and slot: ``<variable>/<optimizer name>`` for the
  first slot made (Momentum's accumulator, Adam's first moment ``m``, RMSProp's ``rms``) and
  ``<variable>/<optimizer name>_1``, ``_2`` for the next ones, created at the top level of the
  name scopes;
- non-slot variables (Adam's ``beta1_power`` and ``beta2_power``), one per graph, created in the
  name scope ``minimize`` is called in.

All are non-trainable members of ``GLOBAL_VARIABLES``, created outside any cond, loop and
``control_dependencies`` block, so ``df.global_variables_initializer()`` created after
``minimize`` initializes them.

Sparse gradients.  A gradient given as ``IndexedSlices`` (from ``gather`` or
``nn.embedding_lookup``) has its duplicate rows summed and goes to ``_apply_sparse``, which by
default does what TensorFlow's ``SparseApply*`` kernels do: the optimizer's dense update applied
to the gradient's rows only, the other rows of the variable and of its slots left as they are.
It runs ``_apply_dense`` on `_Rows` views of the variable and its slots, which read the rows
with ``gather`` and write them with ``scatter_*``, so every optimizer's sparse rule is its dense
one and nothing else.  Adam's sparse update in TensorFlow decays every row's moments, which is
its dense update of the dense gradient, so Adam makes the gradient dense instead.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from ..autodiff.gradients import gradients
from ..framework import dtypes as _dtypes
from ..framework import nest
from ..framework.graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    _user_location,
    control_dependencies,
    convert_to_tensor,
    get_default_graph,
    register_tensor_conversion_function,
)
from ..framework.indexed_slices import IndexedSlices
from ..framework.tensor_shape import TensorShape
from ..ops.array_ops import fill as _fill
from ..ops.array_ops import gather as _gather
from ..ops.array_ops import identity as _identity
from ..ops.array_ops import shape as _shape
from ..ops.array_ops import zeros_like as _zeros_like
from ..ops.math_ops import abs as _abs
from ..ops.math_ops import (
    cast,
    greater,
    maximum,
    multiply,
    negative,
    realdiv,
    rsqrt,
    sign,
    sqrt,
    square,
    where,
)
from ..ops.math_ops import pow as _pow
from ..ops.misc_ops import group, no_op
from ..ops.misc_ops import tuple as _tuple
from ..ops.segment_ops import unique, unsorted_segment_sum
from ..ops.state_ops import scatter_add, scatter_sub, scatter_update
from ..ops.variables import Variable

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "AdamWOptimizer",
    "DecoupledWeightDecayExtension",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "MomentumWOptimizer",
    "Optimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "RMSPropOptimizer",
    "assert_global_step",
    "create_global_step",
    "extend_with_decoupled_weight_decay",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]

_VALID_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _lifted(graph: Graph):
    """Builds at the top level of control flow, outside any ``control_dependencies`` block, in
    the current name scope (TensorFlow's ``init_scope``): where optimizer state is created."""
    from primitives.contexts import building_in

    return building_in(graph, None)


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
        # slot name -> {variable: slot variable}
        self._slots: dict[str, dict[Variable, Variable]] = {}
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
        with graph.as_default():
            with _lifted(graph):
                self._create_slots(var_list)
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
            slot = self._slots.get(name, {}).get(var.variable)
            return None if slot is None else _Rows(slot, var.indices)
        return self._slots.get(name, {}).get(var)

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
        if var not in slots:
            graph = var.graph
            with graph.as_default(), _lifted(graph), graph.name_scope(None):
                if var.shape.is_fully_defined():
                    filled = np.full(
                        var.shape.as_list(), value, dtype=_dtypes.numpy_dtype(var.dtype)
                    )
                    slots[var] = Variable(
                        filled, trainable=False, name=f"{var.op.name}/{op_name}", dtype=var.dtype
                    )
                else:
                    slots[var] = Variable(
                        lambda: _fill(_shape(var.initial_value), cast(value, var.dtype)),
                        trainable=False,
                        name=f"{var.op.name}/{op_name}",
                        validate_shape=False,
                    )
        return slots[var]

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
        return self._non_slot_dict.get((name, graph or get_default_graph()))

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


class GradientDescentOptimizer(Optimizer):
    """``var -= grad * learning_rate``."""

    def __init__(self, learning_rate, use_locking: bool = False, name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor: Optional[Tensor] = None

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return var.assign_sub(multiply(grad, cast(self._learning_rate_tensor, var.dtype)))


class MomentumOptimizer(Optimizer):
    """``accum = accum * momentum + grad; var -= accum * learning_rate``; with Nesterov
    ``var -= grad * learning_rate + accum * momentum * learning_rate``.  The accumulator is
    the slot ``"momentum"`` (variable ``<var>/Momentum``).  TensorFlow's sparse update
    (``SparseApplyMomentum``) changes the gradient's rows only, where the dense one decays every
    row's accumulator."""

    def __init__(
        self,
        learning_rate,
        momentum,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov
        self._learning_rate_tensor: Optional[Tensor] = None
        self._momentum_tensor: Optional[Tensor] = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._momentum_tensor = _hyperparameter(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        lr = cast(self._learning_rate_tensor, var.dtype)
        momentum = cast(self._momentum_tensor, var.dtype)
        new_accum = accum.assign(accum.read_value() * momentum + grad)
        if self._use_nesterov:
            step = grad * lr + new_accum * momentum * lr
        else:
            step = new_accum * lr
        return var.assign_sub(step)


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba, 2015) in TensorFlow's form, with ``t`` the step number:

    ``lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``m += (g - m) * (1 - beta1)``, ``v += (g^2 - v) * (1 - beta2)``,
    ``var -= m * lr_t / (sqrt(v) + epsilon)``.

    The bias correction is folded into the step size, so ``epsilon`` is added to ``sqrt(v)``
    before correction (the paper's "epsilon hat").  ``beta1^t`` and ``beta2^t`` are the
    non-slot variables ``beta1_power`` and ``beta2_power`` (float32 for Python-number betas,
    cast to each variable's dtype), multiplied by the betas after every step.  The moments are
    the slots ``"m"`` and ``"v"`` (variables ``<var>/Adam`` and ``<var>/Adam_1``).  TensorFlow's
    sparse update decays every row's moments too and adds the gradient's rows; only contrib's
    ``LazyAdamOptimizer`` leaves the other rows alone.
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-08,
        use_locking: bool = False,
        name: str = "Adam",
        use_own_namescope_for_non_slot_vars: bool = False,
    ):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _get_beta_accumulators(self) -> tuple[Variable, Variable]:
        graph = get_default_graph()
        return (
            self._get_non_slot_variable("beta1_power", graph),
            self._get_non_slot_variable("beta2_power", graph),
        )

    def _prepare(self):
        self._lr_t = _hyperparameter(self._lr, "learning_rate")
        self._beta1_t = _hyperparameter(self._beta1, "beta1")
        self._beta2_t = _hyperparameter(self._beta2, "beta2")
        self._epsilon_t = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        dtype = var.dtype
        beta1_power, beta2_power = (
            cast(p.read_value(), dtype) for p in self._get_beta_accumulators()
        )
        lr, epsilon = cast(self._lr_t, dtype), cast(self._epsilon_t, dtype)
        beta1, beta2 = cast(self._beta1_t, dtype), cast(self._beta2_t, dtype)
        alpha = realdiv(multiply(lr, sqrt(1 - beta2_power)), 1 - beta1_power)
        m_read, v_read = m.read_value(), v.read_value()
        new_m = m.assign(m_read + (grad - m_read) * (1 - beta1))
        new_v = v.assign(v_read + (square(grad) - v_read) * (1 - beta2))
        return var.assign_sub(realdiv(multiply(new_m, alpha), sqrt(new_v) + epsilon))

    def _apply_sparse(self, grad, var):
        return self._apply_dense(convert_to_tensor(grad), var)  # see the class docstring

    def _finish(self, update_ops, name_scope):
        with control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(beta1_power.read_value() * self._beta1_t)
            update_beta2 = beta2_power.assign(beta2_power.read_value() * self._beta2_t)
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)


class RMSPropOptimizer(Optimizer):
    """RMSProp (Hinton's lecture 6e) in TensorFlow's form, with ``rho = decay``:

    ``ms += (grad^2 - ms) * (1 - rho)``,
    ``mom = mom * momentum + grad * learning_rate / sqrt(ms + epsilon)``, ``var -= mom``.

    With ``centered=True`` the mean gradient ``mg += (grad - mg) * (1 - rho)`` is tracked too
    and ``ms + epsilon`` becomes ``ms - mg^2 + epsilon`` (an estimate of the variance).  Slots,
    made in this order as TensorFlow does: ``"rms"`` (starts at ones, ``<var>/RMSProp``),
    ``"mg"`` when centered, and ``"momentum"`` (the next ``<var>/RMSProp_<n>``).  As in
    TensorFlow's dense kernel, every element is updated on every step, even where its gradient
    is zero; its sparse kernel updates the gradient's rows only.
    """

    def __init__(
        self,
        learning_rate,
        decay=0.9,
        momentum=0.0,
        epsilon=1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay = learning_rate, decay
        self._momentum, self._epsilon = momentum, epsilon
        self._centered = centered
        self._learning_rate_tensor = self._decay_tensor = None
        self._momentum_tensor = self._epsilon_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "rms", self._name, 1)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._decay_tensor = _hyperparameter(self._decay, "decay")
        self._momentum_tensor = _hyperparameter(self._momentum, "momentum")
        self._epsilon_tensor = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, rho = cast(self._learning_rate_tensor, dtype), cast(self._decay_tensor, dtype)
        momentum, epsilon = cast(self._momentum_tensor, dtype), cast(self._epsilon_tensor, dtype)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        rms_read = rms.read_value()
        new_rms = rms.assign(rms_read + (square(grad) - rms_read) * (1 - rho))
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_read = mg.read_value()
            new_mg = mg.assign(mg_read + (grad - mg_read) * (1 - rho))
            denominator = new_rms - square(new_mg) + epsilon
        else:
            denominator = new_rms + epsilon
        new_mom = mom.assign(mom.read_value() * momentum + grad * lr / sqrt(denominator))
        return var.assign_sub(new_mom)


class AdagradOptimizer(Optimizer):
    """Adagrad (Duchi et al., 2011): ``accum += grad^2; var -= grad * learning_rate /
    sqrt(accum)``.  The accumulator is the slot ``"accumulator"`` (``<var>/Adagrad``), which
    starts at ``initial_accumulator_value`` (positive, so the first step divides by no zero).
    """

    def __init__(
        self,
        learning_rate,
        initial_accumulator_value=0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "accumulator", self._name, self._initial_accumulator_value)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accumulator")
        new_accum = accum.assign_add(square(grad))
        lr = cast(self._learning_rate_tensor, var.dtype)
        return var.assign_sub(grad * lr * rsqrt(new_accum))


class AdagradDAOptimizer(Optimizer):
    """Adagrad Dual Averaging (Duchi et al., 2011), for sparse linear models: the variable is
    recomputed from the sums of the gradients and of their squares at every step ``t``
    (``global_step + 1``):

    ``g_acc += grad``, ``gg_acc += grad^2``,
    ``var = -lr * g_acc / (l2 * t * lr + sqrt(gg_acc))``, or with ``l1 > 0``
    ``var = sign(-g_acc) * max(|g_acc| - l1 * t, 0) * lr / (l2 * t * lr + sqrt(gg_acc))``.

    Slots ``"gradient_accumulator"`` (``<var>/AdagradDA``, starting at zero) and
    ``"gradient_squared_accumulator"`` (``<var>/AdagradDA_1``, starting at
    ``initial_gradient_squared_accumulator_value``, which must be positive).  ``global_step``
    is the step variable ``minimize`` increments (it must be given).
    """

    def __init__(
        self,
        learning_rate,
        global_step,
        initial_gradient_squared_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value
        )
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._learning_rate_tensor = None
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._filled_slot(
                v,
                "gradient_squared_accumulator",
                self._name + "_1",
                self._initial_gradient_squared_accumulator_value,
            )

    def _prepare(self):
        if self._global_step is None:
            raise ValueError("AdagradDAOptimizer needs its global_step (got None)")
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        step = self._global_step
        step = step.value() if isinstance(step, Variable) else convert_to_tensor(step)
        self._global_step_on_worker = _identity(step) + 1

    def _apply_dense(self, grad, var):
        g_acc = self.get_slot(var, "gradient_accumulator")
        gg_acc = self.get_slot(var, "gradient_squared_accumulator")
        dtype = var.dtype.base_dtype
        new_g_acc = g_acc.assign_add(grad)
        new_gg_acc = gg_acc.assign_add(square(grad))
        lr = cast(self._learning_rate_tensor, dtype)
        step = cast(self._global_step_on_worker, dtype)
        l1 = cast(self._l1_regularization_strength, dtype)
        l2 = cast(self._l2_regularization_strength, dtype)
        denominator = l2 * step * lr + sqrt(new_gg_acc)
        shrunk = where(
            greater(l1, 0),
            sign(negative(new_g_acc)) * maximum(_abs(new_g_acc) - l1 * step, 0),
            negative(new_g_acc),
        )
        return var.assign(shrunk * lr / denominator)


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler, 2012), whose step size is the ratio of two running root mean squares:

    ``accum = accum * rho + grad^2 * (1 - rho)``,
    ``update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad``,
    ``var -= update * learning_rate``,
    ``accum_update = accum_update * rho + update^2 * (1 - rho)``.

    ``learning_rate=1.0`` is the paper's form.  Slots ``"accum"`` (``<var>/Adadelta``) and
    ``"accum_update"`` (``<var>/Adadelta_1``), both starting at zero.
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.95,
        epsilon=1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon
        self._lr_t = self._rho_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = _hyperparameter(self._lr, "lr")
        self._rho_t = _hyperparameter(self._rho, "rho")
        self._epsilon_t = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, rho = cast(self._lr_t, dtype), cast(self._rho_t, dtype)
        epsilon = cast(self._epsilon_t, dtype)
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        new_accum = accum.assign(accum.read_value() * rho + square(grad) * (1 - rho))
        accum_update_read = accum_update.read_value()
        update = sqrt(accum_update_read + epsilon) * rsqrt(new_accum + epsilon) * grad
        new_var = var.assign_sub(update * lr)
        new_accum_update = accum_update.assign(accum_update_read * rho + square(update) * (1 - rho))
        return group(new_var, new_accum_update)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), as TensorFlow's ``ApplyFtrl``/``ApplyFtrlV2``:

    ``g = grad + 2 * l2_shrinkage * var``; ``new_accum = accum + grad^2``;
    ``linear += g - (new_accum^p - accum^p) / learning_rate * var`` with
    ``p = -learning_rate_power``;
    ``var = (l1 * sign(linear) - linear) / (new_accum^p / learning_rate + 2 * l2)`` where
    ``|linear| > l1``, else 0; ``accum = new_accum``.

    ``l2`` is ``l2_regularization_strength + beta / (2 * learning_rate)``, computed once per
    ``apply_gradients`` in the learning rate's dtype, as TensorFlow does.  The power is taken
    with ``sqrt`` for the default ``learning_rate_power=-0.5``, so the numbers match
    TensorFlow's special case.  Slots ``"accum"`` (starts at ``initial_accumulator_value``,
    named ``<var>/<accum_name or name>``) and ``"linear"`` (zeros, ``<var>/<linear_name or
    name>``, made unique: ``Ftrl_1``).

    TensorFlow's sparse update applies the shrinkage to the gradient's rows only; with dense
    gradients every element shrinks on every step.
    """

    def __init__(
        self,
        learning_rate,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name=None,
        linear_name=None,
        l2_shrinkage_regularization_strength=0.0,
        beta=None,
    ):
        super().__init__(use_locking, name)
        for what, value in (
            ("initial_accumulator_value", initial_accumulator_value),
            ("l1_regularization_strength", l1_regularization_strength),
            ("l2_regularization_strength", l2_regularization_strength),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength),
        ):
            if value < 0.0:
                raise ValueError(f"{what} {value:f} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(
                f"learning_rate_power {learning_rate_power:f} needs to be negative or zero"
            )
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._accum_name, self._linear_name = accum_name, linear_name
        self._learning_rate_tensor = self._l1_tensor = self._adjusted_l2_tensor = None
        self._l2_shrinkage_tensor = self._learning_rate_power_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(
                v, "accum", self._accum_name or self._name, self._initial_accumulator_value
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        learning_rate = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = _hyperparameter(learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        floor = maximum(learning_rate, 1e-36)
        self._adjusted_l2_tensor = convert_to_tensor(
            self._l2 + self._beta / (2.0 * floor), name="adjusted_l2_regularization_strength"
        )
        self._l2_shrinkage_tensor = _hyperparameter(
            self._l2_shrinkage, "l2_shrinkage_regularization_strength"
        )
        self._learning_rate_power_tensor = _hyperparameter(
            self._learning_rate_power, "learning_rate_power"
        )

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._adjusted_l2_tensor, dtype)
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        var_read, accum_read = var.read_value(), accum.read_value()
        if self._l2_shrinkage > 0.0:
            shrinkage = cast(self._l2_shrinkage_tensor, dtype)
            grad_with_shrinkage = grad + 2 * shrinkage * var_read
        else:
            grad_with_shrinkage = grad
        new_accum = accum_read + square(grad)
        if self._learning_rate_power == -0.5:
            new_root, old_root = sqrt(new_accum), sqrt(accum_read)
        else:
            power = negative(cast(self._learning_rate_power_tensor, dtype))
            new_root, old_root = _pow(new_accum, power), _pow(accum_read, power)
        new_linear = linear.assign_add(grad_with_shrinkage - (new_root - old_root) / lr * var_read)
        numerator = l1 * sign(new_linear) - new_linear
        denominator = new_root / lr + 2 * l2
        shrunk_to_zero = greater(_abs(new_linear), l1)
        new_var = var.assign(where(shrunk_to_zero, numerator / denominator, _zeros_like(var_read)))
        with control_dependencies([new_var]):
            return accum.assign(new_accum)


def _shrink(prox_var: Tensor, threshold: Tensor, l1: Tensor, l2_step: Tensor) -> Tensor:
    """FOBOS's proximal step (TensorFlow's ``ApplyProximal*`` kernels): ``prox_var`` moved
    ``threshold`` towards zero (stopping at zero) when ``l1 > 0``, then divided by
    ``1 + l2_step``."""
    shrunk = sign(prox_var) * maximum(_abs(prox_var) - threshold, cast(0, prox_var.dtype))
    return where(greater(l1, 0), shrunk, prox_var) / (1 + l2_step)


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent followed by the proximal step of l1 and l2 regularization (FOBOS,
    Duchi and Singer, 2009): ``v = var - grad * learning_rate``, then
    ``var = sign(v) * max(|v| - learning_rate * l1, 0) / (1 + learning_rate * l2)``.  No slots.
    """

    def __init__(
        self,
        learning_rate,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._learning_rate_tensor = self._l1_tensor = self._l2_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        self._l2_tensor = _hyperparameter(self._l2, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._l2_tensor, dtype)
        prox_var = var.read_value() - grad * lr
        return var.assign(_shrink(prox_var, lr * l1, l1, l2 * lr))


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's step followed by the proximal step of l1 and l2 regularization, with the
    per-element rate ``lr = learning_rate / sqrt(accum)``: ``accum += grad^2``,
    ``v = var - grad * lr``, ``var = sign(v) * max(|v| - lr * l1, 0) / (1 + l2 * lr)``.  The
    accumulator is the slot ``"accumulator"`` (``<var>/ProximalAdagrad``), starting at
    ``initial_accumulator_value``.  The dense update shrinks every element on every step;
    TensorFlow's sparse one shrinks the gradient's rows only (so does ProximalGradientDescent's).
    """

    def __init__(
        self,
        learning_rate,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._learning_rate_tensor = self._l1_tensor = self._l2_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "accumulator", self._name, self._initial_accumulator_value)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        self._l2_tensor = _hyperparameter(self._l2, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._l2_tensor, dtype)
        new_accum = self.get_slot(var, "accumulator").assign_add(square(grad))
        element_rate = lr * rsqrt(new_accum)
        prox_var = var.read_value() - grad * element_rate
        return var.assign(_shrink(prox_var, element_rate * l1, l1, l2 * element_rate))


class DecoupledWeightDecayExtension:
    """Adds decoupled weight decay to an optimizer: each step first decays each variable,
    ``var -= weight_decay * var``, then applies the optimizer's own update (Loshchilov and
    Hutter, "Decoupled Weight Decay Regularization", 2019).  Unlike an l2 term in the loss, the
    decay does not pass through the optimizer's scaling (Adam's ``1 / sqrt(v)``).

    TensorFlow 1.x had this in ``tf.contrib.opt`` (``DecoupledWeightDecayExtension``,
    ``extend_with_decoupled_weight_decay``, ``AdamWOptimizer``, ``MomentumWOptimizer``); it is
    here with the same arguments and numbers: ``weight_decay`` first in the constructor, and
    ``minimize``/``apply_gradients`` take ``decay_var_list`` (None: decay every variable
    updated).  A Python-number ``weight_decay`` multiplies each variable in the variable's own
    dtype (contrib wrote ``weight_decay * var``); a tensor or a callable's result is cast to it.
    The decay is a little better defined than contrib's: it waits for the variable's gradient,
    so the gradient is always taken at the undecayed value, and ``minimize`` honours its
    ``decay_var_list`` (contrib's was reset by the ``apply_gradients`` it called).

    Like contrib, the decay is applied before the update, so it is "decoupled" exactly only for
    optimizers whose update does not read the variable (not Ftrl or the proximal ones).
    """

    def __init__(self, weight_decay, *args, **kwargs):
        self._weight_decay = weight_decay
        self._weight_decay_tensor: Optional[Tensor] = None
        self._decay_var_list: Optional[set] = None
        self._minimize_decay_var_list = None
        self._decayed_rows_already = False  # set while _apply_sparse has decayed the rows
        super().__init__(*args, **kwargs)

    def minimize(
        self,
        loss: Tensor,
        global_step: Optional[Variable] = None,
        var_list=None,
        gate_gradients: int = Optimizer.GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        name: Optional[str] = None,
        grad_loss=None,
        decay_var_list=None,
    ) -> Operation:
        """`Optimizer.minimize` that decays only ``decay_var_list`` when given."""
        self._minimize_decay_var_list = decay_var_list
        try:
            return super().minimize(
                loss,
                global_step=global_step,
                var_list=var_list,
                gate_gradients=gate_gradients,
                aggregation_method=aggregation_method,
                colocate_gradients_with_ops=colocate_gradients_with_ops,
                name=name,
                grad_loss=grad_loss,
            )
        finally:
            self._minimize_decay_var_list = None

    def apply_gradients(
        self,
        grads_and_vars,
        global_step: Optional[Variable] = None,
        name: Optional[str] = None,
        decay_var_list=None,
    ) -> Operation:
        """`Optimizer.apply_gradients` that decays only ``decay_var_list`` when given."""
        if decay_var_list is None:
            decay_var_list = self._minimize_decay_var_list
        self._decay_var_list = set(decay_var_list) if decay_var_list else None
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        weight_decay = self._call_if_callable(self._weight_decay)
        if isinstance(weight_decay, (int, float, np.number)):
            self._weight_decay_tensor = None
        else:
            self._weight_decay_tensor = convert_to_tensor(weight_decay, name="weight_decay")
        super()._prepare()

    def _decay_weights_op(self, var: Variable, grad: Tensor):
        decayed = var.variable if isinstance(var, _Rows) else var
        if self._decay_var_list is not None and decayed not in self._decay_var_list:
            return no_op()
        if self._weight_decay_tensor is None:
            rate = convert_to_tensor(self._call_if_callable(self._weight_decay), dtype=var.dtype)
        else:
            rate = cast(self._weight_decay_tensor, var.dtype)
        with control_dependencies([grad]):
            return var.assign_sub(rate * var.read_value())

    def _apply_dense(self, grad, var):
        if self._decayed_rows_already:
            return super()._apply_dense(grad, var)
        with control_dependencies([self._decay_weights_op(var, grad)]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        # As contrib: a sparse gradient decays only its rows of the variable, then the
        # optimizer's own sparse update runs (Adam's touches every row).
        with control_dependencies([self._decay_weights_op(_Rows(var, grad.indices), grad.values)]):
            self._decayed_rows_already = True
            try:
                return super()._apply_sparse(grad, var)
            finally:
                self._decayed_rows_already = False


def extend_with_decoupled_weight_decay(base_optimizer: type) -> type:
    """A subclass of the optimizer class ``base_optimizer`` with decoupled weight decay (see
    `DecoupledWeightDecayExtension`), whose constructor takes ``weight_decay`` first:
    ``extend_with_decoupled_weight_decay(AdamOptimizer)(0.01, learning_rate=0.001)``."""

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        pass

    OptimizerWithDecoupledWeightDecay.__name__ = base_optimizer.__name__ + "WithWeightDecay"
    return OptimizerWithDecoupledWeightDecay


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay (``tf.contrib.opt.AdamWOptimizer``): each step
    ``var -= weight_decay * var``, then `AdamOptimizer`'s update.  Slots ``<var>/AdamW`` and
    ``<var>/AdamW_1``."""

    def __init__(
        self,
        weight_decay,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        use_locking: bool = False,
        name: str = "AdamW",
    ):
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
            use_locking=use_locking,
            name=name,
        )


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay (``tf.contrib.opt.MomentumWOptimizer``, the SGDW
    of Loshchilov and Hutter): each step ``var -= weight_decay * var``, then
    `MomentumOptimizer`'s update."""

    def __init__(
        self,
        weight_decay,
        learning_rate,
        momentum,
        use_locking: bool = False,
        name: str = "MomentumW",
        use_nesterov: bool = False,
    ):
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            momentum=momentum,
            use_locking=use_locking,
            name=name,
            use_nesterov=use_nesterov,
        )


# -- the global step -------------------------------------------------------------------------------
def global_step(sess, global_step_tensor) -> int:
    """The value of the global step in ``sess``, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """``TypeError`` unless ``global_step_tensor`` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}'
        )
    shape = global_step_tensor.shape
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph`` (default graph): the one member of the ``global_step``
    collection, else the variable or tensor named ``global_step:0``, else None.  None too when
    the collection holds several (TensorFlow logs an error then)."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        return None
    if steps:
        step = steps[0]
    else:
        named = [
            v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.name == "global_step:0"
        ]
        if named:
            step = named[0]
        else:
            try:
                step = graph.get_tensor_by_name("global_step:0")
            except KeyError:
                return None
    assert_global_step(step)
    return step


def create_global_step(graph: Optional[Graph] = None) -> Variable:
    """Creates the int64 scalar variable ``global_step`` (initial value 0, not trainable, in
    the ``global_step`` collection) at the top level of ``graph``; ``ValueError`` if ``graph``
    already has a global step."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), _lifted(graph), graph.name_scope(None):
        return Variable(
            np.int64(0),
            trainable=False,
            name="global_step",
            dtype=_dtypes.int64,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph``, created if it has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


# checkpoints
# learning-rate schedules
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
from ..ops.io_ops import match_filenames_once  # noqa: E402, F401
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

# moving averages
from .moving_averages import ExponentialMovingAverage  # noqa: E402, F401

# isort: split
# clusters and parameter servers (dataflow.distribute)
from ..distribute.cluster import ClusterSpec  # noqa: E402, F401
from ..distribute.device_setter import replica_device_setter  # noqa: E402, F401


# TensorFlow's protocol buffer messages of tf.train (tf.train.Example, SaverDef, ClusterDef,
# ...), from protobuf (the tensorboard extra), built the first time one is asked for.
def __getattr__(name: str):
    from ..framework import train_protos

    if name in train_protos.TRAIN_NAMES:
        return getattr(train_protos.messages(), name)
    raise AttributeError(f"module 'dataflow.train' has no attribute '{name}'")


def sdca_shrink_l1(weights, l1, l2, name=None):
    """The L1 shrinkage step of SDCA (``tf.train.sdca_shrink_l1``): one op that sets every
    variable of ``weights`` to ``sign(w) * max(|w| - l1 / l2, 0)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        shrinkage = np.float32(l1) / np.float32(l2)
    weights = list(weights)
    graph = weights[0].graph if weights else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "SdcaShrinkL1") as scope:
        updates = []
        for w in weights:
            value = w.value() if isinstance(w, Variable) else w
            shrunk = sign(value) * maximum(_abs(value) - shrinkage, 0)
            updates.append(w.assign(shrunk, read_value=False))
        return group(*updates, name=scope)
