"""Python source for one region: its nodes' kernels called in order, on local variables.

The generated function takes the region's inputs (the values of edges from outside it) in
order and returns its outputs (the values used outside it, or fetched): one value, a tuple, or
None when nothing leaves it.  Each node is one line, commented with its op's name, type and
the user's file:line; a value used only inside the region is a local variable and is released
when the function returns.

A graph may come from an untrusted file, so no text of it (an op's name or location, a fused
step's, a cond's or loop's name) is ever pasted into generated source: it appears only as a
string literal (`quoted`: in comments, where a newline would otherwise end the comment and
start a statement, and in the file name the code is compiled under) or reduced to an
identifier of ASCII letters, digits and underscores (`identifier`).  These two helpers serve
every code generator of the package.

A line calls the node's kernel, bound once when the function is made, except where a cheaper
expression is known to give the same value of the same type:

- a constant (an op whose output is its ``value`` attribute) is that value, bound once;
- ``np.add``, ``np.subtract``, ``np.multiply`` of two float32 or float64 numpy scalars become
  ``b + a``, ``a - b``, ``b * a``: numpy scalars do the same IEEE operation in their own type as
  the ufunc, some ten times faster.  Both operands must be known to be numpy scalars (a 0-d
  constant, or the result of a ufunc or of such an expression whose output has the static
  shape ``()``): a 0-d array or a Python float would go through the ufunc or Python's own
  arithmetic instead.  Addition and multiplication swap their operands because, of two NaNs,
  numpy's scalar operators keep the second operand's and the ufunc the first's (its sign and
  payload bits).  Integers always call the ufunc: numpy's scalar operators warn on overflow
  where the ufunc wraps silently.
- a comparison (``np.equal``, ``np.less``, ...) of two values of static shape ``()`` and a
  boolean, integer or float dtype becomes ``a == b``, ``a < b``, ...: whether each operand is a
  numpy scalar or a 0-d array, the operator gives the ufunc's ``np.bool_`` (a 0-d array's
  operator calls the ufunc itself), and a comparison neither warns nor has NaN bits to keep;
- ``FloorMod`` and ``FloorDiv`` of integers of static shape ``()`` by a constant other than 0
  and -1 become ``a % c`` and ``a // c``: the kernel's checks (a zero divisor) and its
  ``errstate`` (silencing the overflow of ``MIN // -1``) cannot matter for such a divisor, and
  numpy's integer ``%`` and ``//`` are the floored ones of ``np.mod`` and ``np.floor_divide``,
  for a 0-d array (through the ufunc) as for a numpy scalar (whose own code is some fifty times
  cheaper than the kernel).
- ``+ - *`` of values of static shape ``()`` whose kinds are not known (a fed value is a 0-d
  array, a loop variable is its Enter's value in the first iteration and an op's result after)
  test at run time whether the operator is exact, and call the kernel where it is not:
  ``b + a if type(a) is np_float32 and type(b) is np_float32 else k(a, b)`` for floats (only
  two numpy scalars give the ufunc's NaN), ``a + b if MIN <= int(a) + int(b) <= MAX else
  k(a, b)`` for integers (only a result that fits cannot overflow, so nothing warns);
- a ``Cast`` of a value of static shape ``()`` from a boolean or integer to a float, or to a
  type that holds every value of its own, is ``np_float32(a) if type(a) is np_int32 else
  k(a)``: the scalar type converts a numpy scalar as ``astype`` does, and ``astype`` keeps a
  0-d array a 0-d array.

One difference remains with the float operators: where the ufunc warns ``invalid value
encountered in add``, numpy's scalar operator says ``... in scalar add`` (same category, same
cases).

A ``FusedElementwise`` node (`dataflow.passes.elementwise_fusion`) of small values (``inline``:
its output is known to hold few elements) is written out step by step, one line per step of
its chain, each an expression or a call of the step's ufunc as above: the values are the ones
its kernel computes, which only adds ``out=`` buffers that save allocations on large arrays (so a
large or unknown-size chain keeps its kernel).  A chain with a "quiet" step (division,
logarithms, ...) runs under ``np.errstate(all="ignore")``, as its kernel does.

A kernel that returns its one input unchanged (``Identity``, ``LoopCond``) is an assignment.

A ``Split`` or ``SplitV`` into several pieces whose input has a static size along the split
axis is sliced in place: ``x[:, 0:128], x[:, 128:256], ...`` when the value's rank and size
along that axis are the static ones (else the kernel, which raises its error): the same views
of the same array that ``np.split`` makes, without its per-call bookkeeping, which costs ten
times the slicing (an LSTM cell splits its gates so in every step).

A kernel that raises is found by the line that raised (`CompiledRegion.locate`), so an error
names the same op, with the same input values, as the interpreter's; a failing step of a
written-out chain is named as the fused kernel names it (``error.fused_step``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from dataflow.ops.array_ops import _identity
from executor.program import Node
from primitives.raw_ops import _pass_through

from ...framework.op_registry import get_op_def

# ufunc -> (operator, whether the operands swap: see the module docstring)
_OPERATORS = {np.add: ("+", True), np.subtract: ("-", False), np.multiply: ("*", True)}
_PASS_THROUGH = (_identity, _pass_through)
_OPERATOR_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_COMPARISONS = {
    np.equal: "==",
    np.not_equal: "!=",
    np.less: "<",
    np.less_equal: "<=",
    np.greater: ">",
    np.greater_equal: ">=",
}
_INTEGER_DIVISIONS = {"FloorMod": "%", "FloorDiv": "//"}


def return_statement(results: Sequence[str]) -> str:
    """The ``return`` of a generated function: nothing, one value, or a tuple of them."""
    if not results:
        return "return None"
    if len(results) == 1:
        return f"return {results[0]}"
    return f"return ({', '.join(results)},)"


def value_name(node_index: int, output: int, num_outputs: int) -> str:
    return f"v{node_index}" if num_outputs == 1 else f"v{node_index}_{output}"


def quoted(text: Any) -> str:
    """``text`` (a name, a location) as generated source may hold it: a Python string literal,
    of ASCII characters only (``ascii``: ``repr`` with every other character escaped), so no
    character of it ends a comment or a string, whatever the file it came from."""
    return ascii(str(text))


def identifier(prefix: str, name: str) -> str:
    """A function name made of ``prefix`` and ``name`` with every character but ASCII letters
    and digits replaced by ``_`` (``str.isalnum`` alone accepts ``²``, which no identifier
    holds)."""
    return prefix + "".join(c if c.isascii() and c.isalnum() else "_" for c in name)


def describe(node: Node) -> str:
    """The comment text of a node's line: its op's name, type and location, the name and
    location `quoted`."""
    op = node.tag
    location = quoted(getattr(op, "location", ""))
    for attribute in ("compiled_cond", "compiled_loop"):
        compiled = getattr(node.kernel, attribute, None)
        if compiled is not None:
            return (
                f"the compiled {compiled.kind} {quoted(compiled.name)} above, built at {location}"
            )
    return f"{quoted(node.name)} ({getattr(op, 'type', '?')}) at {location}"


def step_comment(record, position: int) -> str:
    """The comment text of step ``position`` of a fused chain, of ``record`` ``[op type,
    operands, name, location]``: the type is a registered op's (the chain's inference looked
    it up), the name and location are `quoted`."""
    op_type, _, name, location = record
    return f"{quoted(name)} ({get_op_def(op_type).type}) at {quoted(location)}, step {position + 1}"


def _output_dtype(node: Node) -> Optional[np.dtype]:
    outputs = getattr(node.tag, "outputs", ())
    if len(outputs) != 1:
        return None
    try:
        return np.dtype(outputs[0].dtype.as_numpy_dtype)
    except (TypeError, AttributeError):
        return None


def _is_scalar_output(node: Node) -> bool:
    """Whether the node's one output has the static shape ``()``."""
    outputs = getattr(node.tag, "outputs", ())
    if len(outputs) != 1:
        return False
    shape = getattr(outputs[0], "shape", None)
    dims = getattr(shape, "dims", None)
    return dims is not None and len(dims) == 0


def _scalar_inputs(node: Node, kinds: str) -> bool:
    """Whether each input of ``node`` has the static shape ``()`` and a dtype of one of the
    numpy ``kinds`` (``"biuf"``)."""
    inputs = getattr(node.tag, "inputs", ())
    if not inputs or len(inputs) != len(node.inputs):
        return False
    for tensor in inputs:
        dims = getattr(getattr(tensor, "shape", None), "dims", None)
        try:
            kind = np.dtype(tensor.dtype.as_numpy_dtype).kind
        except (TypeError, AttributeError):
            return False
        if dims is None or len(dims) != 0 or kind not in kinds:
            return False
    return True


def _written_out_steps(node: Node) -> Optional[list]:
    """The steps ``(ufunc, operand positions, record, quiet)`` of a fused chain that is
    written out, or None to call the node's kernel (see the module docstring)."""
    op = node.tag
    if getattr(op, "type", None) != "FusedElementwise" or node.inline is not True:
        return None
    if getattr(node.kernel, "native_array_region", False):
        return None  # a native array kernel whose last member is the chain: call the kernel
    steps = []
    for record in op.attrs["steps"]:
        extra = get_op_def(record[0]).extra
        steps.append((extra["ufunc"], tuple(record[1]), record, bool(extra.get("quiet"))))
    return steps


def _constant_value(node: Node) -> Any:
    """The value of a constant node, or None: an op whose one output is its attr ``value``."""
    op_def = getattr(node.tag, "_op_def", None)
    attr = op_def.extra.get("output_is_attr") if op_def is not None else None
    if attr is None or node.inputs or node.num_outputs != 1:
        return None
    value = node.tag.attrs.get(attr)
    return value if isinstance(value, np.ndarray) else None


class LineEmitter:
    """Writes the line of one node, in the order nodes run, binding what it calls in
    ``bound``; it remembers which names hold float numpy scalars (a 0-d constant under its
    scalar's name), for the expressions of the module docstring.  A node whose kernel wants the
    run's context is passed the name ``context``."""

    def __init__(self, bound: dict):
        self.bound = bound
        self.float_scalars: set[str] = set()  # names known to hold float numpy scalars
        self.integer_constants: set[str] = set()  # bound integer constants' numpy scalars
        self.python_ints: dict[str, str] = {}  # an integer constant's scalar -> its int's name
        self.scalars: dict[str, str] = {}  # a 0-d constant's name -> its numpy scalar's name

    def scalar_alias(self, name: str, producer: Node) -> Optional[str]:
        """The line ``<name>_scalar = <name>[()]`` that binds, once, the numpy scalar of a
        value of static shape ``()`` (a loop's invariant input, a 0-d array when fed), for the
        lines where only its value counts (operands of a ufunc, a comparison or an operator
        whose test needs numpy scalars); the value itself stays where its kind shows (a
        ``Cast``, an ``Identity``, a result).  None when ``producer``'s output is not such
        a value."""
        dtype = _output_dtype(producer)
        if not _is_scalar_output(producer) or dtype is None or dtype.kind not in "biuf":
            return None
        alias = f"{name}_scalar"
        self.scalars[name] = alias
        if dtype in _OPERATOR_DTYPES:
            self.float_scalars.add(alias)
        return f"{alias} = {name}[()]"

    def lines(self, node: Node, index: int, args: tuple) -> list[tuple[str, Any]]:
        """The lines ``(text, step)`` of one node, commented: one line, or one per step of a
        written-out fused chain, ``step`` then being ``(record, operand names)`` for
        `locate_member` (else None).  ``args`` are the names of the node's inputs."""
        steps = _written_out_steps(node)
        if steps is not None:
            return self._write_out(index, node, args, steps)
        return [(f"{self.line(node, index, args)}  # {describe(node)}", None)]

    def _expression(self, ufunc, operands: tuple, dtype, target: str) -> Optional[str]:
        """``target = <operator expression>`` for a ufunc of two float scalars, else None;
        notes what ``target`` will hold."""
        scalar_result = dtype in _OPERATOR_DTYPES
        operator = _OPERATORS.get(ufunc) if len(operands) == 2 else None
        names = tuple(self.scalars.get(a, a) for a in operands)
        if (
            operator is None
            or not scalar_result
            or not all(name in self.float_scalars for name in names)
        ):
            return None
        symbol, swap = operator
        left, right = names[::-1] if swap else names
        self.float_scalars.add(target)
        return f"{target} = {left} {symbol} {right}"

    def _scalar_operator(self, node: Node, args: tuple, target: str) -> Optional[str]:
        """``target = a <op> b`` for a comparison, or an integer ``FloorMod``/``FloorDiv`` by a
        constant, of scalars (see the module docstring), else None."""
        if len(args) != 2 or node.num_outputs != 1:
            return None
        left, right = (self.scalars.get(a, a) for a in args)
        symbol = _COMPARISONS.get(node.kernel) if isinstance(node.kernel, np.ufunc) else None
        if symbol is not None and _scalar_inputs(node, "biuf"):
            return f"{target} = {left} {symbol} {right}"
        symbol = _INTEGER_DIVISIONS.get(getattr(node.tag, "type", None))
        divisor = (
            self.bound.get(right) if right in self.float_scalars | self.integer_constants else None
        )
        if symbol is None or divisor is None or not _scalar_inputs(node, "iu"):
            return None
        if divisor == 0 or divisor == -1:
            return None
        return f"{target} = {left} {symbol} {right}"

    def _checked_arithmetic(self, node: Node, index: int, args: tuple, target: str):
        """``target = a <op> b if <test> else k(a, b)`` for ``+ - *`` of two values of static
        shape ``()``: the operator where a test at run time shows it is exact (floats: both
        operands are numpy scalars; integers: the exact result fits the dtype), else the
        kernel; None for other nodes."""
        operator = _OPERATORS.get(node.kernel) if len(args) == 2 else None
        dtype = _output_dtype(node)
        if operator is None or node.num_outputs != 1 or not _scalar_inputs(node, "iuf"):
            return None
        names = tuple(self.scalars.get(a, a) for a in args)
        symbol, swap = operator
        self.bound[f"k{index}"] = node.kernel
        call = f"k{index}({', '.join(args)})"
        if dtype in _OPERATOR_DTYPES:
            self.bound[f"np_{dtype.name}"] = dtype.type
            tests = [f"type({n}) is np_{dtype.name}" for n in names if n not in self.float_scalars]
            left, right = names[::-1] if swap else names
            self.float_scalars.add(target)  # a ufunc of 0-d operands gives a numpy scalar too
            return f"{target} = {left} {symbol} {right} if {' and '.join(tests)} else {call}"
        if dtype is None or dtype.kind not in "iu":
            return None
        info = np.iinfo(dtype)
        exact = f" {symbol} ".join(self.python_ints.get(n, f"int({n})") for n in names)
        fits = f"{info.min} <= {exact} <= {info.max}"
        return f"{target} = {names[0]} {symbol} {names[1]} if {fits} else {call}"

    def _checked_cast(self, node: Node, index: int, args: tuple, target: str) -> Optional[str]:
        """``target = T(a) if type(a) is S else k(a)`` for a ``Cast`` of a value of static
        shape ``()`` from boolean or integer ``S`` to a float, or to an integer or float ``T``
        that holds every value of ``S``: numpy's constructor of a scalar type converts a
        numpy scalar as ``astype`` does, and a 0-d array keeps the kernel (``astype`` keeps it
        a 0-d array); None for other nodes."""
        if getattr(node.tag, "type", None) != "Cast" or len(args) != 1 or node.num_outputs != 1:
            return None
        if not _scalar_inputs(node, "biuf"):
            return None
        source = np.dtype(node.tag.inputs[0].dtype.as_numpy_dtype)
        dtype = _output_dtype(node)
        if dtype is None or dtype.kind not in "biuf":
            return None
        if not ((source.kind in "biu" and dtype.kind == "f") or np.can_cast(source, dtype, "safe")):
            return None
        self.bound[f"k{index}"] = node.kernel
        self.bound[f"np_{source.name}"] = source.type
        self.bound[f"np_{dtype.name}"] = dtype.type
        (name,) = args
        converted, kernel = f"np_{dtype.name}({name})", f"k{index}({name})"
        return f"{target} = {converted} if type({name}) is np_{source.name} else {kernel}"

    def _split_views(self, node: Node, index: int, args: tuple) -> Optional[str]:
        """The slicing line of a ``Split`` or ``SplitV`` whose pieces the static shape fixes
        (see the module docstring), or None."""
        op_type = getattr(node.tag, "type", None)
        if op_type not in ("Split", "SplitV") or len(args) != 1 or node.num_outputs < 2:
            return None
        dims = getattr(getattr(node.tag.inputs[0], "shape", None), "dims", None)
        if not dims:
            return None
        rank = len(dims)
        axis = node.tag.attrs["axis"]
        if not isinstance(axis, int) or not -rank <= axis < rank:
            return None
        axis %= rank
        size = dims[axis]
        size = getattr(size, "value", size)
        if not isinstance(size, int):
            return None
        if op_type == "Split":
            count = node.tag.attrs["num_split"]
            if count != node.num_outputs or size % count:
                return None
            pieces = [size // count] * count
        else:
            sizes = [int(s) for s in node.tag.attrs["size_splits"]]
            if len(sizes) != node.num_outputs or sizes.count(-1) > 1:
                return None
            known = sum(s for s in sizes if s != -1)
            pieces = [size - known if s == -1 else s for s in sizes]
            if min(pieces) < 0 or sum(pieces) != size:
                return None
        (name,) = args
        self.bound[f"k{index}"] = node.kernel
        views, start = [], 0
        for piece in pieces:
            views.append(f"{name}[{':, ' * axis}{start}:{start + piece}]")
            start += piece
        targets = ", ".join(value_name(index, k, node.num_outputs) for k in range(len(pieces)))
        test = f"{name}.ndim == {rank} and {name}.shape[{axis}] == {size}"
        return f"{targets} = ({', '.join(views)}) if {test} else k{index}({name})"

    def _write_out(self, index: int, node: Node, args: tuple, steps: list) -> list:
        """The lines of fused node ``index``, one per step; the last one names its value."""
        dtype = _output_dtype(node)
        scalar = _is_scalar_output(node) and dtype in _OPERATOR_DTYPES
        lines: list[tuple[str, Any]] = []
        indent = ""
        if any(quiet for *_, quiet in steps):
            self.bound["errstate"] = np.errstate
            lines.append(('with errstate(all="ignore"):', None))
            indent = "    "
        previous = None
        for position, (ufunc, operands, record, _) in enumerate(steps):
            operand_names = tuple(previous if k < 0 else args[k] for k in operands)
            last = position == len(steps) - 1
            target = value_name(index, 0, 1) if last else f"v{index}_step{position}"
            line = self._expression(ufunc, operand_names, dtype, target)
            if line is None:
                self.bound[f"u{index}_{position}"] = ufunc
                line = f"{target} = u{index}_{position}({', '.join(operand_names)})"
                if scalar:  # a ufunc of 0-d operands gives a numpy scalar
                    self.float_scalars.add(target)
            comment = f"  # {step_comment(record, position)} of {quoted(node.name)}"
            lines.append((indent + line + comment, (record, operand_names)))
            previous = target
        return lines

    def line(self, node: Node, index: int, args: tuple) -> str:
        """The text of the one line of a node that is not written out, uncommented."""
        bound = self.bound
        constant = _constant_value(node)
        target = value_name(index, 0, node.num_outputs)
        if constant is not None:
            bound[f"const{index}"] = constant
            if constant.ndim == 0 and constant.dtype.kind in "biuf":
                bound[f"scalar{index}"] = constant[()]
                self.scalars[target] = f"scalar{index}"
                if constant.dtype in _OPERATOR_DTYPES:
                    self.float_scalars.add(f"scalar{index}")
                elif constant.dtype.kind in "iu":
                    self.integer_constants.add(f"scalar{index}")
                    bound[f"int{index}"] = int(constant)
                    self.python_ints[f"scalar{index}"] = f"int{index}"
            return f"{target} = const{index}"
        dtype = _output_dtype(node)
        expression = self._expression(node.kernel, args, dtype, target)
        if expression is None:
            expression = self._scalar_operator(node, args, target)
        if expression is None:
            expression = self._checked_arithmetic(node, index, args, target)
        if expression is None:
            expression = self._checked_cast(node, index, args, target)
        if expression is None:
            expression = self._split_views(node, index, args)
        if expression is not None:
            return expression
        if node.kernel in _PASS_THROUGH and len(args) == 1 and node.num_outputs == 1:
            if args[0] in self.float_scalars:
                self.float_scalars.add(target)
            if args[0] in self.scalars:
                self.scalars[target] = self.scalars[args[0]]
            return f"{target} = {args[0]}"
        bound[f"k{index}"] = node.kernel
        call_args = ("context", *args) if node.wants_context else args
        call = f"k{index}({', '.join(call_args)})"
        if node.num_outputs == 0:
            return call
        if node.num_outputs == 1:
            if (
                isinstance(node.kernel, np.ufunc)
                and _is_scalar_output(node)
                and dtype in _OPERATOR_DTYPES
            ):
                self.float_scalars.add(target)  # a ufunc of 0-d operands gives a numpy scalar
            return f"{target} = {call}"
        count = node.num_outputs
        targets = [value_name(index, k, count) for k in range(count)]
        return f"{', '.join(targets)} = {call}"


def locate_member(error: BaseException, code, lines: dict, nodes: Sequence[Node]) -> None:
    """Records on ``error``, raised by a line of generated ``code`` (``lines`` maps a line to
    ``(member, argument names, step)``, the member being an index of ``nodes`` or the `Node`
    itself: a line of a compiled cond written inside a loop's code), which member raised it
    and with what inputs, as
    ``error.compiled_step = (the member's tag, input values)``; the innermost code that
    records it wins.  On a step ``(record, operand names)`` of a written-out fused chain it
    also records ``error.fused_step = (record, operand values)``, as the fused kernel does."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_frame.f_code is not code:
        traceback = traceback.tb_next
    if traceback is None or hasattr(error, "compiled_step"):
        return
    member, args, step = lines.get(traceback.tb_lineno, (None, (), None))
    if member is None:
        return
    values = traceback.tb_frame.f_locals
    node = member if isinstance(member, Node) else nodes[member]
    error.compiled_step = (node.tag, tuple(values.get(a) for a in args))
    if step is not None:
        record, operand_names = step
        error.fused_step = (record, tuple(values.get(a) for a in operand_names))
