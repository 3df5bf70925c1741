"""TensorFlow 1.x's old names and the switches of TensorFlow 2's ``tf.compat.v1``.

Programs written for TensorFlow 1.x call ``tf.arg_max``; programs ported to TensorFlow 2 start
with ``tf.disable_v2_behavior()`` or ``tf.compat.v1.disable_eager_execution()``.  Here graph
mode is the default (eager mode is opted into with ``enable_eager_execution`` or
``with eager_mode():``), so the switches that ask for TensorFlow 1.x's graph mode have nothing
to switch at program start and are accepted as they are; the shape switch
(`dataflow.framework.tensor_shape`) switches for real.
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import get_collection, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import disable_v2_tensorshape, enable_v2_tensorshape
from ..ops.array_ops import concat, expand_dims, reshape, shape, stack
from ..ops.array_ops import range as _range
from ..ops.gather_ops import gather
from ..ops.math_ops import argmax, argmin, cast, maximum, minimum, reduce_prod
from ..ops.misc_ops import group, no_op
from ..ops.variable_scope import variable_scope
from ..ops.variables import global_variables, local_variables_initializer, variables_initializer


def arg_max(input, dimension, output_type=_dtypes.int64, name: Optional[str] = None):  # noqa: A002
    """``argmax`` under its TensorFlow 1.x name (the axis is called ``dimension``)."""
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=_dtypes.int64, name: Optional[str] = None):  # noqa: A002
    """``argmin`` under its TensorFlow 1.x name (the axis is called ``dimension``)."""
    return argmin(input, dimension, name=name, output_type=output_type)


def disable_v2_behavior() -> None:
    """TensorFlow 1.x behaviour, the default: graph mode, and shapes whose items are
    `Dimension` objects (`disable_v2_tensorshape`)."""
    disable_v2_tensorshape()


def enable_v2_behavior() -> None:
    """TensorFlow 2's behaviour: eager execution (`dataflow.eager.enable_eager_execution`, at
    program start) and shapes whose items are plain integers (`enable_v2_tensorshape`)."""
    from ..eager.context import enable_eager_execution

    enable_eager_execution()
    enable_v2_tensorshape()


def disable_eager_execution() -> None:
    """Accepted: graph mode is already the default here.  Eager mode is on only where a
    program asks for it (``enable_eager_execution``, ``with eager_mode():``), which TF1
    programs that call this at start-up do not."""


# -- TensorFlow 1.x's deprecated spellings of what has another name now ----------------------------
def all_variables() -> list:
    """``global_variables()`` under its TensorFlow 1.0 name."""
    return global_variables()


def initialize_variables(var_list, name: str = "init"):
    """``variables_initializer`` under its TensorFlow 1.0 name."""
    return variables_initializer(var_list, name=name)


def initialize_local_variables():
    """``local_variables_initializer()`` under its TensorFlow 1.0 name."""
    return local_variables_initializer()


def op_scope(values, name, default_name=None):
    """``name_scope(name, default_name, values)`` with TensorFlow 0.x's argument order."""
    return name_scope(name, default_name, values)


def variable_op_scope(
    values,
    name_or_scope,
    default_name=None,
    initializer=None,
    regularizer=None,
    caching_device=None,
    partitioner=None,
    custom_getter=None,
    reuse=None,
    dtype=None,
    use_resource=None,
    constraint=None,
):
    """``variable_scope`` with TensorFlow 0.x's argument order (``values`` first)."""
    return variable_scope(
        name_or_scope,
        default_name,
        values,
        initializer=initializer,
        regularizer=regularizer,
        caching_device=caching_device,
        partitioner=partitioner,
        custom_getter=custom_getter,
        reuse=reuse,
        dtype=dtype,
        use_resource=use_resource,
        constraint=constraint,
    )


def no_gradient(op_type: str) -> None:
    """Declares that ops of ``op_type`` have no gradient (``NotDifferentiable``)."""
    NotDifferentiable(op_type)


NoGradient = no_gradient


def tables_initializer(name: str = "init_all_tables"):
    """One op that runs every initializer in ``GraphKeys.TABLE_INITIALIZERS`` (a ``no_op``
    when there is none, as in TensorFlow)."""
    initializers = get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(*initializers, name=name) if initializers else no_op(name=name)


initialize_all_tables = tables_initializer


def batch_gather(params, indices, name: Optional[str] = None):
    """``gather`` along the axis after the batch axes, which are all of ``indices``' axes but
    the last: ``result[b..., j] = params[b..., indices[b..., j]]``."""
    with name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.rank
        if rank is None:
            raise ValueError(
                f"batch_gather needs indices of known rank, got {indices.name} of shape "
                f"{indices.shape}"
            )
        params = convert_to_tensor(params, name="params")
        if rank <= 1:
            return gather(params, indices)
        # The batch axes made one: row b of the flat params starts at b * width.
        params_shape, indices_shape = shape(params), shape(indices)
        batch = reduce_prod(indices_shape[:-1])
        width = params_shape[rank - 1]
        flat_params = reshape(params, concat([[batch * width], params_shape[rank:]], 0))
        offsets = expand_dims(_range(batch) * cast(width, indices.dtype), 1)
        flat_indices = reshape(indices, stack([batch, -1])) + offsets
        result = gather(flat_params, flat_indices)
        return reshape(result, concat([indices_shape, params_shape[rank:]], 0))


def saturate_cast(value, dtype, name: Optional[str] = None):
    """``value`` cast to ``dtype``, first clipped to the range ``dtype`` holds (where the
    value's own type reaches beyond it), so that nothing wraps around."""
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        if value.dtype.min < dtype.min:
            value = maximum(value, convert_to_tensor(dtype.min, dtype=value.dtype, name="min"))
        if value.dtype.max > dtype.max:
            value = minimum(value, convert_to_tensor(dtype.max, dtype=value.dtype, name="max"))
        return cast(value, dtype, name=scope)
