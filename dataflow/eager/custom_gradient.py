"""`custom_gradient`: a function that gives its own gradient (``tf.custom_gradient``).

The decorated ``f(*args)`` returns ``(y, grad_fn)``.  The caller gets ``y`` through one
``IdentityN`` op over ``y``'s tensors, ``args`` and the variables ``f`` read (other than
``args``); that op's gradient is ``grad_fn`` (`gradients.set_op_gradient`), so `df.gradients`
and a `GradientTape` both find it the way they find any op's gradient, and nothing flows back
into the ops ``f`` used to compute ``y``.  ``grad_fn(*dys)`` returns one gradient per tensor
of ``args``; when ``f`` read variables, ``grad_fn(*dys, variables=...)`` gets them and returns
``(arg_gradients, variable_gradients)``, one per variable in the order given.

It is the same in a graph and eagerly, as TensorFlow's graph and eager versions agree; in a
graph, as in TensorFlow 1.x, ``f`` takes positional tensor arguments only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Optional

from ..framework import nest
from ..framework.gradient_registry import set_op_gradient
from ..framework.graph import _user_location, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_registry import apply_op
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.variables import Variable, watching_reads

__all__ = ["custom_gradient"]


def custom_gradient(f: Optional[Callable] = None):
    """Decorator: ``f(*args) -> (y, grad_fn)`` differentiates as ``grad_fn`` says (module
    docstring).  Usable as ``@custom_gradient`` or ``@custom_gradient()``."""
    if f is None:
        return custom_gradient
    where = _definition_site(f)

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs and not get_default_graph()._eager:
            raise ValueError(
                f"The custom_gradient function {f.__name__} ({where}) takes keyword arguments "
                f"only when executing eagerly; called at {_user_location()}."
            )
        flat_args = [convert_to_tensor(x) for x in nest.flatten(args)]
        args = nest.pack_sequence_as(args, flat_args)
        with watching_reads() as read:
            result, grad_fn = f(*args, **kwargs)
        variables = _distinct(v for v in read if not any(v is x for x in flat_args))
        if variables and not _takes_variables(grad_fn):
            raise TypeError(
                f"The custom_gradient function {f.__name__} ({where}) uses the variables "
                f"{[v.name for v in variables]}, so its grad_fn must take a keyword argument "
                "'variables' (and return their gradients too)."
            )
        flat_result = [convert_to_tensor(y) for y in nest.flatten(result)]
        if not flat_result:
            raise ValueError(
                f"The custom_gradient function {f.__name__} ({where}) returned no value"
            )
        inputs = flat_result + flat_args + [v.value() for v in variables]
        op = apply_op("IdentityN", inputs, None, "IdentityN")  # eagerly too: the op, not a view
        count = len(flat_result)
        set_op_gradient(op, _gradient(grad_fn, f.__name__, where, count, len(flat_args), variables))
        return nest.pack_sequence_as(result, op.outputs[:count])

    return decorated


def _gradient(grad_fn, name: str, where: str, result_count: int, arg_count: int, variables):
    """The gradient function of the IdentityN op: ``grad_fn`` on the results' gradients, its
    answer checked and laid out one gradient per op input (None for the results)."""

    def gradient(op, *grads):
        dys = grads[:result_count]
        if variables:
            answer = grad_fn(*dys, variables=variables)
            if not isinstance(answer, (tuple, list)) or len(answer) != 2:
                raise ValueError(
                    f"The grad_fn of custom_gradient function {name} ({where}) must return "
                    "(gradients of the arguments, gradients of the variables) when the "
                    "function uses variables."
                )
            arg_grads, variable_grads = answer
            variable_grads = list(nest.flatten(variable_grads))
            if len(variable_grads) != len(variables):
                raise ValueError(
                    f"The grad_fn of custom_gradient function {name} ({where}) returned "
                    f"{len(variable_grads)} variable gradients for {len(variables)} variables."
                )
        else:
            arg_grads, variable_grads = grad_fn(*dys), []
        arg_grads = [] if arg_grads is None and arg_count == 0 else nest.flatten(arg_grads)
        if len(arg_grads) != arg_count:
            raise ValueError(
                f"The grad_fn of custom_gradient function {name} ({where}) returned "
                f"{len(arg_grads)} gradients for {arg_count} arguments."
            )
        converted = [
            g if g is None or isinstance(g, IndexedSlices) else convert_to_tensor(g)
            for g in arg_grads + variable_grads
        ]
        return [None] * result_count + converted

    return gradient


def _distinct(variables) -> list:
    found: list = []
    for v in variables:
        if isinstance(v, Variable) and not any(v is seen for seen in found):
            found.append(v)
    return found


def _takes_variables(grad_fn) -> bool:
    try:
        parameters = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _definition_site(f) -> str:
    code = getattr(f, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{code.co_firstlineno}"


def grad_pass_through(f: Callable):
    """``f`` with the identity as its gradient (``tf.grad_pass_through``): ``g(x)`` computes
    ``f(x)``, and the gradient that reaches its result goes on to ``x`` unchanged (a
    straight-through estimator, for ``round`` or an assignment, which have no gradient).
    ``x`` is one tensor (or a structure of tensors matching ``f``'s result)."""

    @custom_gradient
    def pass_through(x):
        def grad(*dy, variables=None):
            if variables:
                return dy, [None] * len(variables)
            return dy

        return f(x), grad

    return functools.wraps(f)(pass_through)


def recompute_grad(f: Callable):
    """``f`` whose intermediate values are not kept for its gradient but recomputed when the
    gradient is taken (``tf.recompute_grad``): the forward pass computes ``f(*args)``; the
    gradient runs ``f`` again, after the incoming gradients exist, on copies of ``args``, and
    differentiates that copy.  Values and gradients are ``f``'s own; variables ``f`` reads get
    their gradients too."""
    from ..autodiff.gradients import gradients
    from ..framework.graph import control_dependencies
    from ..ops.array_ops import identity
    from . import GradientTape

    @custom_gradient
    def inner(*args):
        result = f(*args)

        def grad(*dresult, variables=None):
            eager = get_default_graph()._eager
            sources_vars = list(variables or [])
            if eager:
                with GradientTape() as tape:
                    copies = [identity(a) for a in args]
                    tape.watch(copies)
                    for v in sources_vars:
                        tape.watch(v)
                    recomputed = f(*copies)
                grads = tape.gradient(
                    nest.flatten(recomputed), copies + sources_vars, output_gradients=list(dresult)
                )
            else:
                with control_dependencies([d for d in dresult if d is not None]):
                    copies = [identity(a) for a in args]
                recomputed = f(*copies)
                grads = gradients(
                    nest.flatten(recomputed), copies + sources_vars, grad_ys=list(dresult)
                )
            grads = [
                g if g is not None else _zeros_like_of(s)
                for g, s in zip(grads, copies + sources_vars)
            ]
            arg_grads = grads[: len(copies)]
            if variables:
                return arg_grads, grads[len(copies) :]
            return arg_grads

        return result, grad

    return functools.wraps(f)(inner)


def _zeros_like_of(source):
    from ..ops.array_ops import zeros_like

    return zeros_like(source.value() if isinstance(source, Variable) else source)
