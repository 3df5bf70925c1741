"""The native tier: compiled regions, conds and loops of scalars run as numba machine code.

A `CompiledRegion`, `CompiledCond` or `CompiledLoop` (the Python tier, `codegen`, `conds`,
`loops`) hands its Python function to `native_region` / `native_cond` / `native_loop`, which
return the callable the executor runs: the Python function itself when the code cannot be
native, else a `NativeRegion` / `NativeCond` / `NativeLoop` that runs an ``njit`` function
written from the same members and falls back to the Python function, per call, whenever it
cannot use it.

**What may be native** (`_Writer`): every value of the region or loop is a 0-d value of an
admitted dtype (``bool``, the integers, ``float32``, ``float64``; the static shape must be
``[]``), and every member is one of

- a ufunc op whose ufunc numba computes exactly as numpy (`EXACT_UFUNCS`: arithmetic,
  comparisons, logical ops, min/max of integers, abs, negation, floor/ceil, square, sqrt --
  the last correctly rounded in both), written ``np.<ufunc>(...)``: numba types a ufunc on
  scalars with numpy's rules, so int32 stays int32 and wraps, float32 stays float32 (its operators
  would promote small integers to int64, so the code never uses them);
- an op whose definition declares a template (``OpDef.extra["native"]``, see `math_ops`:
  ``Cast``, ``Select``, ``SelectV2``, and ``FloorDiv``/``FloorMod`` of integers by a constant
  divisor other than 0 and -1, which can then neither raise nor trap);
- a constant (its value as a literal of its dtype), or a pass-through (``Identity``,
  ``LoopCond``);
- a fused elementwise chain of small values whose steps are all exact ufuncs.

Anything else -- transcendentals (LLVM's ``exp``/``tanh``/``log`` differ from numpy's in
the last bit), reductions (numpy sums pairwise), ops that can raise (integer division by a
value), arrays -- keeps the whole region, cond or loop in Python.  After compiling, the return
types numba inferred are checked against the graph's dtypes; any difference keeps Python too.

**Conds and inner loops.**  A compiled cond (`conds`) runs natively as an ``if``/``else``
whose branches the `_Writer` writes from the cond's own members (`NativeCond`; the untaken
branch's lines never run); inside a native loop's body, a compiled cond is written inline the
same way, and a compiled inner loop as a ``while`` inside the outer one's body (`_write_loop`).

**Values.**  numba returns Python scalars; the wrapper converts each result back to what the
interpreter gives: a numpy scalar of the op's dtype or a 0-d array.  Which of the two a value
is may depend on the run (a cond's branch may give a constant, a 0-d array, where the other
computes a scalar; a loop variable is its input's until an iteration replaces it), so the
native code carries beside each such value a flag, "is a 0-d array", computed as the
interpreter's kind would be: each argument comes with its flag, each template declares what
its op gives (`_Writer`), and each result goes back with its flag.  An output that is an
input passed through (by a region, or by the taken branch of a cond) is that input itself;
a loop gives an equal copy of an input that came back unchanged through iterations.  An input
that is not a 0-d value of the expected dtype sends the call to Python.  Native code is silent
where numpy warns (float overflow, invalid operations), as TensorFlow is; the values are the
same, NaN signs and payloads included: LLVM treats a NaN's sign and payload as free to change
when it optimizes (``a - (-b)`` becomes ``a + b``; ``inf - inf`` on constants folds to a
positive NaN where the machine makes a negative one), so a call whose results include a NaN is
run again in Python, which gives the interpreter's bits.  Only a result that is a NaN can show
a NaN's sign: no admitted op reads it (comparisons, ``where`` and casts to bool ignore it).

**Errors.**  No admitted op raises (floats follow ``error_model="numpy"``: division by zero
gives inf as numpy does; an integer division is admitted only by a constant other than 0 and
-1).  Where numpy's error state makes a floating-point error raise or call back
(``np.errstate(over="raise")``, ``np.seterrcall``), every call runs the Python function,
so the op that overflows raises as interpreted (warnings stay unsaid, "Values").  Should the
native call raise all the same, the wrapper re-runs the same inputs through the Python
function -- regions and loops are pure -- so an error names the op, line and iteration the
interpreter names.

**Deadlines and cancellation.**  A native loop runs in chunks and returns its state between
them; between calls the wrapper raises what stops the Python loop
(`loops.CompiledLoop.stop_error`: the run cancelled, or past ``context.deadline``), with
the iteration reached.  A chunk ends at the end of the first iteration that finds
`CHUNK_ITERATIONS` *steps* done: iterations of the loop and of the loops inside it (an inner
loop runs whole within one outer iteration, so a chunk may run past the budget by one outer
iteration).  When the run has a deadline, an inner loop that alone takes the chunk past
`INNER_STEPS_LIMIT` steps gives the chunk up, and the call runs again from its start in the
Python function, which checks the clock inside inner loops too: an endless inner loop still
stops at the deadline, after some tens of milliseconds of native work thrown away.  Without
a deadline an inner loop runs whole, so a Session closed meanwhile stops the loop only once
that inner loop ends (giving up its work to Python would make long inner loops slow).

**Not yet native:** arrays (values of any other shape than ``[]``), float
``FloorDiv``/``FloorMod`` (not proven bit-exact), ``TruncateMod`` (numba's ``fmod`` of
negative integers differs from numpy's), and an inner loop outside a native loop (a cond
holding a loop: the inner loop alone is native).

**When it compiles** (the mode: ``DATAFLOW_NATIVE``, read at import, or `set_native`):
``"off"`` never; ``"auto"`` (the default) in the background: the `AUTO_AFTER_CALLS`-th call
of a region or loop hands its compilation to one compiler thread and every call runs the
Python function until the machine code is ready, so no run waits for numba (its import alone
takes a few tenths of a second; a compilation from some 30 ms for a few ops to seconds for a
1000-op region) and no run's deadline is spent on it.  numba holds the GIL while it compiles,
so the thread imports numba as soon as the first native function is made, and a long function
is compiled by a child process into the disk cache, from which the thread loads it (see "the
compile process" below);
``"force"`` at once, synchronously, when the region is made -- before its run starts the
clock (the test mode: with the compile plugin, the suite proves native code equal to the
interpreter).  The mode is read when a region is made, and at each call until it compiles.

**Caching.**  Per plan, the wrapper keeps its compiled function.  Across plans and processes,
the generated module is written to ``$DATAFLOW_CACHE_DIR`` (default
``~/.cache/dataflow``) as ``native/df_<hash of its source>.py``, and numba's ``cache=True``
keeps the machine code beside it: a new process loads it instead of compiling.  What is on
disk can run code (numba's files are pickles), so the cache is used only where nobody but the
user may write it, and a module's file must hold exactly the source it was named after;
its size is bounded (see "the disk cache" below).  A compilation that fails for any reason
leaves the Python function running, with one warning per process.
`native_available` says whether numba can be imported; ``import dataflow`` never
imports it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import os
import queue
import stat
import subprocess
import sys
import threading
import time
import types
import warnings
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from executor.program import Node, NodeKind

MODES = ("off", "auto", "force")
_mode = os.environ.get("DATAFLOW_NATIVE", "auto")
if _mode not in MODES:
    raise ValueError(f"DATAFLOW_NATIVE must be one of {MODES}, not {_mode!r}")
AUTO_AFTER_CALLS = 3
CHUNK_ITERATIONS = 4096

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


def native_mode() -> str:
    return _mode


def set_native(new_mode: str) -> str:
    """Sets the native tier's mode (one of `MODES`); returns the mode it replaces."""
    global _mode
    if new_mode not in MODES:
        raise ValueError(f"the native mode must be one of {MODES}, not {new_mode!r}")
    previous, _mode = _mode, new_mode
    return previous


_available: Optional[bool] = None


def native_available() -> bool:
    """Whether numba can be imported (it is looked for once, not imported)."""
    global _available
    if _available is None:
        _available = importlib.util.find_spec("numba") is not None
    return _available


_numba_import_lock = threading.Lock()


def _import_numba():
    """numba, imported whole once: under a lock, because two threads importing it at once
    (the compile thread and a run compiling in "force" mode) can see its modules half made
    ("partially initialized module 'numba.core.types'")."""
    with _numba_import_lock:
        import numba
        import numba.core.registry  # noqa: F401 - what `njit` and the code generator need

    return numba


class NotNative(Exception):
    """Why a region or loop stays in Python (the message says which op and why)."""


# -- writing the source ------------------------------------------------------------------------

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
    outputs = getattr(node.tag, "outputs", ())
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


# -- the disk cache ----------------------------------------------------------------------------
# An entry is a module ``native/df_<key>.py``, where the key is the hash of its source text, and
# numba's files for it, ``native/__pycache__/df_<key>.*`` (an index and machine code, both
# pickles that numba unpickles).  So that nobody but the user can make this process run code,
# every directory of the cache must be the user's and writable by nobody else (as pip checks
# its own); one that is not is refused, with one warning, and native code is then compiled in
# memory.  A module is never imported from the file: the process runs the source it wrote
# itself, and a file whose text is not that source (damaged, or planted) is discarded with
# numba's files for it before the source is written again.  When the entries exceed
# `CACHE_LIMIT_BYTES`, the least recently used are removed (a region's key holds its file and
# line, so every edit of a program adds entries).
CACHE_LIMIT_BYTES = 256 << 20
EVICT_EVERY = 64  # entries written between two looks at the cache's size
_modules: dict[str, Any] = {}
_modules_lock = threading.Lock()
_refused_directories: dict[str, Optional[str]] = {}  # directory -> why refused, or None
_written_since_eviction: Optional[int] = None  # None: not looked at in this process yet


def cache_directory() -> str:
    """Where generated modules and numba's machine code are kept across processes."""
    root = os.environ.get("DATAFLOW_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dataflow"
    )
    return os.path.join(root, "native")


def cache_key(source: str) -> str:
    """The key of the module ``source`` in the cache: its file is ``df_<key>.py``."""
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def _why_untrusted(path: str) -> Optional[str]:
    """Why the directory ``path`` may not hold what this process runs (not a directory, not
    the user's, writable by others), or None when it may."""
    try:
        info = os.stat(path)
    except OSError as e:
        return e.strerror or type(e).__name__
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    getuid = getattr(os, "getuid", None)  # POSIX only
    if getuid is not None and info.st_uid != getuid():
        return f"it belongs to user id {info.st_uid}, not to this user ({getuid()})"
    if info.st_mode & 0o022:
        return f"others than its owner may write it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _trusted_directory(path: str) -> Optional[str]:
    """Makes the directory ``path`` (mode 0700) where missing; why it may not hold what this
    process runs (`_why_untrusted`), or None when it may."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        return f"{path}: {e.strerror or type(e).__name__}"
    why = _why_untrusted(path)
    return None if why is None else f"{path}: {why}"


def _disk_cache() -> Optional[str]:
    """The cache directory (`cache_directory`), made where missing and checked
    (`_trusted_directory`) once per process, or None (after one warning) when it may not be
    used."""
    directory = cache_directory()
    paths = (os.path.dirname(directory), directory, _numba_directory(directory))
    return directory if _checked(directory, paths, "DATAFLOW_CACHE_DIR") else None


def _checked(key: str, paths: Sequence[str], variable: str) -> bool:
    """Whether the directories ``paths`` may hold what this process runs (`_trusted_directory`),
    found once per process for ``key``; when not, one warning, which names the environment
    variable that chooses them."""
    if key not in _refused_directories:
        reason = None
        for path in paths:
            reason = _trusted_directory(path)
            if reason is not None:
                break
        _refused_directories[key] = reason
        if reason is not None:
            warnings.warn(
                f"dataflow does not keep native code on disk in {key} ({reason}), and "
                f"compiles it in every process: point {variable} at a directory of "
                "your own that only you may write (mode 0700)",
                RuntimeWarning,
                stacklevel=3,
            )
    return _refused_directories[key] is None


def _numba_directory(directory: str) -> str:
    """Where numba keeps its files for the modules of ``directory`` (unless ``NUMBA_CACHE_DIR``
    says otherwise, `_numba_cache_trusted`)."""
    return os.path.join(directory, "__pycache__")


def _numba_cache_trusted(dispatcher, directory: str) -> bool:
    """Whether the directory numba reads ``dispatcher``'s cache from is ``directory``'s own or
    one as trustworthy (numba's ``NUMBA_CACHE_DIR`` moves it)."""
    path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    if path is None or path == _numba_directory(directory):
        return True
    return _checked(path, (os.path.dirname(path), path), "NUMBA_CACHE_DIR")


def load_function(source: str, function_name: str):
    """The numba dispatcher named ``function_name`` of the module ``source``, made once per
    process: from the disk cache where it may be used (numba then loads machine code another
    process compiled), else in memory."""
    digest = cache_key(source)
    with _modules_lock:
        module = _modules.get(digest)
        if module is None:
            directory = _disk_cache()
            path = None if directory is None else _cache_entry(directory, digest, source)
            name = _module_name(digest)
            module = None
            if path is not None:
                module = _run_module(name, source, path)
                if not _numba_cache_trusted(getattr(module, function_name), directory):
                    module = None
            if module is None:
                module = _run_module(name, source.replace(_DECORATOR, _UNCACHED_DECORATOR), None)
            _modules[digest] = module
    return getattr(module, function_name)


def _module_name(digest: str) -> str:
    return f"dataflow_native_{digest}"


def _cache_entry(directory: str, digest: str, source: str) -> Optional[str]:
    """The path of ``source``'s module in ``directory``, whose text is ``source`` (written,
    or written again over a file with another text); None when it cannot be written."""
    global _written_since_eviction
    path = os.path.join(directory, f"df_{digest}.py")
    text = source.encode()
    try:
        with open(path, "rb") as f:
            found = f.read(len(text) + 1)
    except OSError:
        found = None
    try:
        if found == text:
            # The access time says when an entry was last used; the modification time
            # stays: numba compares it with the one its index recorded.
            os.utime(path, ns=(time.time_ns(), os.stat(path).st_mtime_ns))
            return path
        if found is not None:
            _remove(_entry_files(directory).get(digest, ()))
        partial = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(partial, "wb") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError:
        return None
    if _written_since_eviction is None or _written_since_eviction >= EVICT_EVERY:
        _written_since_eviction = 0
        evict(directory)
    _written_since_eviction += 1
    return path


def _entry_files(directory: str) -> dict[str, list[str]]:
    """Per key, the files of that cache entry in ``directory``: its module and numba's."""
    entries: dict[str, list[str]] = {}
    for folder in (directory, os.path.join(directory, "__pycache__")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("df_"):
                digest = name[3:].split(".", 1)[0]
                entries.setdefault(digest, []).append(os.path.join(folder, name))
    return entries


def _remove(paths) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)


def evict(directory: str, limit: Optional[int] = None) -> None:
    """Removes the least recently used entries of the cache ``directory`` (not those this
    process loaded) until its files take at most three quarters of ``limit`` bytes
    (`CACHE_LIMIT_BYTES`), if they take more than ``limit``."""
    limit = CACHE_LIMIT_BYTES if limit is None else limit
    sizes: dict[str, int] = {}
    used: dict[str, float] = {}
    entries = _entry_files(directory)
    for digest, paths in entries.items():
        for path in paths:
            try:
                info = os.stat(path)
            except OSError:
                continue
            sizes[digest] = sizes.get(digest, 0) + info.st_size
            used[digest] = max(used.get(digest, 0.0), info.st_atime, info.st_mtime)
    total = sum(sizes.values())
    if total <= limit:
        return
    for digest in sorted(sizes, key=used.__getitem__):
        if total <= limit * 3 // 4:
            break
        if digest not in _modules:
            _remove(entries[digest])
            total -= sizes[digest]


def _run_module(name: str, source: str, path: Optional[str]):
    """A new module ``name`` made by running ``source`` (numba finds its cache through the
    function's file name, ``path``)."""
    _import_numba()  # the source imports njit
    module = types.ModuleType(name)
    module.__file__ = path or f"<{name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _compile(source: str, function_name: str, argument_dtypes, result_dtypes):
    """The machine-code entry point of ``function_name`` for arguments of
    ``argument_dtypes``, or `NotNative` when numba's return types are not ``result_dtypes``
    (entries None are not checked)."""
    numba = _import_numba()
    dispatcher = load_function(source, function_name)
    signature = tuple(numba.from_dtype(d) for d in argument_dtypes)
    try:
        dispatcher.compile(signature)
    except Exception as e:  # numba's typing or lowering refused the code
        raise NotNative(f"numba could not compile it: {type(e).__name__}") from e
    overload = dispatcher.overloads[signature]
    returned = overload.signature.return_type
    types = list(getattr(returned, "types", [returned]))
    if len(types) != len(result_dtypes):
        raise NotNative(f"numba returns {returned}")
    for got, want in zip(types, result_dtypes):
        got = numba.types.unliteral(got)  # a flag returned as the literal True is a bool
        if want is not None and got != numba.from_dtype(want):
            raise NotNative(f"numba returns {got} where the graph has {want}")
    return overload.entry_point, dispatcher


_compile_queue: Optional[queue.Queue] = None


def _compile_in_background(tier: Optional[_Tier]) -> threading.Event:
    """Queues ``tier``'s compilation (None: the warm-up, `_warm_up`) for the one daemon thread
    that compiles native code in "auto" mode, one function at a time (a process may exit
    while it compiles); returns the event set when it is done."""
    global _compile_queue
    with _modules_lock:
        if _compile_queue is None:
            _compile_queue = queue.Queue()
            threading.Thread(
                target=_compile_forever,
                args=(_compile_queue,),
                name="dataflow-native",
                daemon=True,
            ).start()
    done = threading.Event()
    _compile_queue.put((tier, done))
    return done


def _compile_forever(jobs: queue.Queue) -> None:
    while True:
        tier, done = jobs.get()
        try:
            with contextlib.suppress(Exception):  # what fails here, tier.compile() does
                if tier is None:
                    _warm_up()
                else:
                    _compile_in_worker(tier)
            if tier is not None:
                tier.compile()  # which records any failure: the thread goes on to the next
        finally:
            done.set()


# -- the compile process -----------------------------------------------------------------------
# numba holds the GIL for most of a compilation (typing and lowering are Python: some 70 ms of
# CPU for a function of ten lines, 0.9 s for 300, 13 s for a region of 1000 adds), so a
# compilation in a thread of the process slows every run meanwhile, and the runs slow it.  In
# "auto" mode, where the cache directory may be used, a child process compiles each function
# of at least `PROCESS_MIN_LINES` lines first (one process for the life of this one), which
# leaves numba's machine code in the cache; the compile thread then loads it from there (5 to
# 30 ms).  A smaller function costs less to compile here than to wait for the child's start.
# What this process must do itself, import numba and set up its code generator (0.3 s of CPU),
# the compile thread does as soon as the first native function is made (`_warm_up`), while the
# function's first calls run in Python; the child starts then too.  The child takes its work on
# stdin and answers on stdout, one JSON line each, and ends with its stdin.
COMPILE_PROCESS = True  # False: "auto" mode compiles in the compile thread alone
PROCESS_MIN_LINES = 40
_WORKER_SOURCE = r"""
import json, sys, types
sys.path[:] = json.loads(sys.stdin.readline())
import numpy as np
import numba
for line in sys.stdin:
    source, path, module_name, name, dtypes = json.loads(line)
    try:
        module = sys.modules[module_name] = types.ModuleType(module_name)
        module.__file__ = path
        exec(compile(source, path, "exec"), module.__dict__)
        getattr(module, name).compile(tuple(numba.from_dtype(np.dtype(d)) for d in dtypes))
        answer = None
    except Exception as e:
        answer = f"{type(e).__name__}: {e}"
    print(json.dumps(answer), flush=True)
"""
_worker: Any = None  # the child process; False once it failed
_warmed_up = False


def _start_warming_up() -> None:
    """Queues the warm-up (`_warm_up`), once per process."""
    global _warmed_up
    if not _warmed_up:
        _warmed_up = True
        _compile_in_background(None)


def _warm_up() -> None:
    """Starts the compile process (`_start_worker`) and makes numba ready in this one."""
    _start_worker()
    _import_numba().core.registry.cpu_target.target_context.refresh()


def _start_worker():
    """The compile process, started if need be; None where it is not used or failed."""
    global _worker
    if _worker is None and COMPILE_PROCESS:
        with _modules_lock:
            usable = _disk_cache() is not None
        if not usable:  # the child leaves its work in the disk cache alone
            return None
        try:
            _worker = subprocess.Popen(
                [sys.executable, "-I", "-c", _WORKER_SOURCE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            _worker.stdin.write(json.dumps(sys.path) + "\n")
            _worker.stdin.flush()
        except (OSError, ValueError):
            _worker = False
    return _worker or None


def _stop_worker() -> None:
    """Ends the compile process (at exit: a compilation it is in the middle of is dropped;
    numba replaces its cache files whole, so none is left half written)."""
    worker = _worker
    if worker:
        worker.kill()
        worker.wait()
        for pipe in (worker.stdin, worker.stdout):
            with contextlib.suppress(OSError):
                pipe.close()


atexit.register(_stop_worker)


def _compile_in_worker(tier: _Tier) -> None:
    """Has the compile process compile ``tier``'s function into the disk cache, where it is
    not there yet and the process can; failures leave the compilation to this process."""
    global _worker
    if tier.source.count("\n") < PROCESS_MIN_LINES or not COMPILE_PROCESS:
        return
    digest = cache_key(tier.source)
    with _modules_lock:
        directory = _disk_cache()
        if directory is None or digest in _modules or _in_numba_cache(directory, digest):
            return
        path = _cache_entry(directory, digest, tier.source)
    worker = _start_worker()
    if path is None or worker is None:
        return
    dtypes = [d.str for d in (*tier.signature_prefix, *tier.argument_dtypes)]
    try:
        request = [tier.source, path, _module_name(digest), tier.function_name, dtypes]
        worker.stdin.write(json.dumps(request) + "\n")
        worker.stdin.flush()
        if not worker.stdout.readline():
            raise EOFError("the compile process ended")
    except (OSError, ValueError, EOFError):
        _stop_worker()
        _worker = False


def _in_numba_cache(directory: str, digest: str) -> bool:
    """Whether numba's index of the module of key ``digest`` is in the cache ``directory``."""
    try:
        names = os.listdir(_numba_directory(directory))
    except OSError:
        return False
    prefix = f"df_{digest}."
    return any(name.startswith(prefix) and name.endswith(".nbi") for name in names)


def _forget_threads_in_a_child() -> None:
    """After a fork, the child has neither the compile thread nor its own compile process."""
    global _compile_queue, _worker, _modules_lock, _warmed_up
    _compile_queue = None
    _worker = None
    _warmed_up = False
    _modules_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads_in_a_child)


_failure_reported = False


def _report_failure(compiled, error: Exception) -> None:
    """Warns, once per process, that compiling ``compiled``'s native code failed."""
    global _failure_reported
    if _failure_reported:
        return
    _failure_reported = True
    warnings.warn(
        f"dataflow could not compile {getattr(compiled, 'name', compiled)} to native code "
        f"({type(error).__name__}: {error}); it runs in Python, as does any other whose "
        "compilation fails (not reported again)",
        RuntimeWarning,
        stacklevel=2,
    )


class _Tier:
    """What `NativeRegion` and `NativeLoop` share: the Python function, the native source,
    when to compile, and the conversion of values in and out."""

    signature_prefix: tuple = ()  # numba's arguments before the values'

    def __init__(
        self, compiled, python_function, source, function_name, argument_dtypes, value_dtypes
    ):
        self.compiled = compiled
        self.value_dtypes = tuple(value_dtypes)  # what each value the executor passes must be
        self.python_function = python_function
        self.source = source
        self.function_name = function_name
        self.argument_dtypes = tuple(argument_dtypes)
        self.native = None  # the entry point once compiled
        self.dispatcher = None
        self.refused: Optional[str] = None  # why numba's code was not used
        self.calls = 0
        self.pending: Optional[threading.Event] = None  # set once compiled in the background
        self.compile_seconds: Optional[float] = None
        self._lock = threading.Lock()
        if _mode == "force":
            self.compile()
        elif _mode == "auto":
            _start_warming_up()

    def status(self) -> str:
        if self.native is not None:
            return f"native (numba, compiled in {self.compile_seconds:.3f} s)"
        if self.refused is not None:
            return f"Python ({self.refused})"
        return {
            "off": "Python (native mode off)",
            "auto": f"native (numba) once compiled, from its call {AUTO_AFTER_CALLS} on",
            "force": "native (numba) once compiled",
        }[_mode]

    def _ready(self):
        """The entry point to call now, or None for the Python function (module docstring:
        in "auto", the `AUTO_AFTER_CALLS`-th call starts compiling in the background)."""
        native = self.native
        if native is not None:
            return None if _numpy_errors_are_strict() else native
        if self.refused is not None or _mode == "off":
            return None
        if _mode == "force":
            self.compile()
            return self.native
        self.calls += 1
        if self.calls >= AUTO_AFTER_CALLS and self.pending is None:
            self.pending = _compile_in_background(self)
        return None

    def compile(self) -> None:
        """Compiles the native code now (once), or records why it is not used."""
        with self._lock:
            if self.native is not None or self.refused is not None:
                return
            began = time.perf_counter()
            try:
                native, self.dispatcher = _compile(
                    self.source,
                    self.function_name,
                    (*self.signature_prefix, *self.argument_dtypes),
                    self.result_dtypes(),
                )
            except NotNative as e:
                self.refused = str(e)
            except Exception as e:  # numba, the disk, a bug: the Python function stays
                self.refused = f"compiling it failed: {type(e).__name__}: {e}"
                _report_failure(self.compiled, e)
            else:
                self.native = native
            self.compile_seconds = time.perf_counter() - began

    def wait(self) -> None:
        """Waits for a compilation started in the background, if any."""
        if self.pending is not None:
            self.pending.wait()

    def result_dtypes(self) -> list:
        raise NotImplementedError

    def _call_native(self, values) -> Optional[tuple]:
        """``(arguments, results)`` of the machine code on ``values`` (results: the values,
        then their flags), or None when the call belongs to the Python function: not compiled
        yet, an argument it does not take, an exception, or a NaN (module docstring)."""
        native = self._ready()
        if native is None:
            return None
        arguments = self.arguments(values)
        if arguments is None:
            return None
        try:
            results = native(*arguments)
        except Exception:
            return None
        return None if _any_nan(results) else (arguments, results)

    def arguments(self, values) -> Optional[list]:
        """``values`` as numba's arguments (numpy scalars), then per value whether it is a
        0-d array (the flag arguments); or None when one is not a 0-d value of its dtype."""
        arguments = []
        flags = []
        for value, dtype in zip(values, self.value_dtypes):
            if type(value) is dtype.type:
                arguments.append(value)
                flags.append(False)
            elif type(value) is np.ndarray and value.ndim == 0 and value.dtype == dtype:
                arguments.append(value[()])
                flags.append(True)
            else:
                return None
        return arguments + flags


try:  # numpy's error state as a context variable (numpy 2): its value changes with the state
    from numpy._core.umath import _extobj_contextvar as _numpy_error_state
except ImportError:
    _numpy_error_state = None
_STRICT_ERROR_MODES = frozenset({"raise", "call"})
_error_state_seen: tuple = (None, False)  # (the last state looked at, whether it is strict)


def _numpy_errors_are_strict() -> bool:
    """Whether numpy's error state here (``np.errstate``, ``np.seterr``) raises or calls back
    on some floating-point error, which native code would not notice: the call then goes to
    the Python function (module docstring, "Errors").  Reading the state costs a microsecond,
    so its answer is kept for the state's object, which numpy replaces whenever it changes."""
    global _error_state_seen
    if _numpy_error_state is None:
        return not _STRICT_ERROR_MODES.isdisjoint(np.geterr().values())
    state = _numpy_error_state.get()
    seen, strict = _error_state_seen
    if state is not seen:
        strict = not _STRICT_ERROR_MODES.isdisjoint(np.geterr().values())
        _error_state_seen = (state, strict)
    return strict


def _any_nan(results) -> bool:
    """Whether a native result is a NaN, whose sign and payload LLVM does not keep as the
    machine's arithmetic makes them (module docstring, "Values")."""
    for result in results:
        if type(result) is float and result != result:
            return True
    return False


def _out(value, dtype: np.dtype, is_array) -> Any:
    """A native result as the interpreter's value: a 0-d array or a numpy scalar."""
    return np.array(value, dtype=dtype) if is_array else dtype.type(value)


def _returned(names: Sequence[str]) -> str:
    return f"return ({''.join(name + ', ' for name in names)})"


class NativeRegion(_Tier):
    """The executor's callable for a region that may run natively (module docstring)."""

    def __init__(self, region, python_function, source, outputs):
        self.outputs = outputs  # per output: ("value", dtype) or ("input", k)
        self.native_outputs = [o for o in outputs if o[0] == "value"]
        dtypes = region.native_argument_dtypes
        super().__init__(region, python_function, source, "region", _with_flags(dtypes), dtypes)

    def result_dtypes(self) -> list:
        return _with_flags([dtype for _, dtype in self.native_outputs])

    def __call__(self, *values):
        called = self._call_native(values)
        if called is None:
            return self.python_function(*values)
        _, results = called
        count = len(self.native_outputs)
        position = 0
        outputs = []
        for output in self.outputs:
            if output[0] == "input":
                outputs.append(values[output[1]])
            else:
                flag = results[count + position]
                outputs.append(_out(results[position], output[1], flag))
                position += 1
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _with_flags(dtypes: Sequence[np.dtype]) -> list[np.dtype]:
    """``dtypes``, then one bool per value: its flag (whether it is a 0-d array)."""
    return [*dtypes, *[np.dtype(np.bool_)] * len(dtypes)]


def _signature(count: int) -> str:
    values = [f"in{k}" for k in range(count)]
    return ", ".join(values + [f"{name}_a" for name in values])


def _straight_source(name: str, writer: _Writer, argument_count: int, results, title) -> str:
    """The module of function ``name``: ``writer``'s lines, returning ``results`` and then
    their flags."""
    from . import codegen

    return _module_source(
        f"{_DECORATOR}\n"
        f"def {name}({_signature(argument_count)}):\n"
        f"    # {codegen.quoted(title)}\n"
        + "\n".join(_indented(writer.lines))
        + f"\n    {_returned(results + [writer.kinds[n] for n in results])}\n"
    )


def native_region(region, python_function):
    """The callable for ``region`` (`CompiledRegion`): a `NativeRegion`, or
    ``python_function`` when its code may not be native or the mode is off."""
    if _mode == "off" or not native_available():
        return python_function
    writer = _Writer(region.nodes)
    try:
        dtypes = writer.parameters(region.inputs)
        for index in region.members:
            writer.write(index)
        outputs = []
        returned = []
        for edge in region.outputs:
            name = writer.result(edge)
            if name.startswith("in") and name[2:].isdigit():
                outputs.append(("input", int(name[2:])))
                continue
            returned.append(name)
            outputs.append(("value", writer.dtypes[name]))
        if not writer.computed:
            raise NotNative("it computes nothing: constants and identities only")
    except NotNative as e:
        region.native_refused = str(e)
        return python_function
    region.native_argument_dtypes = dtypes
    source = _straight_source("region", writer, len(region.inputs), returned, region.name)
    return NativeRegion(region, python_function, source, outputs)


class NativeCond(_Tier):
    """The executor's callable for a cond that may run natively: an ``if``/``else`` of its
    branches' native lines (`_write_cond`).  An output that the taken branch passes through
    unchanged is the input itself, as the Python function gives it."""

    def __init__(self, cond, python_function, source, dtypes, passed):
        self.compiled_cond = cond
        self.output_dtypes = dtypes
        self.passed = passed  # per branch (false, true), per output: an input position or None
        dtypes = cond.native_argument_dtypes
        super().__init__(cond, python_function, source, "cond", _with_flags(dtypes), dtypes)

    def result_dtypes(self) -> list:
        return _with_flags(self.output_dtypes)

    def __call__(self, *values):
        called = self._call_native(values)
        if called is None:
            return self.python_function(*values)
        arguments, results = called
        count = len(self.output_dtypes)
        passed = self.passed[bool(arguments[0])]
        outputs = [
            values[passed[j]]
            if passed[j] is not None
            else _out(results[j], dtype, results[count + j])
            for j, dtype in enumerate(self.output_dtypes)
        ]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def native_cond(cond, python_function):
    """The callable for ``cond`` (`conds.CompiledCond`): a `NativeCond`, or
    ``python_function`` when its code may not be native or the mode is off."""
    if _mode == "off" or not native_available():
        return python_function
    writer = _Writer(cond.nodes)
    inputs = cond.structure.inputs
    try:
        if cond.wants_context:
            raise NotNative("an op of a branch takes the run's context")
        dtypes = writer.parameters(inputs)
        index = len(cond.nodes)  # a node index of its own for the cond's outputs
        passed = _write_cond(writer, index, tuple(f"in{k}" for k in range(len(inputs))), cond)
        if not writer.computed:
            raise NotNative("it computes nothing: constants and identities only")
    except NotNative as e:
        cond.native_refused = str(e)
        return python_function
    results = [writer.names[(index, j)] for j in range(len(cond.outputs))]
    cond.native_argument_dtypes = dtypes
    source = _straight_source("cond", writer, len(inputs), results, cond.name)
    output_dtypes = [writer.dtypes[name] for name in results]
    return NativeCond(cond, python_function, source, output_dtypes, passed)


INNER_STEPS_LIMIT = 1 << 24
_NO_LIMIT = 1 << 62


class NativeLoop(_Tier):
    """The executor's callable for a loop that may run natively (module docstring): it takes
    the run's context and the loop's inputs, runs chunks of at most `CHUNK_ITERATIONS`
    iterations, and checks the deadline between them."""

    signature_prefix = (np.dtype(np.int64), np.dtype(np.int64))  # the chunk's budget, limit

    def __init__(self, loop, python_function, source, variables, exits, input_dtypes):
        self.variables = variables  # per loop variable: (input position, dtype)
        self.exits = exits  # per Exit: the loop variable it gives
        self.compiled_loop = loop
        state = _with_flags([d for _, d in variables])
        arguments = [*state, *_with_flags(input_dtypes)]
        super().__init__(loop, python_function, source, "loop", arguments, input_dtypes)

    def result_dtypes(self) -> list:
        state = _with_flags([d for _, d in self.variables])
        return [np.dtype(np.int64), np.dtype(np.int64), *state]

    def __call__(self, context, *values):
        native = self._ready()
        if native is None:
            return self.python_function(context, *values)
        arguments = self.arguments(values)
        if arguments is None:
            return self.python_function(context, *values)
        invariants, flags = arguments[: len(values)], arguments[len(values) :]
        count = len(self.variables)
        state = [invariants[k] for k, _ in self.variables]
        state += [flags[k] for k, _ in self.variables]
        deadline = getattr(context, "deadline", None)
        limit = _NO_LIMIT if deadline is None else INNER_STEPS_LIMIT
        iteration = 0
        try:
            while True:
                status, iterations, *state = native(CHUNK_ITERATIONS, limit, *state, *arguments)
                if status == _ABANDONED:
                    return self.python_function(context, *values)
                iteration += iterations
                if status == _FINISHED:
                    break
                error = self.compiled.stop_error(context, iteration, time.monotonic())
                if error is not None:
                    self.compiled.locate(error, iteration)
                    raise error
        except Exception as error:
            if hasattr(error, "compiled_frames"):
                raise
            return self.python_function(context, *values)
        if _any_nan([state[v] for v in self.exits]):
            return self.python_function(context, *values)
        if iteration == 0:
            results = [values[self.variables[v][0]] for v in self.exits]
        else:
            results = [_out(state[v], self.variables[v][1], state[count + v]) for v in self.exits]
        return results[0] if len(results) == 1 else tuple(results)


_CHUNK_DONE, _FINISHED, _ABANDONED = 0, 1, 2


def native_loop(loop, python_function, schedule):
    """The callable for ``loop`` (`CompiledLoop`): a `NativeLoop`, or ``python_function``
    when its code may not be native or the mode is off.  ``schedule`` is
    ``(merges, predicate side, body)`` as the Python loop runs them.

    A chunk ends at the first iteration's end after ``budget`` steps: iterations of this
    loop and of the loops inside it, which run whole inside one of its iterations.  With a
    deadline, an inner loop that takes more than ``limit`` (`INNER_STEPS_LIMIT`) steps in one
    chunk gives the chunk up, and the whole call runs in Python, which checks the clock
    inside inner loops too."""
    from . import codegen

    if _mode == "off" or not native_available():
        return python_function
    writer = _Writer(loop.nodes)
    count = len(schedule[0])
    state_names = [f"var{v}" for v in range(count)]
    state = ", ".join([*state_names, *(f"{name}_a" for name in state_names)])
    writer.abandon = f"return {_ABANDONED}, iterations, {state}"
    try:
        argument_dtypes = writer.parameters(loop.inputs)
        inputs = [f"in{k}" for k in range(len(loop.inputs))]
        variables, predicate_lines, predicate, body_lines, next_names, exits = _loop_parts(
            writer, loop, inputs
        )
    except NotNative as e:
        loop.native_refused = str(e)
        return python_function
    next_flags = [writer.kinds[name] for name in next_names]
    lines = [
        _DECORATOR,
        f"def loop(budget, limit, {state}, {_signature(len(inputs))}):",
        f"    # {codegen.quoted(loop.name)}",
        "    iterations = 0",
        "    steps = 0",
        "    while steps < budget:",
        *_indented(predicate_lines, 2),
        f"        if not {predicate}:",
        f"            return {_FINISHED}, iterations, {state}",
        *_indented(body_lines, 2),
        f"        {', '.join([*state_names, *(n + '_a' for n in state_names)])}, = "
        f"{', '.join([*next_names, *next_flags])},",
        "        iterations += 1",
        "        steps += 1",
        f"    return {_CHUNK_DONE}, iterations, {state}",
    ]
    source = _module_source("\n".join(lines) + "\n")
    return NativeLoop(
        loop,
        python_function,
        source,
        [(k, writer.dtypes[name]) for name, k in variables],
        exits,
        argument_dtypes,
    )


def status(compiled) -> str:
    """How a compiled region or loop runs: natively, or in Python and why."""
    function = compiled.function
    if isinstance(function, _Tier):
        return function.status()
    if not native_available():
        return "Python (numba is not installed)"
    reason = getattr(compiled, "native_refused", None)
    return f"Python ({reason})" if reason else "Python (native mode off)"
