"""Ops for ordering, checking and side effects: ``no_op``, ``group``, ``tuple``, ``Assert``,
``Print``, ``print`` and the Python-function ops ``py_func``/``numpy_function``.

``Assert``, ``Print`` and ``print`` take their data as a list that may mix tensors and Python
values (strings above all, since there is no string dtype): the Python values are kept in the
op's ``template`` attribute and only the tensors become inputs.

``print``, ``Print`` and ``Assert`` are stateful: passes must never drop or merge them.  In a
graph they run only when something depends on them (fetch them, or use
``df.control_dependencies``), as in TensorFlow 1.x.
"""

from __future__ import annotations

import builtins
import functools
import sys
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ..framework import composites, nest
from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import (
    Operation,
    Tensor,
    control_dependencies,
    get_default_graph,
    graph_to_build_in,
)
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, is_tensor_like
from ..framework.tensor_shape import TensorShape
from .array_ops import identity
from .summarize import summarize_value

__all__ = ["Assert", "Print", "group", "no_op", "numpy_function", "print", "py_func", "tuple"]

# This module defines `print` and `tuple` (TensorFlow's names); the builtins are reached here.
_pytuple = builtins.tuple


def _no_outputs(op):
    return []


def _no_op(*inputs):
    return ()


define_op("NoOp", _no_outputs, lambda attrs: _no_op, inline=True)


def no_op(name: Optional[str] = None) -> Operation:
    """An op that does nothing; its control inputs make it a synchronisation point."""
    return apply_op("NoOp", (), None, name or "NoOp", graph=get_default_graph())


def _flatten(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (list, _pytuple)):
            out.extend(_flatten(v))
        else:
            out.append(v)
    return out


def group(*inputs, **kwargs) -> Operation:
    """An op that finishes only after all ``inputs`` (tensors or ops, possibly in nested lists)
    have run; it has no outputs.  As in TensorFlow, an unknown keyword argument is a
    ``ValueError`` and an input that is not a tensor or op (``None`` included) a ``TypeError``."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unknown keyword arguments to group: {', '.join(kwargs)}")
    deps = _flatten(inputs)
    if get_default_graph()._eager:  # every input has already run
        return None
    for d in deps:
        if not _is_graph_element(d):
            raise TypeError(
                f"group expects Tensors or Operations (possibly in nested lists), got {d!r} "
                f"of type {type(d).__name__}"
            )
    if not deps:
        return no_op(name=name or "group_deps")
    graph = _graph_of_element(deps[0])
    ops = list(dict.fromkeys(graph._as_control_input(d) for d in deps))  # once each, in order
    return apply_op("NoOp", (), None, name or "group_deps", graph=graph, control_inputs=ops)


def _is_graph_element(value) -> bool:
    """A tensor, an op, or what stands for one (a Variable)."""
    return isinstance(value, (Tensor, Operation)) or hasattr(value, "_as_graph_element")


def _graph_of_element(value):
    if isinstance(value, (Tensor, Operation)):
        return value.graph
    if hasattr(value, "_as_graph_element"):
        return value._as_graph_element().graph
    raise TypeError(f"Expected a Tensor or Operation, got {value!r}")


def tuple(tensors, name: Optional[str] = None, control_inputs=None) -> list:  # noqa: A001
    """The ``tensors`` again, each passed through an identity that waits for all of them (and
    for ``control_inputs``): a value of the result is available only once every one is.  Ops in
    ``tensors`` become grouped ops; ``None`` entries stay ``None``; other values (Python
    numbers, numpy arrays) are converted to tensors first, as in TensorFlow; an IndexedSlices
    or SparseTensor comes back as one, each part gated."""
    if get_default_graph()._eager:  # every tensor already has its value
        return tensors
    tensors = list(tensors)
    elements = [t for t in tensors if t is not None]
    if not elements:
        raise ValueError(f"Must have at least one Tensor: {tensors}")
    graph_elements = [t for t in elements if _is_graph_element(t)]
    graph = _graph_of_element(graph_elements[0]) if graph_elements else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "tuple"):
        converted = [
            t
            if t is None or isinstance(t, Operation) or composites.is_composite(t)
            else convert_to_tensor(t)
            for t in tensors
        ]
        gating = []
        for t in converted:
            if isinstance(t, Operation):
                gating.append(t)
            elif composites.is_composite(t):  # IndexedSlices, SparseTensor: every part
                gating.extend(part.op for part in nest.flatten(composites.expand(t)))
            elif t is not None:
                gating.append(t.op)
        for c in control_inputs or ():
            if not _is_graph_element(c):
                raise TypeError(f"Control inputs must be Tensors or Operations, got {c!r}")
            gating.append(c)
        gate = group(*gating)
        result = []
        for t in converted:
            if t is None:
                result.append(None)
                continue
            with control_dependencies([gate]):
                if isinstance(t, Operation):
                    result.append(group(t))
                elif composites.is_composite(t):
                    result.append(
                        composites.map_parts(t, lambda p: identity(p, name="control_dependency"))
                    )
                else:
                    result.append(identity(t, name="control_dependency"))
        return result


# -- formatting data for Assert and Print --------------------------------------------------------
def _split_data(data, what: str):
    """``(template, tensors)``: each Python string of ``data`` stays in ``template``, every
    other entry becomes a tensor input and leaves ``None`` in its place."""
    if isinstance(data, (Tensor, str)) or not isinstance(data, (list, _pytuple)):
        data = [data]
    template, tensors = [], []
    for item in data:
        if isinstance(item, str):
            template.append(item)
        else:
            template.append(None)
            tensors.append(convert_to_tensor(item))
    return _pytuple(template), tensors


def _element_text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")  # as TensorFlow prints string tensors
    text = str(value)
    return text[:-2] if text.endswith(".0") else text


def _summarize(value, summarize: int) -> str:
    """TensorFlow's ``SummarizeValue``: the first ``summarize`` elements (all when negative) in
    row-major order, nested in brackets by dimension, ``...`` where elements are left out."""
    array = np.asarray(value)
    if array.ndim == 0:
        return _element_text(array[()])
    flat = array.reshape(-1)
    limit = flat.size if summarize < 0 else min(summarize, flat.size)
    shown = [_element_text(v) for v in flat[:limit]]
    if array.ndim == 1:
        text = " ".join(shown)
    else:
        parts: list = []
        position = [0]

        def dimension(index: int) -> None:
            if position[0] >= limit:
                return
            if index == array.ndim - 1:
                for i in range(array.shape[index]):
                    if position[0] >= limit:
                        parts.append("...")
                        return
                    if i:
                        parts.append(" ")
                    parts.append(shown[position[0]])
                    position[0] += 1
                return
            for _ in range(array.shape[index]):
                if position[0] >= limit:
                    break
                parts.append("[")
                dimension(index + 1)
                parts.append("]")

        dimension(0)
        text = "".join(parts)
    return text + ("..." if limit < flat.size else "")


def _bracketed(template, values, summarize: int) -> list:
    """Each data entry as ``[text]``: strings as they are, tensors summarized."""
    values = iter(values)
    return [
        "[" + (item if item is not None else _summarize(next(values), summarize)) + "]"
        for item in template
    ]


def _infer_assert(op):
    condition = op.inputs[0]
    if condition.dtype is not _dtypes.bool:
        raise TypeError(f"Assert's condition must be a bool tensor, got {condition.dtype.name}")
    if condition.shape.ndims not in (None, 0):
        raise ValueError(f"Assert's condition must be a scalar, got shape {condition.shape}")
    return []


def _assert_kernel(attrs):
    template, summarize = attrs["template"], attrs["summarize"]

    def assert_(condition, *data):
        if not condition:
            message = " ".join(_bracketed(template, data, summarize))
            raise InvalidArgumentError(None, None, f"assertion failed: {message}")
        return ()

    return assert_


define_op("Assert", _infer_assert, _assert_kernel, stateful=True)


def Assert(condition, data, summarize: Optional[int] = None, name: Optional[str] = None):
    """An op that fails the run with ``InvalidArgumentError`` when the bool scalar
    ``condition`` is false; the message lists ``data`` (tensors show their first ``summarize``
    elements, default 3).

    The op is ``Assert/Assert`` (inside a scope named ``name``), as TensorFlow names its
    ``Assert`` op.  TensorFlow wraps the check in a cond (``Assert/AssertGuard``) when ``data``
    holds other than int32 and string values, to format them only on failure; here the one op
    does that, so no guard is built."""
    graph = get_default_graph()
    if isinstance(condition, Tensor):
        graph = graph_to_build_in(condition.graph)
    with graph.as_default(), graph.name_scope(name or "Assert"):
        condition = convert_to_tensor(condition, name="condition")
        template, tensors = _split_data(data, "data")
        attrs = {"template": template, "summarize": 3 if summarize is None else int(summarize)}
        return apply_op("Assert", [condition, *tensors], attrs, "Assert")


def raw_assert(condition, data, summarize: int = 3, name: Optional[str] = None):
    """TensorFlow's raw ``Assert`` op (``gen_logging_ops._assert``): one op named ``name``
    (default "Assert"), outside any scope of its own, whose ``data`` are all tensors; where
    `Assert` scopes and guards the check, this builds the op alone."""
    graph = condition.graph if isinstance(condition, Tensor) else get_default_graph()
    with graph.as_default():
        condition = convert_to_tensor(condition, name="condition")
        tensors = [convert_to_tensor(item) for item in data]
        attrs = {"template": (None,) * len(tensors), "summarize": int(summarize)}
        return apply_op("Assert", [condition, *tensors], attrs, name or "Assert")


def _infer_print(op):
    x = op.inputs[0]
    return [(x.dtype, x.shape)]


def _print_kernel(attrs):
    template, summarize = attrs["template"], attrs["summarize"]
    message, first_n = attrs["message"], attrs["first_n"]
    printed = [0]

    def print_(x, *data):
        if first_n < 0 or printed[0] < first_n:
            printed[0] += 1
            sys.stderr.write(message + "".join(_bracketed(template, data, summarize)) + "\n")
        return x

    return print_


define_op("Print", _infer_print, _print_kernel, stateful=True)


def Print(
    input_,
    data,
    message: Optional[str] = None,
    first_n: Optional[int] = None,
    summarize: Optional[int] = None,
    name: Optional[str] = None,
) -> Tensor:
    """``input_`` unchanged; each time it is computed, ``message`` followed by the values of
    ``data`` is written to stderr (only the first ``first_n`` times when given)."""
    input_ = convert_to_tensor(input_)
    graph = graph_to_build_in(input_.graph)
    with graph.as_default(), graph.name_scope(name or "Print") as scope:
        template, tensors = _split_data(data, "data")
        attrs = {
            "template": template,
            "message": message or "",
            "first_n": -1 if first_n is None else int(first_n),
            "summarize": 3 if summarize is None else int(summarize),
        }
        return apply_op("Print", [input_, *tensors], attrs, scope).outputs[0]


# -- tf.print --------------------------------------------------------------------------------------
class _Slot:
    """Where the value of tensor input ``index`` goes in a print template."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"<input {self.index}>"


def _print_template(value, tensors: list):
    """``value`` with every tensor replaced by a `_Slot` (and appended to ``tensors``)."""
    if isinstance(value, Tensor) or is_tensor_like(value):
        tensors.append(convert_to_tensor(value))
        return _Slot(len(tensors) - 1)
    if isinstance(value, list):
        return [_print_template(v, tensors) for v in value]
    if isinstance(value, _pytuple):
        return _pytuple(_print_template(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: _print_template(v, tensors) for k, v in value.items()}
    return value


def _render(item, values, summarize: int, top: bool) -> str:
    if isinstance(item, _Slot):
        return summarize_value(np.asarray(values[item.index]), summarize)
    if isinstance(item, list):
        return "[" + ", ".join(_render(v, values, summarize, False) for v in item) + "]"
    if isinstance(item, _pytuple):
        inner = ", ".join(_render(v, values, summarize, False) for v in item)
        return "(" + inner + ("," if len(item) == 1 else "") + ")"
    if isinstance(item, dict):
        inner = ", ".join(f"{k!r}: {_render(v, values, summarize, False)}" for k, v in item.items())
        return "{" + inner + "}"
    return str(item) if top else repr(item)


def _resolve_stream(stream):
    """Standard streams are looked up when the op runs, so that redirection applies."""
    if stream is sys.stdout or stream is sys.__stdout__ or stream == "stdout":
        return "stdout"
    if stream is sys.stderr or stream is sys.__stderr__ or stream == "stderr":
        return "stderr"
    if isinstance(stream, str) and stream.startswith("file://"):
        return stream
    if hasattr(stream, "write"):
        return stream
    raise ValueError(
        f"output_stream must be sys.stdout, sys.stderr, 'file://<path>' or a writable file "
        f"object, got {stream!r}"
    )


def _infer_print_v2(op):
    return []


def _print_v2_kernel(attrs):
    template, summarize = attrs["template"], attrs["summarize"]
    sep, end, stream = attrs["sep"], attrs["end"], attrs["output_stream"]

    def print_v2(*values):
        text = sep.join(_render(item, values, summarize, True) for item in template) + end
        if stream == "stdout":
            sys.stdout.write(text)
        elif stream == "stderr":
            sys.stderr.write(text)
        elif isinstance(stream, str):
            with open(stream[len("file://") :], "a") as f:
                f.write(text)
        else:
            stream.write(text)
        return ()

    return print_v2


define_op("PrintV2", _infer_print_v2, _print_v2_kernel, stateful=True)


def print(*inputs, **kwargs) -> Operation:  # noqa: A001 - mirrors tf.print
    """An op that prints ``inputs`` (tensors, Python values, and lists/tuples/dicts of them)
    separated by ``sep`` and followed by ``end`` to ``output_stream`` (default stderr) each time
    it runs.  Tensors show the first and last ``summarize`` elements of each dimension (-1: all).
    Returns the op: fetch it, or make other ops depend on it with ``df.control_dependencies``."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep = kwargs.pop("sep", " ")
    end = kwargs.pop("end", "\n")
    name = kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unknown keyword arguments to print: {', '.join(kwargs)}")
    graph = get_default_graph()
    for value in inputs:
        if isinstance(value, Tensor):
            graph = graph_to_build_in(value.graph)
            break
    with graph.as_default(), graph.name_scope(name or "PrintV2") as scope:
        tensors: list = []
        template = [_print_template(v, tensors) for v in inputs]
        attrs = {
            "template": template,
            "summarize": -1 if summarize is None else int(summarize),
            "sep": sep,
            "end": end,
            "output_stream": _resolve_stream(output_stream),
        }
        return apply_op("PrintV2", tensors, attrs, scope, graph=graph)


# -- Python functions as ops -----------------------------------------------------------------------
def python_call_operands(Tout, inp) -> _pytuple:
    """What an op that calls Python is built from (``py_func``, ``py_function``): whether
    ``Tout`` is one dtype, the output dtypes, the graph to build in (the inputs', or the
    default) and the inputs as tensors (a lone ``inp`` taken as ``[inp]``)."""
    single = not isinstance(Tout, (list, _pytuple))
    output_dtypes = _pytuple(_dtypes.as_dtype(t) for t in ([Tout] if single else Tout))
    if isinstance(inp, Tensor) or not isinstance(inp, (list, _pytuple)):
        inp = [inp]
    graph = get_default_graph()
    for value in inp:
        if isinstance(value, Tensor):
            graph = graph_to_build_in(value.graph)
            break
    with graph.as_default():
        tensors = [convert_to_tensor(x) for x in inp]
    return single, output_dtypes, graph, tensors


def _infer_py_func(op):
    return [(dtype, TensorShape(None)) for dtype in op.attrs["Tout"]]


def _convert_result(value, dtype: _dtypes.DType, index: int, func_name: str):
    """``value`` as an array of exactly ``dtype``.  As in TensorFlow, nothing is cast: a
    float64 result where Tout says float32 is an error that names both dtypes.  For a string
    Tout, ``str`` and ``bytes`` are both strings (``str`` is encoded as UTF-8)."""
    try:
        array = _dtypes.string_array(value) if dtype.is_string else np.asarray(value)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(
            None, None, f"{func_name} returned a value that is not an array ({index}): {e}"
        ) from None
    if array.dtype != _dtypes.numpy_dtype(dtype):
        raise InvalidArgumentError(
            None,
            None,
            f"value {index} returned by {func_name} has dtype {array.dtype}, but Tout expects "
            f"{dtype.name}; return an array of that dtype (for example with .astype)",
        )
    return array


def _py_func_kernel(attrs):
    func, tout, single = attrs["func"], attrs["Tout"], attrs["single_output"]
    func_name = getattr(func, "__name__", repr(func))
    count = len(tout)

    def py_func(*args):
        # A scalar reaches the function as a numpy scalar (a string one as ``bytes``), as in
        # TensorFlow; anything else as an array.
        result = func(*(a[()] if np.ndim(a) == 0 else a for a in args))
        if single:
            results: Any = (result,)
        elif isinstance(result, (list, _pytuple)):
            results = result
        elif result is None and count == 0:
            results = ()
        else:
            results = (result,)
        if len(results) != count:
            raise InvalidArgumentError(
                None, None, f"{func_name} returned {len(results)} values, but Tout lists {count}"
            )
        converted = [
            _convert_result(v, dtype, i, func_name)
            for i, (v, dtype) in enumerate(zip(results, tout))
        ]
        return converted[0] if count == 1 else _pytuple(converted)

    return py_func


define_op("PyFunc", _infer_py_func, _py_func_kernel, stateful=True)
define_op("PyFuncStateless", _infer_py_func, _py_func_kernel)


def py_func(func: Callable, inp, Tout, stateful: bool = True, name: Optional[str] = None):
    """An op that calls ``func`` on the numpy values of ``inp`` when it runs.

    ``Tout`` is a dtype (the op has one output and the result is a tensor) or a list of dtypes
    (the result is a list; with an empty list, the op); the output shapes are unknown.  As in
    TensorFlow, each result must already have its ``Tout`` dtype once numpy makes it an array
    (a Python ``2.5`` is float64, so a float32 output needs ``np.float32(2.5)``): nothing is
    cast behind the user's back.  An exception in ``func`` fails the run; a wrong number of
    results or a result of another dtype is an ``InvalidArgumentError``.  ``stateful=False``
    lets passes treat the call as a pure function of its inputs.  A lone tensor ``inp`` is
    taken as ``[inp]``.
    """
    single, tout, graph, tensors = python_call_operands(Tout, inp)
    attrs = {"func": func, "Tout": tout, "single_output": single}
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    op = apply_op(op_type, tensors, attrs, name or op_type, graph=graph)
    if single:
        return op.outputs[0]
    return op.outputs if tout else op


def numpy_function(
    func: Optional[Callable] = None,
    inp=None,
    Tout=None,  # noqa: N803 - TensorFlow's name
    stateful: bool = True,
    name: Optional[str] = None,
):
    """`py_func`: ``func`` takes and returns numpy values; it has no gradient (None), as in
    TensorFlow.  Without ``func`` (``@numpy_function(Tout=...)``) it decorates a function,
    which makes the op on its arguments when called."""
    if Tout is None:
        raise TypeError("numpy_function needs Tout, the dtype (or list of dtypes) of its results")
    if func is None:
        if inp is not None:
            raise TypeError("numpy_function needs func when inp is given")

        def decorate(function: Callable) -> Callable:
            @functools.wraps(function)
            def wrapper(*args):
                return py_func(function, list(args), Tout, stateful=stateful, name=name)

            return wrapper

        return decorate
    if inp is None:
        raise TypeError("numpy_function needs inp, the list of its input tensors")
    return py_func(func, inp, Tout, stateful=stateful, name=name)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in ("NoOp", "Assert", "PrintV2", "PyFunc", "PyFuncStateless"):
    NotDifferentiable(_type)


@RegisterGradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)
