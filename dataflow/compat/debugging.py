"""``df.debugging``: TF1's ``tf.debugging`` names for the checks, each the same function as
its top-level spelling (``df.debugging.assert_equal is df.assert_equal``)."""

import numpy as np

from ..framework.traceback_utils import (  # noqa: F401
    disable_traceback_filtering,
    enable_traceback_filtering,
    is_traceback_filtering_enabled,
)
from ..ops.check_ops import (  # noqa: F401
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
    check_numerics,
    is_numeric_tensor,
)
from ..ops.check_ops import verify_tensor_all_finite as assert_all_finite  # noqa: F401
from ..ops.extra_math_ops import is_finite, is_inf, is_nan  # noqa: F401
from ..ops.misc_ops import Assert  # noqa: F401

__all__ = sorted(
    [
        "Assert",
        "assert_near",
        "assert_proper_iterable",
        "assert_rank_in",
        "assert_same_float_dtype",
        "is_numeric_tensor",
        "assert_all_finite",
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
        "is_finite",
        "is_inf",
        "is_nan",
        "assert_shapes",
        "disable_check_numerics",
        "disable_traceback_filtering",
        "enable_check_numerics",
        "enable_traceback_filtering",
        "get_log_device_placement",
        "is_traceback_filtering_enabled",
        "is_non_decreasing",
        "is_strictly_increasing",
        "set_log_device_placement",
    ]
)


# -- assert_shapes ---------------------------------------------------------------------------------
def _dimension_sizes(x):
    """Each dimension's size: an int where known statically, else a tensor (a scalar counts as
    rank 1 of size 1)."""
    from primitives.control_flow_ops import cond

    from ..ops.array_ops import rank as _rank
    from ..ops.array_ops import shape as _shape
    from ..ops.constant_op import constant
    from ..ops.math_ops import equal

    rank = x.shape.ndims
    if rank == 0:
        return (1,)
    dynamic = _shape(x)
    if rank is not None:
        return [int(s) if s is not None else dynamic[i] for i, s in enumerate(x.shape.as_list())]
    return cond(equal(_rank(x), 0), lambda: constant([1]), lambda: dynamic)


def _has_known_value(size) -> bool:
    if size is None:
        return False
    try:
        int(size)
    except (ValueError, TypeError):
        return False
    return True


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks the shapes of several tensors against each other (``tf.debugging.assert_shapes``,
    TF1's signature): ``shapes`` is a list (or dict) of ``(tensor, shape)`` pairs, each shape a
    list of sizes (an int), symbols (a string: every use of one symbol must be the same size),
    ``None`` or ``"."`` (any size); a first entry ``...`` or ``"*"`` lets the tensor have more
    leading dimensions.  A scalar counts as shape ``[1]``.  What is known when the graph is
    built is checked then (``ValueError``); the rest at run time: the op returned fails with
    ``InvalidArgumentError``.  A shape of None puts no constraint."""
    from ..framework.graph import control_dependencies, get_default_graph
    from ..framework.tensor_conversion import convert_to_tensor
    from ..ops.array_ops import shape as _shape
    from ..ops.math_ops import equal
    from ..ops.misc_ops import group

    if isinstance(shapes, dict):
        shapes = shapes.items()
    prefix = f"{message}.  " if message else ""
    graph = get_default_graph()
    eager = graph._eager
    with graph.name_scope(name or "assert_shapes"):
        constraints = [(convert_to_tensor(x), s) for x, s in shapes if s is not None]

        def tensor_name(x) -> str:
            return f"shape={x.shape} dtype={x.dtype.name}" if eager else x.name

        entries = []
        for tensor, symbolic in constraints:
            if not (hasattr(symbolic, "__iter__") or hasattr(symbolic, "__getitem__")):
                raise ValueError(
                    f"{prefix}Tensor {tensor_name(tensor)}.  Specified shape must be an "
                    "iterable.  An iterable has the attribute `__iter__` or `__getitem__`.  "
                    f"Received specified shape: {symbolic}"
                )
            symbols = tuple(symbolic)
            innermost = False
            for i, symbol in enumerate(symbols):
                if not (symbol is Ellipsis or (isinstance(symbol, str) and symbol == "*")):
                    continue
                if i != 0:
                    raise ValueError(
                        f"{prefix}Tensor {tensor_name(tensor)} specified shape index {i}.  "
                        "Symbol `...` or `*` for a variable number of unspecified dimensions "
                        "is only allowed as the first entry"
                    )
                innermost = True
            sized = symbols[1:] if innermost else symbols
            entries.append((tensor, innermost, _dimension_sizes(tensor), sized or (1,)))

        rank_assertions = []
        for tensor, innermost, _, sized in entries:
            rank = len(sized)
            if innermost:
                if rank in (0, 1):
                    continue
                assertion = assert_rank_at_least(
                    tensor, rank, data=data, summarize=summarize, message=message, name=name
                )
            elif rank in (0, 1):
                assertion = assert_rank_in(
                    tensor, [0, 1], data=data, summarize=summarize, message=message, name=name
                )
            else:
                assertion = assert_rank(
                    tensor, rank, data=data, summarize=summarize, message=message, name=name
                )
            rank_assertions.append(assertion)

        size_assertions = []
        specified: dict = {}
        for tensor, innermost, actual_sizes, sized in entries:
            for i, symbol in enumerate(sized):
                if symbol is None or (isinstance(symbol, str) and symbol == "."):
                    continue
                dim = i - len(sized) if innermost else i
                if symbol in specified or _has_known_value(symbol):
                    if _has_known_value(symbol):
                        expected = int(symbol)
                        check = "Specified explicitly"
                    else:
                        expected, by, at = specified[symbol]
                        check = f"Specified by tensor {tensor_name(by)} dimension {at}"
                    with control_dependencies([a for a in rank_assertions if a is not None]):
                        actual = actual_sizes[dim]
                    if _has_known_value(actual) and _has_known_value(expected):
                        if int(actual) != int(expected):
                            raise ValueError(
                                f"{prefix}{check}.  Tensor {tensor_name(tensor)} dimension "
                                f"{dim} must have size {int(expected)}.  Received size "
                                f"{int(actual)}, shape {tensor.shape}"
                            )
                        continue
                    condition = equal(convert_to_tensor(actual), convert_to_tensor(expected))
                    shown = data
                    if data is None:
                        shown = [
                            prefix,
                            check,
                            f"Tensor {tensor_name(tensor)} dimension",
                            dim,
                            "must have size",
                            expected,
                            "Received shape: ",
                            _shape(tensor),
                        ]
                    size_assertions.append(Assert(condition, shown, summarize=summarize))
                else:
                    with control_dependencies([a for a in rank_assertions if a is not None]):
                        size = actual_sizes[dim]
                    specified[symbol] = (size, tensor, dim)
    if eager:
        return None
    with control_dependencies([a for a in rank_assertions if a is not None]):
        return group(*size_assertions)


from ..ops.extra_math_ops import is_non_decreasing, is_strictly_increasing  # noqa: E402, F401


# -- log device placement --------------------------------------------------------------------------
def set_log_device_placement(enabled) -> None:
    """Whether Sessions made without a ``config`` print where each op runs (their
    ``ConfigProto.log_device_placement``), as TensorFlow's context-wide switch; one of the
    process's runtime options (`dataflow.client.config`)."""
    from ..client.config._state import STATE

    STATE.log_device_placement = bool(enabled)


def get_log_device_placement() -> bool:
    """The switch `set_log_device_placement` sets (False until it is called)."""
    from ..client.config._state import STATE

    return STATE.log_device_placement


# -- checking every op's output for Inf and NaN ----------------------------------------------------
_CHECKED_DTYPES = ("float16", "bfloat16", "float32", "float64")
CHECK_NUMERICS_ATTR = "_check_numerics"


def _mark_for_numerics_check(op) -> None:
    """An op run eagerly has its values: they are checked now.  A graph op gets the attribute
    its lowering wraps the kernel for (an attribute, so that graph passes keep it on copies
    and leave the op unfolded and unfused)."""
    if not any(t.dtype.name in _CHECKED_DTYPES for t in op.outputs):
        return
    from ..eager.tensor import EagerTensor

    if isinstance(op.outputs[0], EagerTensor):
        from ..client.session import numerics_error

        for index, t in enumerate(op.outputs):
            if t.dtype.name in _CHECKED_DTYPES and not np.isfinite(t._value).all():
                raise numerics_error(op, index, t._value)
        return
    op.attrs[CHECK_NUMERICS_ATTR] = True


def enable_check_numerics(stack_height_limit=30, path_length_limit=50) -> None:
    """From now on, every op this thread creates with a floating-point output checks it when
    it runs: an Inf or NaN fails the run with ``InvalidArgumentError`` naming the op, the
    output, its dtype and shape, its inputs and where the op was made (TensorFlow's
    ``tf.debugging.enable_check_numerics``; ops made before are not checked).  The checked
    ops run one by one, outside compiled regions."""
    from ..framework.graph import add_op_creation_hook

    for value, what in (
        (stack_height_limit, "stack_height_limit"),
        (path_length_limit, "path_length_limit"),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"enable_check_numerics: {what} must be a positive int, got {value!r}")
    add_op_creation_hook(_mark_for_numerics_check)


def disable_check_numerics() -> None:
    """Stops `enable_check_numerics` for ops created from now on in this thread."""
    from ..framework.graph import remove_op_creation_hook

    remove_op_creation_hook(_mark_for_numerics_check)
