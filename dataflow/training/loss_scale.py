"""Loss scaling for reduced-precision training (TF1's ``tf.train.experimental``):
`LossScale`, `FixedLossScale`, `DynamicLossScale` and `MixedPrecisionLossScaleOptimizer`,
and the switches of the mixed-precision graph rewrite.

Loss scaling multiplies the loss by a factor before the gradients are computed and divides
the gradients by it afterwards, so that small gradients in float16 do not underflow; the
values are unchanged up to rounding.  A dynamic loss scale skips the steps whose gradients hold
a nan or an infinity and halves the scale then, and doubles it after ``increment_period``
steps in a row with finite gradients.

The graph rewrite (`enable_mixed_precision_graph_rewrite`) is TensorFlow's grappler pass that
turns float32 ops into float16 ones on GPUs; TensorFlow skips it on a machine without a
suitable GPU, and dataflow runs on CPUs, so here too the switch only wraps the optimizer in a
`MixedPrecisionLossScaleOptimizer` and records that the rewrite was asked for.
"""

from __future__ import annotations

from ..framework import dtypes as _dtypes
from ..framework import nest
from ..framework.graph import get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.tensor_conversion import convert_to_tensor
from .train import Optimizer

__all__ = [
    "DynamicLossScale",
    "FixedLossScale",
    "LossScale",
    "MixedPrecisionLossScaleOptimizer",
    "disable_mixed_precision_graph_rewrite",
    "enable_mixed_precision_graph_rewrite",
]


class LossScale:
    """The base of loss scales: calling one gives the current scale (a float32 scalar tensor);
    ``update(grads)`` gives ``(update_op, should_apply_gradients)``."""

    def __init__(self):
        self._weights: dict = {}

    def __call__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")

    def update(self, grads):
        raise NotImplementedError(f"{type(self).__name__} must define update")

    def _add_weight(self, name: str, initial_value, dtype=None):
        """A variable of this loss scale (not trainable), one per graph."""
        from ..ops.variables import Variable

        graph = get_default_graph()
        key = (name, None if graph._eager else graph)
        if key in self._weights:
            raise RuntimeError(f"Duplicate variables detected. {key}")
        variable = Variable(initial_value, name=name, dtype=dtype, trainable=False)
        self._weights[key] = variable
        return variable

    def get_config(self) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must define get_config")

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class FixedLossScale(LossScale):
    """A loss scale that never changes (``loss_scale_value``, a Python number of at least 1)."""

    def __init__(self, loss_scale_value):
        super().__init__()
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return convert_to_tensor(self._loss_scale_value)

    def update(self, grads):
        from ..ops.misc_ops import no_op

        del grads
        return no_op(), True

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"

    def get_config(self) -> dict:
        return {"loss_scale_value": self._loss_scale_value}


def _is_all_finite(grads):
    from ..ops.extra_math_ops import is_finite
    from ..ops.math_ops import reduce_all

    finite = [
        reduce_all(is_finite(g.values if isinstance(g, IndexedSlices) else g))
        for g in grads
        if g is not None
    ]
    return reduce_all(finite)


class DynamicLossScale(LossScale):
    """A loss scale that starts at ``initial_loss_scale``, is multiplied by ``multiplier``
    after ``increment_period`` steps in a row with finite gradients (if the result is finite)
    and divided by it (not below 1) at a step with a nan or an infinity, whose gradients are
    then not applied.  Its state is two variables: ``current_loss_scale`` (float32) and
    ``good_steps`` (int64)."""

    def __init__(self, initial_loss_scale=2**15, increment_period=2000, multiplier=2.0):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight(
            "current_loss_scale", self._initial_loss_scale, _dtypes.float32
        )
        self._num_good_steps = self._add_weight("good_steps", 0, _dtypes.int64)

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self):
        return self._current_loss_scale.value()

    def update(self, grads):
        from primitives.control_flow_ops import cond

        from ..ops.extra_math_ops import is_finite
        from ..ops.math_ops import greater_equal, maximum
        from ..ops.misc_ops import group, no_op

        finite = _is_all_finite(nest.flatten(grads))
        scale, good = self._current_loss_scale, self._num_good_steps

        def assign_if_finite(value):
            return cond(is_finite(value), lambda: scale.assign(value).op, no_op)

        def update_if_finite_grads():
            def increment_loss_scale():
                return group(assign_if_finite(scale * self._multiplier), good.assign(0))

            return cond(
                greater_equal(good + 1, self._increment_period),
                increment_loss_scale,
                lambda: good.assign_add(1).op,
            )

        def update_if_not_finite_grads():
            return group(good.assign(0), scale.assign(maximum(scale / self._multiplier, 1.0)))

        update_op = cond(finite, update_if_finite_grads, update_if_not_finite_grads)
        return update_op, finite

    def __repr__(self) -> str:
        return (
            f"DynamicLossScale(initial_loss_scale={self.initial_loss_scale}, "
            f"increment_period={self.increment_period}, multiplier={self.multiplier})"
        )

    def get_config(self) -> dict:
        return {
            "initial_loss_scale": self.initial_loss_scale,
            "increment_period": self.increment_period,
            "multiplier": self.multiplier,
        }


def get(identifier):
    """A `LossScale` from a number (fixed), ``"dynamic"``, a `LossScale` or None."""
    if isinstance(identifier, (int, float)) and not isinstance(identifier, bool):
        return FixedLossScale(identifier)
    if isinstance(identifier, str) and identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale) or identifier is None:
        return identifier
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps the optimizer ``opt`` with loss scaling by ``loss_scale`` (a `LossScale`, a
    number or ``"dynamic"``): `compute_gradients` scales the loss up and the gradients back
    down; with a dynamic loss scale `apply_gradients` applies them (and increments
    ``global_step``) only when all are finite, and updates the scale."""

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        self._optimizer = opt
        super().__init__(opt._use_locking, opt.get_name())
        self._loss_scale = get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def _doing_dynamic_loss_scaling(self) -> bool:
        return isinstance(self._loss_scale, DynamicLossScale)

    def compute_gradients(
        self,
        loss,
        var_list=None,
        gate_gradients=1,
        aggregation_method=None,
        colocate_gradients_with_ops=False,
        grad_loss=None,
    ):
        loss = self._scale_loss(loss)
        grads_and_vars = self._optimizer.compute_gradients(
            loss=loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        grads = [g for g, _ in grads_and_vars]
        variables = [v for _, v in grads_and_vars]
        return list(zip(self._unscale_grads(grads), variables))

    def _scale_loss(self, loss):
        from ..ops.math_ops import cast

        loss_scale = self._loss_scale()
        if callable(loss):

            def scaled():
                value = loss()
                return value * cast(loss_scale, value.dtype)

            return scaled
        return loss * cast(loss_scale, loss.dtype)

    def _unscale_grads(self, grads):
        reciprocal = 1 / self._loss_scale()
        return [None if g is None else self._scale_grad(g, reciprocal) for g in grads]

    @staticmethod
    def _scale_grad(grad, reciprocal):
        from ..ops.math_ops import cast

        if isinstance(grad, IndexedSlices):
            values = grad.values * cast(reciprocal, grad.values.dtype)
            return IndexedSlices(values, grad.indices, grad.dense_shape)
        return grad * cast(reciprocal, grad.dtype)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if not self._doing_dynamic_loss_scaling():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        from primitives.control_flow_ops import cond

        from ..ops.misc_ops import group, no_op

        grads_and_vars = tuple(grads_and_vars)
        name = name if name is not None else self.get_name()
        grads = [g for g, _ in grads_and_vars]
        update_op, should_apply = self._loss_scale.update(grads)
        # The wrapped optimizer's slots are made here, outside the cond that applies it.
        self._optimizer._create_slots([v for g, v in grads_and_vars if g is not None])

        def apply_fn():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name + "-wrapped")

        maybe_apply = cond(should_apply, apply_fn, no_op)
        return group(maybe_apply, update_op, name=name)

    def _apply_sparse(self, grad, var):
        raise RuntimeError("This function should never be called")

    def _apply_dense(self, grad, var):
        raise RuntimeError("This function should never be called")

    def variables(self):
        return self._optimizer.variables() + list(self._loss_scale._weights.values())


# Whether the graph rewrite was asked for (TensorFlow's mixed_precision_global_state).
_graph_rewrite_enabled = False


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """``opt`` wrapped in a `MixedPrecisionLossScaleOptimizer` with ``loss_scale``, the
    rewrite recorded as enabled (on CPUs TensorFlow's rewrite changes no op; see the module
    docstring).  An optimizer already wrapped is a ``ValueError``, as in TensorFlow."""
    global _graph_rewrite_enabled
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError(
            '"opt" must not already be an instance of a MixedPrecisionLossScaleOptimizer. '
            "`enable_mixed_precision_graph_rewrite` will automatically wrap the optimizer "
            "with a MixedPrecisionLossScaleOptimizer."
        )
    opt = MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    _graph_rewrite_enabled = True
    return opt


def disable_mixed_precision_graph_rewrite() -> None:
    """Records the rewrite as disabled (optimizers already wrapped stay wrapped)."""
    global _graph_rewrite_enabled
    _graph_rewrite_enabled = False
