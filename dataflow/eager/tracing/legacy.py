"""TensorFlow 1's names for traced functions: ``Defun`` and ``wrap_function``, on `Function`.

Both trace without automatic control dependencies, as TensorFlow's do: in graph mode their ops
are pruned like any others, so a print the outputs do not need does not run.  A ``Defun``
called in a graph is one call op (`defun_call`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from ...framework.tensor_spec import TensorSpec
from .defun_call import DefunFunction
from .tracing import ConcreteFunction, Function


def Defun(*input_types, func_name: Optional[str] = None, **unused_kwargs):  # noqa: N802
    """TensorFlow 1's graph-function decorator: ``@Defun(df.float32)`` declares one tensor
    argument per dtype (any shape).  Calling the result with tensors while a graph is built
    adds one ``PartitionedCall`` op whose gradient is the function's own gradient, one op too
    (`defun_call`; a body with effects is built inline instead).  ``grad_func``,
    ``python_grad_func``, ``out_names`` and other options of TensorFlow's are accepted and
    ignored."""

    def decorate(python_function: Callable) -> Function:
        signature = [TensorSpec(None, dtype) for dtype in input_types]
        function_class = DefunFunction if input_types else Function
        return function_class(
            python_function,
            input_signature=signature if input_types else None,
            autograph=False,
            name=func_name,
            automatic_control_dependencies=False,
        )

    return decorate


def wrap_function(fn: Callable, signature, name: Optional[str] = None) -> ConcreteFunction:
    """``tf.compat.v1.wrap_function``: traces a TF1-style ``fn`` once for ``signature`` (a list
    of `TensorSpec`) and returns that trace, callable like any `ConcreteFunction`."""
    function = Function(
        fn,
        input_signature=signature,
        autograph=False,
        name=name,
        automatic_control_dependencies=False,
    )
    return function.get_concrete_function()


__all__ = ["Defun", "wrap_function"]
