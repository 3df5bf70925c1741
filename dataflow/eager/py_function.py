"""``df.py_function``: a Python function run eagerly as an op (``EagerPyFunc``), and its
gradient.

Unlike `py_func` (``numpy_function``), whose function takes and returns numpy arrays and has no
gradient, ``py_function``'s function takes `EagerTensor` values and runs eagerly (`eager_mode`),
so it may use dataflow's ops on them, as ``tf.py_function`` does; what it returns (tensors, or
values convertible to its ``Tout`` dtypes) becomes the op's outputs.

Gradients, as TensorFlow's: when a gradient may be asked for, the op runs the function under a
tape of its own (persistent, watching the float and complex inputs) and keeps that tape, with
the inputs and outputs it saw, in a *record*; the gradient op (``EagerPyFuncGrad``) asks the
record's tape for the gradients of the inputs.  A gradient may be asked for when a tape is
recording on the thread that runs the op (eager mode, a df.function called under a tape), or
once a gradient of the op was built in a graph (``df.gradients``, a tape inside a df.function):
from then on every run of the op records.

Where TensorFlow keeps the record in a process-wide table under the op's token, here it is an
extra output of the op (a ``variant`` scalar, the last of ``op.outputs``, which ``py_function``
does not return), which the gradient op takes as an input: each run (each loop iteration, each
separate backward run of a taped df.function call) reads the record its own forward run made.
Inputs the function does not use get zero gradients, as in TensorFlow; non-float inputs get
None (TensorFlow fails to make their zeros).  The gradient op itself has no gradient, so second
derivatives through ``py_function`` are None, as in TensorFlow.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops.misc_ops import _convert_result, python_call_operands
from .context import eager_mode
from .runner import active_tapes
from .tensor import EagerTensor

__all__ = ["py_function"]


def _trainable(dtype: _dtypes.DType) -> bool:
    """Whether a tape watches an input of ``dtype`` (TensorFlow's ``IsTrainable``)."""
    return dtype.is_floating or dtype.is_complex


class PythonFunction:
    """The Python function of a ``py_function`` op (its ``func`` attribute), and whether its
    runs record a tape for a gradient built in a graph (see the module docstring)."""

    def __init__(self, func: Callable):
        self.func = func
        self.records_for_gradients = False
        self.__name__ = getattr(func, "__name__", type(func).__name__)

    def __call__(self, *args):
        return self.func(*args)

    def __repr__(self) -> str:
        return f"<py_function {self.__name__}>"


class ForwardRecord:
    """What a recording run of a ``py_function`` op keeps for its gradient: the tape its
    function ran under, the eager inputs it was given and what it returned (tensors, or values
    the tape knows nothing of)."""

    __slots__ = ("tape", "inputs", "outputs")

    def __init__(self, tape, inputs: list, outputs: list):
        self.tape = tape
        self.inputs = inputs
        self.outputs = outputs


def _as_object_scalar(value) -> np.ndarray:
    holder = np.empty((), dtype=object)
    holder[()] = value
    return holder


@contextlib.contextmanager
def _outer_tapes_paused():
    """The tapes recording on this thread stop while the function runs: its ops belong to the
    op's own tape, and the outer tapes record the op."""
    with contextlib.ExitStack() as stack:
        for tape in list(active_tapes()):
            stack.enter_context(tape.stop_recording())
        yield


def _results_of(result, count: int, func_name: str) -> list:
    if isinstance(result, (list, tuple)):
        results = list(result)
    elif result is None:  # no values, as in TensorFlow
        results = []
    else:
        results = [result]
    if len(results) != count:
        raise InvalidArgumentError(
            None, None, f"{func_name} returned {len(results)} values, but Tout lists {count}"
        )
    return results


def _output_value(value, dtype: _dtypes.DType, index: int, func_name: str) -> np.ndarray:
    """The array of one result: an eager tensor's own value (of exactly ``dtype``), or a Python
    or numpy value converted to ``dtype`` (as TensorFlow's ``convert_to_tensor``)."""
    if isinstance(value, EagerTensor):
        if value.dtype is not dtype:
            raise InvalidArgumentError(
                None,
                None,
                f"value {index} returned by {func_name} is a {value.dtype.name} tensor, but "
                f"Tout expects {dtype.name}",
            )
        return _convert_result(value.numpy(), dtype, index, func_name)
    if dtype.is_string or isinstance(value, Tensor):
        return _convert_result(value, dtype, index, func_name)
    try:
        with eager_mode():
            return convert_to_tensor(value, dtype=dtype).numpy()
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(
            None, None, f"value {index} returned by {func_name} is not a {dtype.name}: {e}"
        ) from None


def _eager_py_func_kernel(attrs):
    function: PythonFunction = attrs["func"]
    input_dtypes, output_dtypes = attrs["Tin"], attrs["Tout"]
    func_name = function.__name__

    def eager_py_func(*arrays):
        recording = function.records_for_gradients or bool(active_tapes())
        tape = None
        with eager_mode(), _outer_tapes_paused():
            args = [EagerTensor(np.asarray(a), d) for a, d in zip(arrays, input_dtypes)]
            if recording:
                from .tape import GradientTape

                with GradientTape(persistent=True) as tape:
                    for arg in args:
                        if _trainable(arg.dtype):
                            tape.watch(arg)
                    result = function(*args)
            else:
                result = function(*args)
        results = _results_of(result, len(output_dtypes), func_name)
        values = [
            _output_value(value, dtype, i, func_name)
            for i, (value, dtype) in enumerate(zip(results, output_dtypes))
        ]
        record = ForwardRecord(tape, args, results) if recording else None
        return (*values, _as_object_scalar(record))

    return eager_py_func


def _infer_eager_py_func(op):
    outputs = [(dtype, TensorShape(None)) for dtype in op.attrs["Tout"]]
    return outputs + [(_dtypes.variant, TensorShape([]))]


define_op("EagerPyFunc", _infer_eager_py_func, _eager_py_func_kernel, stateful=True)


def _eager_py_func_grad_kernel(attrs):
    given, sources = attrs["given"], attrs["sources"]
    source_dtypes = attrs["Tout"]

    def eager_py_func_grad(holder, *output_gradients):
        record = holder[()] if isinstance(holder, np.ndarray) else holder
        if not isinstance(record, ForwardRecord):
            raise InvalidArgumentError(
                None,
                None,
                "the py_function run this gradient reads did not record its tape (it ran "
                "before a gradient of it was asked for)",
            )
        from ..autodiff.gradients import UnconnectedGradients

        with eager_mode(), _outer_tapes_paused():
            targets, seeds = [], []
            for position, gradient in zip(given, output_gradients):
                output = record.outputs[position]
                if isinstance(output, EagerTensor):
                    targets.append(output)
                    seeds.append(EagerTensor(np.asarray(gradient), output.dtype))
            inputs = [record.inputs[i] for i in sources]
            if not targets:
                grads = [None] * len(inputs)
            else:
                grads = record.tape.gradient(
                    targets,
                    inputs,
                    output_gradients=seeds,
                    unconnected_gradients=UnconnectedGradients.ZERO,
                )
            values = []
            for grad, source, dtype in zip(grads, inputs, source_dtypes):
                if grad is None:
                    values.append(np.zeros_like(source.numpy()))
                else:
                    values.append(
                        np.asarray(convert_to_tensor(grad).numpy(), _dtypes.numpy_dtype(dtype))
                    )
        return values[0] if len(values) == 1 else tuple(values)

    return eager_py_func_grad


def _infer_eager_py_func_grad(op):
    return [(dtype, TensorShape(None)) for dtype in op.attrs["Tout"]]


define_op("EagerPyFuncGrad", _infer_eager_py_func_grad, _eager_py_func_grad_kernel)
NotDifferentiable("EagerPyFuncGrad")


@RegisterGradient("EagerPyFunc")
def _eager_py_func_grad(op, *grads):
    """The gradients of a ``py_function`` op's inputs: an ``EagerPyFuncGrad`` op reading the
    record of the run (the op's last output) and the gradients of the outputs."""
    inputs = op.inputs
    output_gradients = grads[:-1]  # the record takes none
    sources = tuple(i for i, t in enumerate(inputs) if _trainable(t.dtype))
    given = tuple(i for i, g in enumerate(output_gradients) if g is not None)
    if not sources or not given:
        return [None] * len(inputs)
    function: PythonFunction = op.attrs["func"]
    if not op.outputs[-1]._is_eager:
        function.records_for_gradients = True  # the runs from now on keep their tapes
    attrs = {
        "given": given,
        "sources": sources,
        "Tout": tuple(inputs[i].dtype for i in sources),
    }
    gradient_inputs = [op.outputs[-1]] + [convert_to_tensor(output_gradients[i]) for i in given]
    grad_op = apply_op("EagerPyFuncGrad", gradient_inputs, attrs, "EagerPyFuncGrad")
    found = dict(zip(sources, grad_op.outputs))
    for i, grad in found.items():
        if not grad._is_eager:
            grad.set_shape(inputs[i].shape)  # a gradient has its input's shape
    return [found.get(i) for i in range(len(inputs))]


def _decorator(make: Callable, **kwargs) -> Callable:
    """``@df.py_function(Tout=...)`` (and ``numpy_function``'s): the decorated function, when
    called, makes the op on its positional arguments."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args):
            return make(func, list(args), **kwargs)

        return wrapper

    return decorate


def py_function(
    func: Optional[Callable] = None,
    inp=None,
    Tout=None,  # noqa: N803 - TensorFlow's name
    name: Optional[str] = None,
) -> Any:
    """An op that calls ``func`` eagerly on the values of ``inp`` (`EagerTensor` each) and
    outputs what it returns, of the dtypes ``Tout`` (one dtype: one tensor; a list of them: a
    list); differentiable as the module docstring says.  Without ``func`` (``@py_function(
    Tout=...)``) it decorates a function, which makes the op on its arguments when called."""
    if Tout is None:
        raise TypeError("py_function needs Tout, the dtype (or list of dtypes) of its results")
    if func is None:
        if inp is not None:
            raise TypeError("py_function needs func when inp is given")
        return _decorator(py_function, Tout=Tout, name=name)
    if inp is None:
        raise TypeError("py_function needs inp, the list of its input tensors")
    single, output_dtypes, graph, inputs = python_call_operands(Tout, inp)
    attrs = {
        "func": PythonFunction(func),
        "Tin": tuple(x.dtype for x in inputs),
        "Tout": output_dtypes,
    }
    op = apply_op("EagerPyFunc", inputs, attrs, name or "EagerPyFunc", graph=graph)
    outputs = op.outputs[:-1]
    if single:
        return outputs[0]
    if output_dtypes or op.outputs[-1]._is_eager:
        return list(outputs)
    return op  # no outputs: the op, to run or to depend on
