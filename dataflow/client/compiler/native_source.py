"""The numba source of the native tier: which ops and dtypes it admits, each admitted op as a
scalar expression, conds as ``if``/``else`` and loops as ``while`` over those, written as
text whose only data from a graph are literals made by ``repr()`` and validated identifiers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from executor.program import Node, NodeKind

EXACT_UFUNCS = frozenset(
    {
        np.add,
        np.subtract,
        np.multiply,
        np.true_divide,
        np.minimum,  # integers only: see INTEGER_ONLY_UFUNCS
        np.maximum,
        np.equal,
        np.not_equal,
        np.less,
        np.less_equal,
        np.greater,
        np.greater_equal,
        np.logical_and,
        np.logical_or,
        np.logical_xor,
        np.logical_not,
        np.negative,
        np.absolute,
        np.square,
        np.sqrt,
        np.floor,
        np.ceil,
    }
)


def _numpy_keeps_the_second_of_equal_floats() -> bool:
    """Whether numpy's float ``minimum``/``maximum`` give their second operand when neither is
    less (0.0 and -0.0), on scalars and 0-d arrays alike: the rule the written form follows
    (numba's own ``np.minimum`` keeps the first)."""
    for t in (np.float32, np.float64):
        for ufunc in (np.minimum, np.maximum):
            for a, b in ((t(0.0), t(-0.0)), (t(-0.0), t(0.0))):
                for x, y in ((a, b), (np.array(a), np.array(b))):
                    if np.signbit(ufunc(x, y)) != np.signbit(b):
                        return False
    return True


# Float minimum and maximum are written out: the first operand where it is strictly smaller
# (larger) or a NaN, else the second.  Where numpy breaks ties otherwise, they stay in Python.
FLOAT_EXTREMA = {np.minimum: "<", np.maximum: ">"}


INTEGER_ONLY_UFUNCS = (
    frozenset() if _numpy_keeps_the_second_of_equal_floats() else frozenset(FLOAT_EXTREMA)
)


ADMITTED_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float32,
        np.float64,
    )
)


class NotNative(Exception):
    """Why a region or loop stays in Python (the message says which op and why)."""


# Signed integer ufuncs that can overflow: numba marks signed arithmetic as never wrapping
# (LLVM's ``nsw``), so LLVM may rewrite around an overflow (``abs(MAX - x)`` became ``MAX - x``).
# They are written on the unsigned type of the same width, whose arithmetic wraps by definition,
# and the bits are read back as the signed type: numpy's wrapped value.
# It also keeps an 8- or 16-bit loop variable wrapped where the loop compares it: under ``nsw``
# LLVM compared ``int8(81) * 3`` as 243, not as -13.
_WRAPPING_UFUNCS = {np.add, np.subtract, np.multiply, np.negative, np.square}


def _ufunc_text(ufunc, args: Sequence[str], dtype: Optional[np.dtype]) -> str:
    """``np.<ufunc>(args)``, on unsigned operands for signed integers (`_WRAPPING_UFUNCS`);
    a float minimum or maximum written out (`FLOAT_EXTREMA`)."""
    if ufunc in FLOAT_EXTREMA and dtype is not None and dtype.kind == "f":
        a, b = args
        return f"np.{dtype.name}({a} if {a} {FLOAT_EXTREMA[ufunc]} {b} or {a} != {a} else {b})"
    if dtype is None or dtype.kind != "i" or ufunc not in _WRAPPING_UFUNCS:
        return f"np.{ufunc.__name__}({', '.join(args)})"
    unsigned = f"np.uint{dtype.itemsize * 8}"
    operands = ", ".join(f"{unsigned}({a})" for a in args)
    if ufunc is np.negative:
        return f"np.{dtype.name}(np.subtract({unsigned}(0), {operands}))"
    if ufunc is np.square:
        return f"np.{dtype.name}(np.multiply({operands}, {operands}))"
    return f"np.{dtype.name}(np.{ufunc.__name__}({operands}))"


def _static(node: Node, output: int) -> tuple[np.dtype, Any]:
    # a native array kernel's node gives the tensors of several members (`native_arrays`)
    outputs = getattr(node.kernel, "output_tensors", None) or getattr(node.tag, "outputs", ())
    if output >= len(outputs):
        raise NotNative(f"{node.name} has no static output {output}")
    tensor = outputs[output]
    try:
        dtype = np.dtype(tensor.dtype.as_numpy_dtype)
    except (TypeError, AttributeError):
        raise NotNative(f"{node.name} has no numpy dtype") from None
    return dtype, tensor.shape


def _scalar_dtype(node: Node, output: int) -> np.dtype:
    """The dtype of a 0-d output of an admitted dtype, else `NotNative`."""
    dtype, shape = _static(node, output)
    if dtype not in ADMITTED_DTYPES:
        raise NotNative(f"{node.name} gives {dtype}")
    if getattr(shape, "ndims", None) != 0:
        raise NotNative(f"{node.name} gives a value of shape {shape}, not a scalar")
    return dtype


def _literal(value: np.ndarray) -> str:
    """A numba expression for the 0-d constant ``value``, bit for bit."""
    dtype = value.dtype
    if dtype == np.bool_:
        return repr(bool(value))
    if dtype.kind == "f":
        number = float(value)
        if np.isnan(number):
            if value.tobytes() != np.array(np.nan, dtype).tobytes():
                raise NotNative("a NaN constant with a payload of its own")
            text = "np.nan"
        elif np.isinf(number):
            text = "np.inf" if number > 0 else "-np.inf"
        else:
            text = repr(number)
        return f"np.{dtype.name}({text})"
    if int(value) > np.iinfo(np.int64).max:
        raise NotNative("an unsigned constant beyond int64")
    return f"np.{dtype.name}({int(value)})"


class _Writer:
    """Writes the native lines of nodes, in the order they run.

    ``names`` maps an edge ``(node, output)`` to its expression's variable name; ``kinds``
    maps a name to a native boolean expression that says whether the interpreter's value there
    is a 0-d array (else a numpy scalar): ``"True"``, ``"False"``, or the flag variable of a
    value whose kind is known only at run time (an argument's ``in3_a``, a loop variable's
    ``var1_a``, a cond output's ``c7_out0_a``), which the code carries beside the value.

    A compiled cond or loop among the nodes is written inline by a nested writer over its own
    nodes (`_write_cond`, `_write_loop`), its names prefixed so they stay apart; ``kinds``,
    ``dtypes`` and ``constants`` are shared with it.  ``abandon`` is the statement that gives
    up the chunk of the outermost native loop (None outside one: no inner loop then)."""

    def __init__(self, nodes: Sequence[Node], prefix: str = "", outer: Optional[_Writer] = None):
        self.nodes = nodes
        self.prefix = prefix
        self.names: dict[tuple[int, int], str] = {}
        self.lines: list[str] = []
        self.computed = 0  # lines that are not constants
        if outer is None:
            self.kinds: dict[str, str] = {}
            self.dtypes: dict[str, np.dtype] = {}
            self.constants: dict[str, np.ndarray] = {}  # constants (written as literals)
            self.abandon: Optional[str] = None
        else:
            self.kinds, self.dtypes = outer.kinds, outer.dtypes
            self.constants, self.abandon = outer.constants, outer.abandon

    def parameter(self, edge: tuple, name: str) -> None:
        """An argument of the function, with its flag argument ``<name>_a``."""
        self.names[tuple(edge)] = name
        self.kinds[name] = f"{name}_a"
        self.dtypes[name] = _scalar_dtype(self.nodes[edge[0]], edge[1])

    def parameters(self, inputs: Sequence[tuple]) -> list[np.dtype]:
        """The function's arguments ``in0, in1, ...`` for edges ``inputs``; their dtypes."""
        for k, edge in enumerate(inputs):
            self.parameter(edge, f"in{k}")
        return [self.dtypes[f"in{k}"] for k in range(len(inputs))]

    def alias(self, edge: tuple, name: str) -> None:
        self.names[tuple(edge)] = name

    def write(self, index: int) -> None:
        """The lines of node ``index`` (`NotNative` when it may not be native)."""
        from . import codegen

        node = self.nodes[index]
        args = tuple(self.names[tuple(edge)] for edge in node.inputs)
        where = codegen.describe(node)
        cond = getattr(node.kernel, "compiled_cond", None)
        loop = getattr(node.kernel, "compiled_loop", None)
        if cond is not None or loop is not None:
            if node.wants_context and loop is None:
                raise NotNative(f"{where} has an op that takes the run's context")
            if cond is not None:
                _write_cond(self, index, args, cond)
            else:
                _write_loop(self, index, args, loop)
            return
        if node.num_outputs != 1:
            raise NotNative(f"{where} has {node.num_outputs} outputs")
        dtype = _scalar_dtype(node, 0)
        target = self.prefix + codegen.value_name(index, 0, 1)
        self.names[(index, 0)] = target
        constant = codegen._constant_value(node)
        if constant is not None:
            self._line(target, _literal(constant), "True", dtype, where, constant=constant)
            return
        if node.kernel in codegen._PASS_THROUGH and len(args) == 1:
            self.names[(index, 0)] = args[0]
            return
        op_def = getattr(node.tag, "_op_def", None)
        extra = op_def.extra if op_def is not None else {}
        steps = codegen._written_out_steps(node)
        if steps is not None:
            self._fused(index, node, args, steps, dtype)
            return
        if extra.get("ufunc") in EXACT_UFUNCS:
            if extra["ufunc"] in INTEGER_ONLY_UFUNCS and dtype.kind == "f":
                raise NotNative(
                    f"{where}: numpy's float {extra['ufunc'].__name__} breaks ties unlike ours"
                )
            text = _ufunc_text(extra["ufunc"], args, dtype)
            self._line(target, text, "False", dtype, where)
            return
        template = extra.get("native")
        known = tuple(self.constants.get(a) for a in args)
        written = template(node.tag, known) if template is not None else None
        if written is None:
            raise NotNative(f"{where} has no exact native form")
        text, result = written
        kind = {"scalar": "False", "array": "True"}.get(result) or self.kinds[args[0]]
        self._line(target, text.format(*args), kind, dtype, where)

    def _fused(self, index: int, node: Node, args: tuple, steps: list, dtype) -> None:
        from . import codegen

        previous = None
        floats = dtype.kind == "f" or any(self.dtypes[a].kind == "f" for a in args)
        for position, (ufunc, operands, record, _) in enumerate(steps):
            operand_names = [previous if k < 0 else args[k] for k in operands]
            same = {self.dtypes.get(a, dtype) for a in operand_names if a != previous} <= {dtype}
            extremum = ufunc in FLOAT_EXTREMA and floats
            if (
                ufunc not in EXACT_UFUNCS
                or (ufunc in INTEGER_ONLY_UFUNCS and floats)
                or (extremum and not same)
            ):
                raise NotNative(
                    f"{codegen.quoted(record[2])} ({record[0]}) has no exact native form"
                )
            last = position == len(steps) - 1
            target = self.prefix + (
                codegen.value_name(index, 0, 1) if last else f"v{index}_step{position}"
            )
            comment = codegen.step_comment(record, position)
            text = _ufunc_text(ufunc, operand_names, dtype if same else None)
            self._line(target, text, "False", dtype if last else None, comment)
            previous = target
        self.names[(index, 0)] = previous

    def _line(self, target, text, kind, dtype, comment: str, constant=None) -> None:
        self.computed += constant is None
        if constant is not None:
            self.constants[target] = constant
        self.lines.append(f"{target} = {text}  # {comment}")
        self.kinds[target] = kind
        if dtype is not None:
            self.dtypes[target] = dtype

    def result(self, edge: tuple) -> str:
        return self.names[tuple(edge)]


def _indented(lines: Sequence[str], depth: int = 1) -> list[str]:
    return [" " * (4 * depth) + line for line in lines]


def _write_cond(writer: _Writer, index: int, args: tuple, cond) -> list[list]:
    """Writes compiled cond ``cond`` (`conds.CompiledCond`), node ``index`` of ``writer``'s
    nodes taking the names ``args``, as an ``if``/``else`` of its two branches; the untaken
    branch's lines never run.  Each output gets a variable assigned in both branches, and its
    flag variable beside it (a branch may give a scalar where the other gives a 0-d array).
    Returns, per branch (false, true), per output, the position in ``args`` of the argument
    that the branch passes through unchanged, or None."""
    from . import codegen

    structure = cond.structure
    nodes = cond.nodes
    inner = _Writer(nodes, f"{writer.prefix}c{index}_", writer)
    for k, edge in enumerate(structure.inputs):
        inner.alias(edge, args[k])
    predicate = args[0]
    if writer.dtypes[predicate] != np.bool_:
        raise NotNative(f"the predicate of cond {cond.name!r} is not a bool")
    if not structure.outputs:
        raise NotNative(f"cond {cond.name!r} gives nothing")
    targets = [f"{inner.prefix}out{j}" for j in range(len(structure.outputs))]
    passed: list[list] = [[None] * len(targets), [None] * len(targets)]
    lines = [f"if {predicate}:  # cond {codegen.quoted(cond.name)}"]
    for branch in reversed(structure.branches):
        if branch.taken_when == 0:
            lines.append("else:")
        inner.lines = []
        for switch in branch.switches:
            outer = inner.result(nodes[switch].inputs[0])
            inner.alias((switch, 0), outer)
            inner.alias((switch, 1), outer)
        for op in branch.ops:
            inner.write(op)
        for j, (merge, output) in enumerate(structure.outputs):
            if output == 1:  # value_index: the interpreter's np.int32 position
                inner.lines.append(f"{targets[j]} = np.int32({branch.taken_when})")
                continue
            name = inner.result(branch.results[structure.merges.index(merge)])
            if name in args:
                passed[branch.taken_when][j] = args.index(name)
            inner.lines.append(f"{targets[j]} = {name}")
            inner.lines.append(f"{targets[j]}_a = {writer.kinds[name]}")
        lines += _indented(inner.lines)
    writer.lines += lines
    writer.computed += inner.computed
    for j, (merge, output) in enumerate(structure.outputs):
        target = targets[j]
        writer.names[(index, j)] = target
        writer.kinds[target] = "False" if output == 1 else f"{target}_a"
        writer.dtypes[target] = (
            np.dtype(np.int32) if output == 1 else _scalar_dtype(nodes[merge], 0)
        )
    return passed


def _loop_parts(writer: _Writer, loop, argument_names: Sequence[str]) -> tuple:
    """Writes compiled loop ``loop``'s predicate side and body with ``writer`` (over the
    loop's nodes), its inputs being ``argument_names``.  Returns ``(variables, predicate
    lines, predicate, body lines, next names, exits)``: per loop variable ``(name, input
    position)``; the name of each variable's next value; per Exit, its variable."""
    merges, predicate_ops, body_ops = loop.schedule
    nodes = loop.nodes
    enter_input = {}
    for index in loop.members:
        node = nodes[index]
        if node.kind == NodeKind.ENTER:
            k = loop.inputs.index(tuple(node.inputs[0]))
            enter_input[index] = k
            writer.alias((index, 0), argument_names[k])
    variables = []
    for v, merge in enumerate(merges):
        k = enter_input[nodes[merge].inputs[0][0]]
        name = f"{writer.prefix}var{v}"
        writer.names[(merge, 0)] = name
        writer.kinds[name] = f"{name}_a"
        writer.dtypes[name] = _scalar_dtype(nodes[merge], 0)
        if writer.dtypes[name] != writer.dtypes[argument_names[k]]:
            raise NotNative(f"loop variable {v} changes its dtype")
        switch = loop.switch_of_merge[merge]
        writer.alias((switch, 0), name)
        writer.alias((switch, 1), name)
        variables.append((name, k))
    writer.lines = []
    for index in predicate_ops:
        writer.write(index)
    predicate_lines, writer.lines = writer.lines, []
    predicate = writer.result(loop.predicate)
    for index in body_ops:
        writer.write(index)
    body_lines, writer.lines = writer.lines, []
    next_names = [writer.result(nodes[nodes[merge].inputs[1][0]].inputs[0]) for merge in merges]
    exits = []
    for exit_index in loop.exits:
        switch = nodes[exit_index].inputs[0][0]
        exits.append(merges.index(nodes[switch].inputs[0][0]))
    return variables, predicate_lines, predicate, body_lines, next_names, exits


def _write_loop(writer: _Writer, index: int, args: tuple, loop) -> None:
    """Writes compiled loop ``loop``, node ``index`` of ``writer``'s nodes taking the names
    ``args``, as a ``while`` inside the outer native loop's body.  Its iterations count in the
    outer loop's ``steps``; past ``limit`` of them in one chunk, it gives the chunk up
    (``writer.abandon``: the call reruns in Python, which checks the clock inside it)."""
    from . import codegen

    if writer.abandon is None:
        raise NotNative(f"inner loop {loop.name!r} lies outside a native loop")
    inner = _Writer(loop.nodes, f"{writer.prefix}l{index}_", writer)
    variables, predicate_lines, predicate, body_lines, next_names, exits = _loop_parts(
        inner, loop, args
    )
    names = [name for name, _ in variables]
    flags = [f"{name}_a" for name in names]

    def assign(targets, values) -> str:
        return f"{', '.join(targets)}, = {', '.join(values)},"

    lines = [
        f"# loop {codegen.quoted(loop.name)}",
        assign(names, [args[k] for _, k in variables]),
        assign(flags, [writer.kinds[args[k]] for _, k in variables]),
        "while True:",
        *_indented(predicate_lines),
        f"    if not {predicate}:",
        "        break",
        *_indented(body_lines),
        "    " + assign(names, next_names),
        "    " + assign(flags, [writer.kinds[n] for n in next_names]),
        "    steps += 1",
        "    if steps >= limit:",
        f"        {writer.abandon}",
    ]
    writer.lines += lines
    writer.computed += inner.computed
    for j, v in enumerate(exits):
        writer.names[(index, j)] = names[v]


def _module_source(function_source: str) -> str:
    return "import numpy as np\nfrom numba import njit\n\n\n" + function_source


_DECORATOR = '@njit(cache=True, error_model="numpy")'


_UNCACHED_DECORATOR = '@njit(error_model="numpy")'


# The array tier's kernels (`native_arrays`) release the GIL, so blocks run on several threads.
_ARRAY_DECORATOR = '@njit(cache=True, error_model="numpy", nogil=True)'


_UNCACHED_ARRAY_DECORATOR = '@njit(error_model="numpy", nogil=True)'
