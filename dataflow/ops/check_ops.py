"""Checks: ``assert_equal`` and its relatives, rank and type assertions, ``check_numerics``
and ``add_check_numerics_ops`` (``tf.compat.v1``'s names, and ``df.debugging``'s).

As in TF1, a check whose answer is known when the graph is built (constant values, static
ranks and dtypes) raises at once, naming the caller's line; otherwise it is an ``Assert`` op
(or a ``CheckNumerics`` op) that fails the run with ``InvalidArgumentError``, and that the
caller makes a control dependency of what it guards.  A passing value check still returns its
``Assert`` op; a rank, type or integer check that passes statically returns a ``NoOp``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import (
    Tensor,
    _user_location,
    control_dependencies,
    get_default_graph,
    graph_to_build_in,
    name_scope,
)
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from . import array_ops as _a
from . import math_ops as _m
from .math_ops import FLOAT_TYPES, INT_TYPES, NUMERIC_TYPES, check_dtype, graph_of
from .misc_ops import Assert, group, no_op

__all__ = [
    "add_check_numerics_ops",
    "assert_near",
    "assert_proper_iterable",
    "assert_rank_in",
    "assert_same_float_dtype",
    "is_numeric_tensor",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_scalar",
    "assert_type",
    "check_numerics",
    "verify_tensor_all_finite",
]


def _static_failure(function: str, lines: list) -> InvalidArgumentError:
    return InvalidArgumentError(
        None, None, f"{function} at {_user_location()}: " + "\n".join(lines)
    )


def _binary_assert(
    function: str, symbol: str, test, x, y, data, summarize, message, name
) -> object:
    """The check ``test(x, y)`` for every element (with broadcasting)."""
    graph = graph_of((x, y))
    with graph.as_default(), graph.name_scope(name or function):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        if data is None:
            data = [
                f"Condition x {symbol} y did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
            if message is not None:
                data = [message] + data
        elif message is not None:
            data = [message] + list(data)
        x_value, y_value = numpy_value_or_none(x), numpy_value_or_none(y)
        if x_value is not None and y_value is not None:
            holds = np.all(_NUMPY_TESTS[test](x_value, y_value))
            if not holds:
                raise _static_failure(
                    function,
                    [d if isinstance(d, str) else str(numpy_value_or_none(d)) for d in data],
                )
        condition = _m.reduce_all(test(x, y))
        return Assert(condition, data, summarize=summarize)


_NUMPY_TESTS = {
    _m.equal: np.equal,
    _m.not_equal: np.not_equal,
    _m.less: np.less,
    _m.less_equal: np.less_equal,
    _m.greater: np.greater,
    _m.greater_equal: np.greater_equal,
}


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x == y`` elementwise."""
    return _binary_assert("assert_equal", "==", _m.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x != y`` elementwise."""
    return _binary_assert(
        "assert_none_equal", "!=", _m.not_equal, x, y, data, summarize, message, name
    )


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x < y`` elementwise."""
    return _binary_assert("assert_less", "<", _m.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x <= y`` elementwise."""
    return _binary_assert(
        "assert_less_equal", "<=", _m.less_equal, x, y, data, summarize, message, name
    )


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x > y`` elementwise."""
    return _binary_assert("assert_greater", ">", _m.greater, x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x >= y`` elementwise."""
    return _binary_assert(
        "assert_greater_equal", ">=", _m.greater_equal, x, y, data, summarize, message, name
    )


def _sign_assert(function, symbol, test, zero_first, x, data, summarize, message, name):
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or function):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [f"Condition x {symbol} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(np.zeros((), x.dtype.as_numpy_dtype))
        first, second = (zero, x) if zero_first else (x, zero)
        inner = "assert_less" if test is _m.less else "assert_less_equal"  # TF1's scopes
        return _binary_assert(
            function, symbol, test, first, second, data, summarize, message, inner
        )


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x > 0`` elementwise."""
    return _sign_assert("assert_positive", ">", _m.less, True, x, data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x < 0`` elementwise."""
    return _sign_assert("assert_negative", "<", _m.less, False, x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x >= 0`` elementwise."""
    return _sign_assert(
        "assert_non_negative", ">=", _m.less_equal, True, x, data, summarize, message, name
    )


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x <= 0`` elementwise."""
    return _sign_assert(
        "assert_non_positive", "<=", _m.less_equal, False, x, data, summarize, message, name
    )


def _rank_assert(function, x, rank, at_least: bool, message, name):
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or function):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, dtype=_dtypes.int32, name="rank")
        wanted = numpy_value_or_none(rank)
        if wanted is None:
            raise ValueError(f"{function} at {_user_location()}: rank must be known statically")
        wanted = int(wanted)
        prefix = f"{message}  " if message else ""
        relation = "at least " if at_least else ""
        if x.shape.ndims is not None:
            ok = x.shape.ndims >= wanted if at_least else x.shape.ndims == wanted
            if not ok:
                raise ValueError(
                    f"{function} at {_user_location()}: {prefix}Tensor {x.name} must have rank "
                    f"{relation}{wanted}.  Received rank {x.shape.ndims}, shape {x.shape}"
                )
            return no_op(name="static_checks_determined_all_ok")
        actual = _a.rank(x)
        test = _m.greater_equal if at_least else _m.equal
        data = [f"{prefix}Tensor {x.name} must have rank {relation}", rank, "Received shape: ",
                _a.shape(x)]  # fmt: skip
        return Assert(test(actual, rank), data)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Asserts that ``x`` has rank ``rank``: a ``ValueError`` now when its rank is known."""
    return _rank_assert("assert_rank", x, rank, False, message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Asserts that ``x`` has rank ``rank`` or more: a ``ValueError`` now when its rank is
    known."""
    return _rank_assert("assert_rank_at_least", x, rank, True, message, name)


def assert_type(tensor, tf_type, message=None, name=None):
    """Raises ``TypeError`` now unless ``tensor`` has dtype ``tf_type`` (dtypes are static)."""
    tensor = convert_to_tensor(tensor, name="tensor")
    tf_type = _dtypes.as_dtype(tf_type)
    if tensor.dtype is not tf_type:
        prefix = f"{message}  " if message else ""
        raise TypeError(
            f"assert_type at {_user_location()}: {prefix}{tensor.name} must be of type "
            f"{tf_type.name}; got {tensor.dtype.name}"
        )
    with graph_to_build_in(tensor.graph).as_default(), name_scope(name or "assert_type"):
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """Raises ``TypeError`` now unless ``x`` has an integer dtype."""
    x = convert_to_tensor(x, name="x")
    if x.dtype not in INT_TYPES:
        prefix = f"{message}  " if message else ""
        raise TypeError(
            f'assert_integer at {_user_location()}: {prefix}Expected "x" to be integer type.  '
            f"Found: {x.name} of dtype {x.dtype.name}"
        )
    with graph_to_build_in(x.graph).as_default(), name_scope(name or "assert_integer"):
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None) -> Tensor:
    """``tensor`` itself, after a ``ValueError`` if its static rank is known and not 0."""
    tensor = convert_to_tensor(tensor, name=name or "tensor")
    if tensor.shape.ndims is not None and tensor.shape.ndims != 0:
        prefix = f"{message}  " if message else ""
        raise ValueError(
            f"assert_scalar at {_user_location()}: {prefix}Expected scalar shape for "
            f"{tensor.name}, saw shape: {tensor.shape}."
        )
    return tensor


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """Asserts ``|x - y| <= atol + rtol * |y|`` elementwise; the tolerances default to 10
    machine epsilons of the dtype, as in TensorFlow."""
    graph = graph_of((x, y))
    with graph.as_default(), graph.name_scope(name or "assert_near"):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        check_dtype(x.dtype, FLOAT_TYPES, f"assert_near's input {x.name}")
        eps = float(np.finfo(_dtypes.numpy_dtype(x.dtype)).eps)
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, dtype=x.dtype, name="rtol")
        atol = convert_to_tensor(10 * eps if atol is None else atol, dtype=x.dtype, name="atol")
        if data is None:
            data = [
                "x and y not equal to tolerance rtol = ",
                rtol,
                ", atol = ",
                atol,
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        if message is not None:
            data = [message] + list(data)
        tolerance = _m.add(atol, _m.multiply(rtol, _m.abs(y)))
        difference = _m.abs(_m.subtract(x, y))
        known = [numpy_value_or_none(t) for t in (x, y, rtol, atol)]
        if all(v is not None for v in known) and not np.all(
            np.abs(known[0] - known[1]) <= known[3] + known[2] * np.abs(known[1])
        ):
            raise _static_failure(
                "assert_near",
                [d if isinstance(d, str) else str(numpy_value_or_none(d)) for d in data],
            )
        condition = _m.reduce_all(_m.less_equal(difference, tolerance))
        return Assert(condition, data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Asserts that the rank of ``x`` is one of ``ranks``: a ``ValueError`` now when its rank
    is known."""
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "assert_rank_in"):
        x = convert_to_tensor(x, name="x")
        wanted = [int(r) for r in ranks]
        prefix = f"{message}  " if message else ""
        if x.shape.ndims is not None:
            if x.shape.ndims not in wanted:
                raise ValueError(
                    f"assert_rank_in at {_user_location()}: {prefix}Tensor {x.name} must have "
                    f"rank in {tuple(wanted)}.  Received rank {x.shape.ndims}, shape {x.shape}"
                )
            return no_op(name="static_checks_determined_all_ok")
        ranks_tensor = convert_to_tensor(wanted, dtype=_dtypes.int32, name="ranks")
        condition = _m.reduce_any(_m.equal(_a.rank(x), ranks_tensor))
        if data is None:
            data = [f"{prefix}Tensor {x.name} must have rank in", ranks_tensor, "Received shape: ",
                    _a.shape(x)]  # fmt: skip
        return Assert(condition, data, summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating-point dtype of ``tensors`` (and ``dtype``, when given), float32 when
    there is neither; a ``ValueError`` when they differ or are not floating point."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    for tensor in tensors or ():
        if dtype is None:
            dtype = tensor.dtype
        elif tensor.dtype.base_dtype is not dtype.base_dtype:
            raise ValueError(
                f"{tensor.name}, type={tensor.dtype.name} must be of the same type "
                f"({dtype.name}) ({_user_location()})."
            )
    if dtype is None:
        return _dtypes.float32
    if dtype.base_dtype not in FLOAT_TYPES:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


def assert_proper_iterable(values) -> None:
    """A ``TypeError`` unless ``values`` is an iterable of values rather than one tensor,
    array or string (whose iteration gives its elements or characters)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or hasattr(values, "dense_shape"):
        raise TypeError(
            f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}'
        )
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def is_numeric_tensor(tensor) -> bool:
    """Whether ``tensor`` is a Tensor of a number dtype (not bool or string)."""
    return isinstance(tensor, Tensor) and tensor.dtype.base_dtype in NUMERIC_TYPES


# -- numerics --------------------------------------------------------------------------------------
def _infer_check_numerics(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, "Input 'tensor' of 'CheckNumerics'")
    return [(x.dtype, x.shape)]


def _check_numerics_kernel(attrs):
    message = attrs["message"]

    def check_numerics(x):
        if not np.isfinite(x).all():
            kinds = []
            if np.isinf(x).any():
                kinds.append("Inf")
            if np.isnan(x).any():
                kinds.append("NaN")
            raise InvalidArgumentError(
                None, None, f"{message} : Tensor had {' and '.join(kinds)} values"
            )
        return x

    return check_numerics


define_op("CheckNumerics", _infer_check_numerics, _check_numerics_kernel, stateful=True)


def check_numerics(tensor, message: str, name: Optional[str] = None) -> Tensor:
    """``tensor``, after checking that it holds no NaN or Inf: a run that finds one fails
    with ``InvalidArgumentError`` naming ``message``."""
    attrs = {"message": str(message)}
    return apply_op("CheckNumerics", (tensor,), attrs, name or "CheckNumerics").outputs[0]


def verify_tensor_all_finite(
    t=None, msg: Optional[str] = None, name: Optional[str] = None, x=None, message=None
):
    """``t`` (an identity of it), run only after `check_numerics` has passed on it; ``x``
    and ``message`` are TensorFlow 2's names for ``t`` and ``msg``."""
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None or msg is None:
        raise ValueError("verify_tensor_all_finite needs a tensor (t or x) and a message")
    t = convert_to_tensor(t, name="t")
    with graph_to_build_in(t.graph).as_default(), name_scope(name or "VerifyFinite"):
        checked = check_numerics(t, message=msg)
        with control_dependencies([checked]):
            return _a.identity(t)


def add_check_numerics_ops():
    """One `check_numerics` for every float output of every op in the default graph, grouped
    into one op to run with a training step.  A graph with ``cond`` or ``while_loop`` is a
    ``ValueError``, as in TF1 (a check outside a branch would read a dead value)."""
    graph = get_default_graph()
    checks = []
    for op in list(graph.get_operations()):
        if op._control_flow_context is not None or op.type in ("Switch", "Merge", "Enter"):
            raise ValueError(
                f"add_check_numerics_ops at {_user_location()}: add_check_numerics_ops() is "
                "not compatible with control flow operations such as cond() or while_loop()."
            )
    for op in list(graph.get_operations()):
        for output in op.outputs:
            if output.dtype in FLOAT_TYPES and op.type != "CheckNumerics":
                message = f"{op.name}:{output.value_index} : {op.type}"
                with control_dependencies(checks[-1:]):
                    checks.append(check_numerics(output, message))
    return group(*checks)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return check_numerics(
        grad,
        "Not a number (NaN) or infinity (Inf) values detected in gradient. " + op.attrs["message"],
    )
