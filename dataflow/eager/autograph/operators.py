"""The runtime operators converted code calls as ``ag__.<name>``: they decide at run time.

Each statement the conversion rewrote arrives here with its condition or iterated value and its
*state* (the values of the names it assigns), and the branches or body as functions of that
state.  A condition that is a graph `Tensor` stages the statement (`cond`, `while_loop`);
anything else, a Python value or a tensor with a concrete value, runs the functions as plain
Python, so code that never meets a graph tensor behaves exactly as before conversion.

The names of the state come from the generated functions' parameters and the statement's line
from their code (which the conversion compiled with the user's file and line numbers), so every
error here names the variable and the user's line.

Side effects: ``print`` and ``assert`` on graph tensors make ops that nothing consumes.  The
operators record them in the innermost *effect scope* (one per converted function call, staged
branch and staged loop body) and tie them to that scope's results with control dependencies,
so a printed value is printed whenever the function's results are computed, as in TensorFlow
1.x AutoGraph's side-effect guards.
"""

from __future__ import annotations

import builtins
import threading
import weakref
from collections.abc import Callable

import numpy as np

from dataflow.framework import dtypes as _dtypes
from dataflow.framework import nest
from dataflow.framework.graph import SourceLocation, Tensor, _ipython_cell
from dataflow.framework.tensor_conversion import convert_to_tensor
from dataflow.ops.tensor_array_ops import TensorArray

__all__ = [
    "Undefined",
    "UndefinedReturn",
    "and_",
    "assert_",
    "call",
    "eq",
    "for_stmt",
    "if_exp",
    "if_stmt",
    "len_",
    "list_append",
    "loop_options",
    "not_",
    "not_eq",
    "or_",
    "print_",
    "range_",
    "while_stmt",
]


# -- undefined values ------------------------------------------------------------------------------
class Undefined:
    """The value of a name that has none on the path taken (``y`` assigned in one branch only,
    a variable assigned only inside a staged loop).  Using it raises `UnboundLocalError` with
    ``reason``, which says where and why the name has no value."""

    __slots__ = ("name", "reason")

    def __init__(self, name: str, reason: str = ""):
        self.name = name
        self.reason = reason

    def error(self) -> UnboundLocalError:
        return UnboundLocalError(
            self.reason or f"local variable '{self.name}' is used before it is assigned a value"
        )

    def _fail(self, *args, **kwargs):
        raise self.error()

    def __repr__(self) -> str:
        return f"Undefined({self.name!r})"

    __bool__ = __index__ = __int__ = __float__ = __len__ = __iter__ = __call__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _fail
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __getitem__ = __array__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = __rmatmul__ = _fail

    def __getattr__(self, name):
        raise self.error()


class UndefinedReturn(Undefined):
    """The return value before a ``return`` ran.  Converted code reads it only once its
    ``do_return`` flag is set, so a staged statement may give it a placeholder zero on the paths
    where it has no value (the other branch of a cond, the entry of a loop)."""

    __slots__ = ()


class _NeedsPlaceholder(Exception):
    """Raised while building a staged statement when a return value turns out to be defined
    on a path that the statement built before it knew its dtype; it is built again."""

    def __init__(self, index: int, value):
        tensor = value if _is_graph_tensor(value) else convert_to_tensor(value)
        self.index, self.dtype = index, tensor.dtype
        self.shape = tensor.shape.as_list() if tensor.shape.is_fully_defined() else []


def _placeholder_zero(dtype, shape):
    from dataflow.ops.array_ops import zeros

    return zeros(shape, dtype)


# -- where a statement is --------------------------------------------------------------------------
def _parameter_names(function) -> tuple:
    code = function.__code__
    return code.co_varnames[: code.co_argcount]


def _location(function) -> SourceLocation:
    """The user's line of the statement that ``function`` (a generated branch or body) came
    from."""
    code = function.__code__
    return SourceLocation(
        code.co_filename, code.co_firstlineno, code.co_name, _ipython_cell(code.co_filename)
    )


def _is_graph_tensor(value) -> bool:
    """A tensor whose value is known only when a graph runs (not an eager tensor, which has
    one now and runs Python's control flow, as AutoGraph decides)."""
    return isinstance(value, Tensor) and not getattr(value, "_is_eager", False)


def _is_number(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic, np.ndarray))


# -- side effects ----------------------------------------------------------------------------------
_local = threading.local()


def _effect_stack() -> list:
    stack = getattr(_local, "effects", None)
    if stack is None:
        stack = _local.effects = []
    return stack


class EffectScope:
    """Collects the side-effect ops made while it is open (innermost scope wins)."""

    def __enter__(self) -> list:
        self.effects: list = []
        _effect_stack().append(self.effects)
        return self.effects

    def __exit__(self, *exc_info) -> None:
        _effect_stack().pop()


def _record_effect(op) -> None:
    stack = _effect_stack()
    if stack and op is not None:
        stack[-1].append(op if not isinstance(op, Tensor) else op.op)


def attach_effects(values, effects: list):
    """``values`` (a nested structure) with each tensor made to wait for ``effects``."""
    if not effects:
        return values
    from dataflow.framework.graph import control_dependencies
    from dataflow.ops.array_ops import identity

    def attach(leaf):
        if isinstance(leaf, TensorArray):
            with control_dependencies(effects):
                return leaf._with_flow(identity(leaf.flow))
        if _is_graph_tensor(leaf):
            with control_dependencies(effects):
                return identity(leaf)
        return leaf

    return nest.map_structure(attach, values)


def _has_graph_leaf(values) -> bool:
    return any(
        _is_graph_tensor(leaf) or isinstance(leaf, TensorArray) for leaf in nest.flatten(values)
    )


# -- expressions -----------------------------------------------------------------------------------
def and_(left, right):
    """``a and b``: ``right`` (a thunk) runs only when ``left()`` is true; on a graph tensor, in
    a `cond`."""
    value = left()
    if _is_graph_tensor(value):
        from primitives.control_flow_ops import cond

        return cond(value, lambda: _as_bool_tensor(right()), lambda: value)
    return value and right()


def or_(left, right):
    """``a or b``: ``right`` (a thunk) runs only when ``left()`` is false."""
    value = left()
    if _is_graph_tensor(value):
        from primitives.control_flow_ops import cond

        return cond(value, lambda: value, lambda: _as_bool_tensor(right()))
    return value or right()


def not_(value):
    """``not x``: `logical_not` on a graph tensor."""
    if _is_graph_tensor(value):
        from dataflow.ops.math_ops import logical_not

        return logical_not(value)
    return not value


def eq(left, right):
    """``a == b`` as TensorFlow 2 computes it in a function, where a graph tensor's own ``==``
    (identity, as in TensorFlow 1.x) would not: when either side is a tensor, elementwise by
    `_compare`'s rules; else Python's (a variable's own ``==`` compares values)."""
    if isinstance(left, Tensor) or isinstance(right, Tensor):
        return _compare(left, right, "Equal")
    return left == right


def not_eq(left, right):
    """``a != b``: the negation of `eq` (elementwise when either side is a tensor)."""
    if isinstance(left, Tensor) or isinstance(right, Tensor):
        return _compare(left, right, "NotEqual")
    return left != right


def _compare(left, right, op_type: str):
    """``left == right`` (``op_type`` ``Equal``) or ``!=`` (``NotEqual``), one side a tensor,
    as TensorFlow 2's ``Tensor.__eq__``: None is simply unequal, shapes that cannot broadcast
    give one bool scalar (`math_ops.compare_for_equality`), and a Python value on the left
    takes the tensor's dtype as it would with the operator."""
    from dataflow.ops.math_ops import compare_for_equality

    if left is None or right is None:
        return op_type == "NotEqual"
    if not isinstance(left, Tensor):
        left, right = right, left
    return compare_for_equality(left, right, op_type)


def if_exp(condition, true_value, false_value):
    """``a if c else b`` with ``a`` and ``b`` as thunks: a `cond` on a graph tensor."""
    if _is_graph_tensor(condition):
        from primitives.control_flow_ops import cond

        return cond(condition, true_value, false_value)
    return true_value() if condition else false_value()


def _as_bool_tensor(value):
    if _is_graph_tensor(value):
        return value
    return convert_to_tensor(builtins.bool(value), dtype=_dtypes.bool)


def print_(*values, **kwargs):
    """``print``: `df.print` when a value is a graph tensor (recorded as a side effect), else
    Python's."""
    if any(_is_graph_tensor(v) for v in nest.flatten(list(values))):
        from dataflow.ops.misc_ops import print as df_print

        op = df_print(*values, **kwargs)
        _record_effect(op)
        return op
    return builtins.print(*values, **kwargs)


def assert_(condition, message=None):
    """``assert c, m``: `df.Assert` on a graph tensor (recorded as a side effect)."""
    if _is_graph_tensor(condition):
        from dataflow.ops.misc_ops import Assert

        data = [message() if message is not None else "Assertion failed"]
        op = Assert(condition, data)
        _record_effect(op)
        return op
    if not condition:
        raise AssertionError(message()) if message is not None else AssertionError()
    return None


def range_(*arguments):
    """``range``: a staged range when a bound is a graph tensor, else Python's."""
    if any(_is_graph_tensor(a) for a in arguments):
        return StagedRange(*arguments)
    return builtins.range(*arguments)


def len_(value):
    """``len``: a TensorArray's size, a graph tensor's first dimension (static when known), what
    the registration of an iterable read in the graph says (a dataset's number of elements)."""
    if isinstance(value, TensorArray):
        return value.size()
    for kind, registered in _READ_IN_GRAPH.items():
        if isinstance(value, kind) and registered.length is not None:
            length = registered.length(value)
            if length is not None:
                return length
    if _is_graph_tensor(value):
        if value.shape.ndims == 0:
            raise TypeError(f"len() of the scalar tensor '{value.name}' is not defined")
        static = value.shape[0] if value.shape.ndims is not None else None
        if static is not None:
            return static
        from dataflow.ops.array_ops import shape

        return shape(value)[0]
    return builtins.len(value)


def list_append(target, value):
    """``xs.append(v)``: a TensorArray is written at its end (and the new one returned); a
    Python list is appended to in place."""
    if isinstance(target, TensorArray):
        _settle_element_dtype(target, value)
        return target.write(target.size(), value)
    if isinstance(target, Undefined):
        raise target.error()
    target.append(value)
    return target


# -- calls -----------------------------------------------------------------------------------------
def running_converted_code() -> bool:
    """Whether converted code is running on this thread (a converted function's call has not
    returned); the conversion keeps the stack of them in ``_local.recursive``."""
    return bool(getattr(_local, "recursive", None))


# What `call` converts a function with: `conversion.converted_or_none`, registered by that module,
# which writes code that calls these operators.
_converted_or_none: Callable = lambda function: None  # noqa: E731 - replaced at registration


def register_converter(converted_or_none: Callable) -> None:
    global _converted_or_none
    _converted_or_none = converted_or_none


def call(function, *args, **kwargs):
    """Calls ``function``, converted first when it is user code (see `conversion.convertible`)."""
    converted = _converted_or_none(function)
    if converted is None:
        return function(*args, **kwargs)
    return converted(*args, **kwargs)


# -- if --------------------------------------------------------------------------------------------
def if_stmt(condition, if_true, if_false, state: tuple) -> tuple:
    """``if``: the branch functions take and return the statement's state.  A graph-tensor
    condition stages a `cond` with the state as its results."""
    if _is_graph_tensor(condition):
        return _staged_if(condition, if_true, if_false, tuple(state))
    return tuple(if_true(*state) if condition else if_false(*state))


def _stageable(value) -> bool:
    return _is_graph_tensor(value) or isinstance(value, TensorArray) or _is_number(value)


def _staged_if(condition, if_true, if_false, state: tuple) -> tuple:
    placeholders: dict = {}
    while True:
        try:
            return _build_staged_if(condition, if_true, if_false, state, placeholders)
        except _NeedsPlaceholder as missing:
            if missing.index in placeholders:
                raise
            placeholders[missing.index] = (missing.dtype, missing.shape)


def _build_staged_if(condition, if_true, if_false, state, placeholders) -> tuple:
    from dataflow.ops.misc_ops import group, no_op
    from primitives.control_flow_ops import cond

    names = _parameter_names(if_true)
    where = _location(if_true)
    # The true branch is built first and fixes which state goes through the cond's Merges:
    # "staged" values, "kept" non-tensor values both branches leave alone, "undefined" ones.
    plan: list = []
    true_values: list = []
    reasons: dict = {}
    had_effects = []

    def only_in(index, branch):
        return (
            f"'{names[index]}' is defined in only the {branch} branch of the if at {where}, and "
            f"used after it: give it a value before the if or in both branches"
        )

    def build(function, branch):
        with EffectScope() as effects:
            values = tuple(function(*state))
        staged = []
        for index, value in enumerate(values):
            if branch == "true":
                if isinstance(value, UndefinedReturn) and index in placeholders:
                    value = _placeholder_zero(*placeholders[index])
                if isinstance(value, Undefined):
                    plan.append("undefined")
                elif value is state[index] and not _stageable(value):
                    plan.append("kept")
                else:
                    if not _stageable(value):
                        raise _unstageable(names[index], value, "if", where)
                    plan.append("staged")
                    staged.append(value)
                true_values.append(value)
                continue
            kind, true_value = plan[index], true_values[index]
            if kind == "staged":
                if isinstance(value, Undefined):
                    if not isinstance(value, UndefinedReturn):
                        reasons[index] = only_in(index, "true")
                    tensor = convert_to_tensor(_flow(true_value))
                    shape = tensor.shape.as_list() if tensor.shape.is_fully_defined() else []
                    value = _placeholder_zero(tensor.dtype, shape)
                elif not _stageable(value):
                    raise _unstageable(names[index], value, "if", where)
                else:
                    value = _same_dtype(names[index], true_value, value, where)
                staged.append(value)
            elif kind == "undefined" and not isinstance(value, Undefined):
                if isinstance(true_value, UndefinedReturn):
                    raise _NeedsPlaceholder(index, value)
                reasons[index] = only_in(index, "false")
            elif kind == "kept" and value is not state[index]:
                raise _unstageable(names[index], value, "if", where)
        if effects:
            had_effects.append(True)
        if "staged" not in plan:
            return [group(*effects) if effects else no_op()]
        return attach_effects(staged, effects)

    merged = cond(condition, lambda: build(if_true, "true"), lambda: build(if_false, "false"))
    merged = list(merged) if isinstance(merged, (list, tuple)) else [merged]
    if had_effects:
        _record_effect(merged[0])
    results = []
    for index, kind in enumerate(plan):
        if index in reasons:
            results.append(Undefined(names[index], reasons[index]))
            if kind == "staged":
                merged.pop(0)
        elif kind == "staged":
            results.append(merged.pop(0))
        elif kind == "kept":
            results.append(state[index])
        else:
            results.append(true_values[index])
    return tuple(results)


def _flow(value):
    return value.flow if isinstance(value, TensorArray) else value


def _same_dtype(name, reference, value, where):
    """``value`` as a tensor of ``reference``'s dtype, or a TypeError naming ``name``."""
    if isinstance(reference, TensorArray) or isinstance(value, TensorArray):
        return value
    reference = convert_to_tensor(reference) if not _is_graph_tensor(reference) else reference
    if not _is_graph_tensor(value):
        value = convert_to_tensor(value, preferred_dtype=reference.dtype)
    if value.dtype != reference.dtype:
        raise TypeError(
            f"'{name}' is {reference.dtype.name} in the true branch but {value.dtype.name} in the "
            f"false branch of the if at {where}: both branches must give it one dtype"
        )
    return value


def _unstageable(name, value, statement, where) -> TypeError:
    return TypeError(
        f"'{name}' is a Python {type(value).__name__} ({value!r:.60}) changed in the {statement} "
        f"at {where}, whose condition is a graph tensor: only tensors, numbers and lists that are "
        f"appended to can change there"
    )


# -- loops -----------------------------------------------------------------------------------------
class _Unspecified:
    """The default of `set_loop_options`'s arguments: the option is left as it is."""

    def __repr__(self) -> str:
        return "UNSPECIFIED"


UNSPECIFIED = _Unspecified()


def loop_options(
    parallel_iterations=UNSPECIFIED,
    swap_memory=UNSPECIFIED,
    maximum_iterations=UNSPECIFIED,
    shape_invariants=UNSPECIFIED,
) -> dict:
    """The options a ``set_loop_options`` call in a loop's body gives (hoisted before the loop
    by the conversion): ``shape_invariants`` (pairs of a variable and the shape it may take)
    and the `while_loop` arguments ``parallel_iterations``, ``swap_memory`` and
    ``maximum_iterations``, those that were given."""
    options = {
        "parallel_iterations": parallel_iterations,
        "swap_memory": swap_memory,
        "maximum_iterations": maximum_iterations,
        "shape_invariants": shape_invariants,
    }
    options = {k: v for k, v in options.items() if v is not UNSPECIFIED}
    options["shape_invariants"] = list(options.get("shape_invariants", ()))
    return options


def set_loop_options(
    parallel_iterations=UNSPECIFIED,
    swap_memory=UNSPECIFIED,
    maximum_iterations=UNSPECIFIED,
    shape_invariants=UNSPECIFIED,
) -> None:
    """Options for the staged loop whose body begins with this call (AutoGraph's
    ``tf.autograph.experimental.set_loop_options``): ``shape_invariants`` pairs a loop
    variable with the shape it may take across iterations (``[(v, [None])]``), and
    ``parallel_iterations``, ``swap_memory`` and ``maximum_iterations`` are passed to the
    `while_loop` the loop becomes (``maximum_iterations`` also bounds a staged ``for``).
    Converted code reads the call statically; called as Python it does nothing, as in
    TensorFlow."""


def while_stmt(test, body, state: tuple, options=None) -> tuple:
    """``while``: ``test`` and ``body`` are functions of the loop's state.  Runs as Python while
    the test gives Python values; the first time it gives a graph tensor, the rest of the loop
    is staged as a `while_loop` from the state reached."""
    state = tuple(state)
    while True:
        condition = test(*state)
        if _is_graph_tensor(condition):
            return _staged_loop(test, body, state, "while", None, options)
        if not condition:
            return state
        state = tuple(body(*state))


# Iterables that a staged ``for`` reads one element at a time through an iterator of the graph
# (``df.data.Dataset`` and its iterators, which `dataflow.data`, a higher layer, registers):
# their class -> what `register_read_in_graph` was given.
_READ_IN_GRAPH: dict = {}


class _ReadInGraph:
    __slots__ = ("start", "length")

    def __init__(self, start: Callable, length):
        self.start = start
        self.length = length


def register_read_in_graph(cls: type, start: Callable, length=None) -> None:
    """Lets ``for x in value`` (``value`` an instance of ``cls``) stage a loop that reads its
    elements in the graph: ``start(value)`` builds what the loop reads from (an iterator, made
    once before the loop) and returns ``(read, pack, finish)``: ``read()`` builds the reading
    of one element, ``(has_value, components)`` (a bool tensor, and the element's flat tensors,
    whose values count only when ``has_value`` is true), ``pack(components)`` makes the element
    of them, and ``finish(done)`` is told the tensor that is ready when the loop has ended (so
    later reads can wait for it).  ``start`` returns None where the loop should run as Python
    (a dataset read eagerly).  ``length(value)``, when given, is what ``len(value)`` is in
    converted code (None: Python's ``len``)."""
    _READ_IN_GRAPH[cls] = _ReadInGraph(start, length)


class _ElementReader:
    """What a staged ``for`` over a registered iterable reads from (see
    `register_read_in_graph`); `first` is the reading before the loop, built once however
    many times the loop is built."""

    def __init__(self, read: Callable, pack: Callable, finish: Callable):
        self.read = read
        self.pack = pack
        self.finish = finish
        self._first = None

    def first(self) -> tuple:
        if self._first is None:
            self._first = self.read()
        return self._first


def _element_reader(iterated):
    for kind, registered in _READ_IN_GRAPH.items():
        if isinstance(iterated, kind):
            started = registered.start(iterated)
            return None if started is None else _ElementReader(*started)
    return None


def for_stmt(iterated, body, state: tuple, extra_test=None, options=None) -> tuple:
    """``for``: ``body(item, *state)`` returns the next state; ``extra_test(*state)`` (from
    ``break`` and ``return``) ends the loop when false.  A staged range, a graph tensor (over
    its first dimension), a TensorArray, or an iterable read in the graph (a dataset, see
    `register_read_in_graph`) stages a `while_loop`; anything else runs as Python."""
    state = tuple(state)
    if isinstance(iterated, (StagedRange, TensorArray)) or _is_graph_tensor(iterated):
        return _staged_loop(extra_test, body, state, "for", iterated, options)
    reader = _element_reader(iterated)
    if reader is not None:
        return _staged_loop(extra_test, body, state, "for", reader, options)
    for item in iterated:
        if extra_test is not None:
            going_on = extra_test(*state)
            if _is_graph_tensor(going_on):
                where = _location(body)
                raise NotImplementedError(
                    f"The for loop at {where} iterates over a Python {type(iterated).__name__} "
                    f"but leaves it (break or return) on a graph tensor's value: iterate over "
                    f"a tensor instead (for example range(df.constant(n))) to stage the loop"
                )
            if not going_on:
                break
        state = tuple(body(item, *state))
    return state


class StagedRange:
    """``range(start, limit, delta)`` with graph-tensor bounds (what a staged ``for`` iterates)."""

    def __init__(self, *arguments):
        from dataflow.ops.math_ops import cast

        if not 1 <= len(arguments) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(arguments)}")
        if len(arguments) == 1:
            start, limit, delta = 0, arguments[0], 1
        else:
            start, limit, delta = (*arguments, 1)[:3]

        def as_int(value):
            tensor = convert_to_tensor(value, preferred_dtype=_dtypes.int32)
            if not tensor.dtype.is_integer:
                raise TypeError(f"range() takes integers, got a {tensor.dtype.name} tensor")
            return tensor if tensor.dtype == _dtypes.int32 else cast(tensor, _dtypes.int32)

        self.start, self.limit, self.delta = as_int(start), as_int(limit), as_int(delta)


def _loop_entry(name, value, where):
    """A state value as a loop variable: numbers become tensors, lists TensorArrays."""
    if isinstance(value, list):
        return _list_as_tensor_array(name, value, where)
    if isinstance(value, TensorArray) or _is_graph_tensor(value):
        return value
    if _is_number(value):
        return convert_to_tensor(value)
    return None


def _list_as_tensor_array(name, values, where):
    """A Python list that changes in a staged loop, as a TensorArray (the loop appends to it).
    An empty list's dtype is not known yet: it is settled by the first append."""
    if not values:
        array = TensorArray(_dtypes.float32, size=0, dynamic_size=True, infer_shape=True)
        _UNSETTLED[array.handle.op] = True
        return array
    first = convert_to_tensor(values[0])
    array = TensorArray(first.dtype, size=0, dynamic_size=True, infer_shape=True)
    for index, value in enumerate(values):
        array = array.write(index, value)
    return array


# TensorArrayV3 ops made for empty lists, whose dtype the first append settles (until then
# the op holds a provisional float32; nothing reads the array before that append).
_UNSETTLED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _settle_element_dtype(array: TensorArray, value) -> None:
    op = array.handle.op
    if _UNSETTLED.pop(op, None) is None:
        return
    dtype = (value if _is_graph_tensor(value) else convert_to_tensor(value)).dtype
    op.attrs["dtype"] = dtype
    array._dtype = dtype


def _settled(array):
    dtype = array.handle.op.attrs["dtype"]
    if array.dtype != dtype:
        array._dtype = dtype
    return array


def _staged_loop(test, body, state: tuple, kind: str, iterated, options) -> tuple:
    """Stages the loop; a return value first set inside it gets a placeholder zero before it
    (the loop is built again: the first, unfinished one stays in the graph, unused)."""
    state = list(state)
    while True:
        try:
            return _build_staged_loop(test, body, tuple(state), kind, iterated, options)
        except _NeedsPlaceholder as missing:
            if not isinstance(state[missing.index], UndefinedReturn):
                raise
            state[missing.index] = _placeholder_zero(missing.dtype, missing.shape)


def _build_staged_loop(test, body, state: tuple, kind: str, iterated, options) -> tuple:
    """Stages a while loop (``kind`` "while") or a for loop over ``iterated`` with the state
    values that can be loop variables; Undefined ones stay body temporaries."""
    from dataflow.ops.array_ops import shape
    from dataflow.ops.gather_ops import gather
    from dataflow.ops.math_ops import greater, less, logical_and
    from primitives.control_flow_ops import while_loop

    where = _location(body)
    names = _parameter_names(body)[1:] if kind == "for" else _parameter_names(body)
    carried, kept = [], {}
    for index, (name, value) in enumerate(zip(names, state)):
        if isinstance(value, Undefined):
            continue
        entry = _loop_entry(name, value, where)
        if entry is None:
            kept[index] = value
        else:
            carried.append((index, entry))
    entries = [entry for _, entry in carried]
    invariants = _shape_invariants(names, state, carried, options, where)
    had_effects = []

    def full_state(values):
        full = [
            value
            if isinstance(value, UndefinedReturn)
            else Undefined(
                name,
                f"'{name}' has no value before the {kind} loop at {where}, whose condition is a "
                f"graph tensor: give it one before the loop to use it after or across iterations",
            )
            for name, value in zip(names, state)
        ]
        for index, value in kept.items():
            full[index] = value
        for (index, _), value in zip(carried, values):
            full[index] = _settled(value) if isinstance(value, TensorArray) else value
        return full

    if isinstance(iterated, _ElementReader):
        # The element is read before the loop and at the end of each iteration, and carried
        # into the next with a flag saying whether there was one; the loop goes on while there
        # was (and ``test``, from break and return, allows).  A body that leaves the loop
        # reads no further element, so an iterator read on after the loop is where
        # TensorFlow's would be.  The read waits for the body's results; the body itself is
        # in no cond, so nothing in it depends on whether an element came.
        from dataflow.framework.graph import control_dependencies
        from primitives.control_flow_ops import cond

        has_first, first = iterated.first()
        width = len(first)

        def loop_test(has_next, *values):
            going_on = has_next
            if test is not None:
                extra = test(*full_state(values[width:]))
                going_on = logical_and(going_on, _as_bool_tensor(extra))
            return going_on

        def loop_body(has_next, *values):
            current = list(values[:width])
            # The flag comes back made to wait for the body's side effects (print, assert).
            done, *results = run_body(values[width:], iterated.pack(current), leading=[has_next])
            ready = [done] + [_flow(r) for r in results if _is_graph_tensor(_flow(r))]

            def read_next():
                with control_dependencies(ready):
                    has_value, components = iterated.read()
                return [has_value, *components]

            if test is None:
                following = read_next()
            else:
                going_on = _as_bool_tensor(test(*full_state(results)))
                following = cond(going_on, read_next, lambda: [done, *current], strict=True)
            return (*following, *results)

        loop_vars = [has_first, *first, *entries]
    elif kind == "for":
        if isinstance(iterated, StagedRange):
            start, limit, delta = iterated.start, iterated.limit, iterated.delta

            def item_at(position):
                return position

            def more(position):
                from dataflow.ops.math_ops import logical_or

                positive = greater(delta, 0)
                return logical_or(
                    logical_and(positive, less(position, limit)),
                    logical_and(less(delta, 0), greater(position, limit)),
                )

        else:
            start, delta = convert_to_tensor(0), 1
            if isinstance(iterated, TensorArray):
                size = iterated.size()
                array = iterated

                def item_at(position):
                    return array.read(position)

            else:
                tensor = iterated
                if tensor.shape.ndims == 0:
                    raise TypeError(f"The for loop at {where} iterates over a scalar tensor")
                size = shape(tensor)[0]

                def item_at(position):
                    return gather(tensor, position)

            def more(position):
                return less(position, size)

        def loop_test(position, *values):
            going_on = more(position)
            if test is not None:
                extra = test(*full_state(values))
                going_on = logical_and(going_on, _as_bool_tensor(extra))
            return going_on

        def loop_body(position, *values):
            return (position + delta, *run_body(values, item_at(position)))

        loop_vars = [start, *entries]
    else:

        def loop_test(*values):
            return _as_bool_tensor(test(*full_state(values)))

        def loop_body(*values):
            return run_body(values, None)

        loop_vars = entries

    def run_body(values, item, leading=()):
        with EffectScope() as effects:
            full = full_state(values)
            outputs = tuple(body(item, *full) if kind == "for" else body(*full))
        results = []
        for index, value in kept.items():
            if outputs[index] is not value:
                raise _unstageable(names[index], outputs[index], f"{kind} loop", where)
        for index, before in enumerate(state):
            if isinstance(before, UndefinedReturn) and not isinstance(outputs[index], Undefined):
                raise _NeedsPlaceholder(index, outputs[index])
        for (index, _), before in zip(carried, values):
            shape = invariants[len(results)]
            results.append(_next_value(names[index], before, outputs[index], kind, where, shape))
        if effects:
            had_effects.append(True)
        return attach_effects([*leading, *results], effects)

    if not loop_vars:
        raise ValueError(
            f"The while loop at {where} has a graph-tensor condition but changes no variable, "
            "so it would never end or never run"
        )
    if isinstance(iterated, _ElementReader):
        shape_invariants = [None] * (1 + width) + invariants  # the flag's and element's own
    else:
        shape_invariants = ([None] if kind == "for" else []) + invariants
    loop_arguments = {
        k: v
        for k, v in (options or {}).items()
        if k in ("parallel_iterations", "swap_memory", "maximum_iterations")
    }
    if isinstance(iterated, _ElementReader):
        # One iteration at a time, as an iterator is read: an iteration's body may restart
        # iterators of its own, and reads follow the bodies before them.
        loop_arguments["parallel_iterations"] = 1
    finals = while_loop(
        loop_test,
        loop_body,
        loop_vars,
        shape_invariants=shape_invariants if any(s is not None for s in invariants) else None,
        return_same_structure=True,
        **loop_arguments,
    )
    finals = list(finals)
    if isinstance(iterated, _ElementReader):
        iterated.finish(finals[0])
        if had_effects:  # the flag waits for every iteration's effects
            _record_effect(finals[0])
        finals = finals[1 + width :]
    elif kind == "for":
        finals = finals[1:]
    if had_effects and finals and not isinstance(iterated, _ElementReader):
        _record_effect(_flow(finals[0]))
    results = full_state(finals)
    for index, name in enumerate(names):
        if isinstance(results[index], Undefined) and not isinstance(
            results[index], UndefinedReturn
        ):
            results[index] = Undefined(
                name,
                f"'{name}' is assigned only inside the {kind} loop at {where}, whose condition "
                f"is a graph tensor, and used after it: give it a value before the loop",
            )
    return tuple(results)


def _shape_invariants(names, state, carried, options, where) -> list:
    """Per carried loop variable, the shape ``options`` lets it take (None: its own)."""
    from dataflow.framework.tensor_shape import as_shape

    pairs = (options or {}).get("shape_invariants", [])
    invariants = [None] * len(carried)
    for value, shape in pairs:
        matches = [i for i, (index, _) in enumerate(carried) if state[index] is value]
        if not matches:
            raise ValueError(
                f"set_loop_options names a shape invariant for {value!r:.60}, which is not a "
                f"variable of the loop at {where} (variables: {', '.join(names)})"
            )
        invariants[matches[0]] = as_shape(shape)
    return invariants


def _next_value(name, before, value, kind, where, invariant=None):
    """The body's new value of a loop variable, checked against its value before: same dtype,
    and a shape that fits (TensorArrays are checked by the loop itself)."""
    if isinstance(before, TensorArray):
        if not isinstance(value, TensorArray):
            raise TypeError(
                f"'{name}' is a list (a TensorArray) before the {kind} loop at {where} but "
                f"{type(value).__name__} after an iteration"
            )
        return value
    if isinstance(value, Undefined):
        raise value.error()
    if not (_is_graph_tensor(value) or _is_number(value)):
        raise _unstageable(name, value, f"{kind} loop", where)
    if not _is_graph_tensor(value):
        value = convert_to_tensor(value, preferred_dtype=before.dtype)
    if value.dtype != before.dtype:
        raise TypeError(
            f"'{name}' changes dtype from {before.dtype.name} to {value.dtype.name} across "
            f"iterations of the {kind} loop at {where}: a loop variable keeps one dtype (cast it, "
            f"or give it the right dtype before the loop)"
        )
    allowed = before.shape if invariant is None else invariant
    if not value.shape.is_compatible_with(allowed):
        raise ValueError(
            f"'{name}' changes shape from {before.shape} to {value.shape} across iterations of "
            f"the {kind} loop at {where}: a loop variable keeps its shape unless the loop's "
            f"body begins with df.autograph.set_loop_options(shape_invariants=[({name}, shape)])"
        )
    return value
