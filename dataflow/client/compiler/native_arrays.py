"""Native array kernels: a region of elementwise ops on arrays runs as one numba loop.

Without it, Adam's update of one variable runs some twenty numpy passes over the variable's
size (``grad - m``, ``* (1 - beta1)``, ``+ m``, ``square(grad)``, ...), each reading and writing
a whole array, with the executor scheduling each fused chain apart.  Here the whole region is
one loop over the output's elements that keeps every intermediate value in registers: the
inputs are read once and the outputs written once.

**The region** (`find_array_regions`).  A node may be a member when it is a pure ordinary op
(`regions.is_eligible`) with one output of an admitted dtype (`native_source.ADMITTED_DTYPES`)
and a known rank of at least 1, computed element by element by an op with an exact native
form (`_op_text`):

- an elementwise ufunc op whose ufunc numba computes exactly as numpy
  (`native_source.EXACT_UFUNCS`: ``+ - * /``, comparisons, logical ops, min/max, abs,
  negation, square, sqrt, floor, ceil), written as the scalar tier writes it (signed
  integers wrap as numpy's, float min/max break ties and keep NaNs as numpy's);
- a ``FusedElementwise`` chain (`dataflow.passes.elementwise_fusion`) whose steps are all such
  ufuncs; steps whose operands are all single values (Adam's step size ``lr * sqrt(1 -
  beta2^t) / (1 - beta1^t)``) are computed once, before the loop;
- ``Relu`` (``maximum(x, 0)``), ``ReluGrad`` (the gradient times 1 or 0, as its kernel, so a
  NaN or infinite gradient where the unit is off gives NaN), ``Select``/``SelectV2`` and the
  casts the scalar tier admits (never float to integer).

Every member's output has the same static shape, the region's *iteration shape*, and every
input of a member is, after its leading 1s, of that shape (*full*), a single value
(*scalar*), or of the iteration shape's last ``r`` dimensions, all known (a *row*: a bias
added to every row; one ``r`` per region).  So broadcasting is settled when the plan is made:
the kernel loops over rows and columns, indexing a full input by the element, a row by the
column, a scalar not at all.  Regions follow the rules of compiled regions (`regions`: same
frame, same deadness, convex) and must save numpy passes over the arrays (`MIN_STEPS`).

**Left out, and why.**  Transcendental functions: numba calls the C library's ``exp``,
``tanh``, ``log``, ``log1p``, ``expm1`` and ``sin``, whose results differ from numpy's SIMD loops
in the last bit, measured on this machine over every float32 in ``[2^-7, 20)`` and two
million float64s in ``[-20, 20)`` (``exp``: 39% of float32s and 5% of float64s differ,
``tanh`` 36% and 20%, ``log`` 12% and 0.07%); so ``Exp``, ``Tanh``, ``Log``, ``Sigmoid``,
``Softplus`` and the like stay numpy's and split a region where they are (a fused chain
that holds one stays numpy's whole: a node is not split).  Reductions
(``Sum``, ``Mean``, a bias's gradient): numpy sums pairwise, in an order a loop does not
keep.  Integer division and remainder (a zero divisor raises in numpy).

**Inside loops.**  The regions of the nodes inside ``while_loop`` frames are found first,
before the conds and loops are compiled (a loop compiled whole hides its members), so that a
compiled loop's body calls one kernel where it called a numpy function per op: an LSTM's new
cell state, its backward chain of gate gradients.  Rule 1 of `regions` then needs the guards
of `loops.loop_guards`, in which a loop's Exits count as its Enters (an Exit of the forward
loop feeds the backward one).  A kernel may be a member of a cond or loop compiled whole
(`regions.why_not_eligible`); in a loop that stays interpreted it runs as a node of the
frame.  ``AddN`` is a member too, as its kernel computes it: ``np.add`` from the first input
on, inputs of one shape.  An input that is a view with strides (a column block of a split)
is copied to a contiguous array first, one pass where the numpy calls make many.

**The sigmoid** (`NativeSigmoid`).  ``Sigmoid`` is a transcendental, but only through
``exp``: its kernel is ``z = exp(-|x|)``, ``r = 1 / (1 + z)``, ``where(x >= 0, r, z * r)``.  A
``Sigmoid`` node of float32 or float64 becomes a region of its own that runs ``-|x|`` in a
native loop, numpy's ``exp`` in place on it, and the rest in a second native loop: three
passes instead of eight, the same bits.

**Values, bit for bit.**  numba computes each op in the dtype numpy's rules give: every
input arrives as an array element or a numpy scalar of the graph's dtype (float32 stays
float32; no Python float meets it), and the constants written into the code are typed
(``np.float32(0.0)``).  numba compiles without fast-math and does not let LLVM contract
``a * b + c`` into a fused multiply-add (checked on this machine: with ``c = -(a * b)`` rounded
by numpy, a million float32 and float64 triples give 0 as unfused arithmetic does, where a
fused one would give the product's rounding error; `test_native_arrays` checks it too).
Before a kernel is used, a scalar probe of the same lines is compiled and the types numba
inferred for every value are checked against the graph's dtypes.  As in the scalar tier, a
call whose outputs hold a NaN runs again in Python (LLVM may swap the operands of ``+`` and
``*``, which changes which NaN's payload survives), floating point errors are silent where
numpy would warn, as TensorFlow is (numpy's ``errstate`` set to raise or call sends every
call to Python), and an input that is not what the kernel was made for (another dtype, shape
or layout) sends that call to Python.

**Threads.**  The kernel releases the GIL (``nogil``) and computes the rows (or elements) of
the outputs it is given; an output of at least `PARALLEL_MIN_ELEMENTS` elements is split
into blocks of rows run on the intra-op threads (`dataflow.framework.intra_op.run_blocks`),
whose pool counts the cores every kernel occupies, so native kernels, blocked numpy chains
and convolutions running at once never put more busy threads than cores on the machine.
numba's own parallel loops (``prange``) are not used: their threading layer keeps threads of
its own that the intra-op pool would not count, and the workqueue layer may not be entered
from two threads at once, which the inter-op pool does.  On this shared 2-core machine the
blocks never paid (`benchmarks/bench_native_arrays.py`, ``threshold``: one thread took 0.13
ms for 512K float32 elements where blocks took 0.31, 1.6 ms for 4M where blocks took 9): a
kernel that reads and writes each element once is bound by memory, which the second core
does not widen, and a helper the OS schedules late holds the call up.  So the threshold
sits past the sizes measured, where a kernel takes milliseconds.

**When.**  Array regions are found when a plan is compiled (`compile_program`, after conds
and loops, before the Python regions, which leave these nodes alone), and as the scalar tier
(`native`): only where numba is installed and the native mode is not ``"off"``; in
``"force"`` compiled when the plan is compiled, in ``"auto"`` in the background from the
`native.AUTO_AFTER_CALLS`-th call, the members running in Python until then; through the
same disk cache and its rules (`native_cache`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

import numpy as np

from executor.program import Node, NodeKind

from ...framework.intra_op import default_threads, run_blocks
from ...framework.op_registry import get_op_def
from . import native
from .native_source import (
    _ARRAY_DECORATOR,
    ADMITTED_DTYPES,
    EXACT_UFUNCS,
    FLOAT_EXTREMA,
    INTEGER_ONLY_UFUNCS,
    NotNative,
    _literal,
    _ufunc_text,
)
from .regions import (
    _is_back_edge,
    guards,
    is_eligible,
    regions_with_guards,
    topological_order,
)

# A region whose numpy kernels make one pass over the arrays gains nothing from a loop of its
# own; ``ReluGrad`` makes two (``features > 0``, then the product).
MIN_STEPS = 2
# Members of one kernel at most: LLVM's time grows faster than a function's length (a chain of
# 600 steps and its gradient, one region of some 3,000 ops, took eight minutes to compile), so
# a longer region runs as several kernels, one after the other; kernels of the same text
# (the stretches of a repeated chain) are compiled once.
MAX_MEMBERS = 64

# Output elements from which a kernel's rows are shared out among the intra-op threads
# (measured with `benchmarks/bench_native_arrays.py` on this 2-core machine: up to 4M
# elements, one thread was faster; see the module docstring).
PARALLEL_MIN_ELEMENTS = 1 << 23

# Blocks per thread when a kernel is split: a thread the machine slows down takes fewer.
BLOCKS_PER_THREAD = 4

FULL, ROW, SCALAR = "full", "row", "scalar"


def _dims(shape) -> Optional[tuple]:
    """A static shape's dimensions (None for an unknown one), or None for an unknown rank."""
    dims = getattr(shape, "dims", None)
    if dims is None:
        return None
    return tuple(getattr(d, "value", d) for d in dims)


def _static(tensor) -> tuple[Optional[np.dtype], Optional[tuple]]:
    try:
        dtype = np.dtype(tensor.dtype.as_numpy_dtype)
    except (TypeError, AttributeError):
        return None, None
    return dtype, _dims(tensor.shape)


def static_output(node: Node, output: int):
    """The graph tensor that output ``output`` of ``node`` stands for, or None: a compiled
    region, cond or loop's node has the tag of one op, not the tensors it gives."""
    tensors = getattr(node.kernel, "output_tensors", None)
    if tensors is not None:
        return tensors[output] if output < len(tensors) else None
    loop = getattr(node.kernel, "compiled_loop", None)
    if loop is not None:
        node, output = loop.nodes[loop.exits[output]], 0
    cond = getattr(node.kernel, "compiled_cond", None)
    if cond is not None:
        merge, output = cond.outputs[output]
        node = cond.nodes[merge]
    outputs = getattr(node.tag, "outputs", ())
    return outputs[output] if output < len(outputs) else None


def _pattern(dims: tuple, shape: tuple) -> Optional[tuple[str, int]]:
    """How an input of static ``dims`` broadcasts to the iteration ``shape``: ``(FULL, 0)``,
    ``(SCALAR, 0)``, ``(ROW, r)``, or None when it is none of these (a column, say)."""
    if len(dims) > len(shape):
        return None
    if tuple(dims) == shape:
        return (FULL, 0)
    stripped = list(dims)
    while stripped and stripped[0] == 1:
        stripped.pop(0)
    if not stripped:
        return (SCALAR, 0)
    if len(stripped) == len(shape):
        return (FULL, 0) if tuple(stripped) == shape else None
    tail = shape[len(shape) - len(stripped) :]
    if tuple(stripped) == tail and None not in tail:
        return (ROW, len(stripped))
    return None


class _Form:
    """What a member is to an array region: its iteration ``shape``, the ``row`` length of
    its row inputs (0: none), its output ``dtype``, and the ``ops`` it computes as
    ``(writer, operand positions)``, an operand -1 being the previous op's value."""

    def __init__(self, shape, row, dtype, ops, passes):
        self.shape, self.row, self.dtype, self.ops = shape, row, dtype, ops
        self.passes = passes  # the passes over the arrays its numpy kernel makes


def _ufunc_writer(ufunc, dtype: np.dtype):
    return lambda args: _ufunc_text(ufunc, args, dtype)


def _relu_writer(dtype: np.dtype):
    zero = _literal(np.zeros((), dtype))
    return lambda args: _ufunc_text(np.maximum, [args[0], zero], dtype)


def _relu_grad_writer(dtype: np.dtype):
    one, zero = _literal(np.ones((), dtype)), _literal(np.zeros((), dtype))
    return lambda args: _ufunc_text(
        np.multiply, [args[0], f"({one} if {args[1]} > {zero} else {zero})"], dtype
    )


def _template_writer(node: Node):
    op_def = node.tag._op_def
    template = op_def.extra.get("native")
    if template is None:
        return None
    written = template(node.tag, tuple(None for _ in node.inputs))
    if written is None:
        return None
    text = written[0]
    return lambda args: text.format(*args)


def _exact_ufunc(ufunc, dtype: np.dtype) -> bool:
    return ufunc in EXACT_UFUNCS and not (ufunc in INTEGER_ONLY_UFUNCS and dtype.kind == "f")


def _op_text(node: Node, input_dtypes: Sequence[np.dtype], dtype: np.dtype) -> Optional[list]:
    """The ops ``node`` computes, as `_Form.ops`, or None when one has no exact native form."""
    op = node.tag
    op_type = getattr(op, "type", None)
    if op_type == "FusedElementwise":
        ops = []
        for record in op.attrs["steps"]:
            ufunc = get_op_def(record[0]).extra["ufunc"]
            if not _exact_ufunc(ufunc, dtype):
                return None
            ops.append((_ufunc_writer(ufunc, dtype), tuple(record[1])))
        return ops
    positions = tuple(range(len(node.inputs)))
    if op_type == "Relu":
        # written as numpy's ``maximum(x, 0)``, whose ties the float form must break as numpy
        return [(_relu_writer(dtype), positions)] if _exact_ufunc(np.maximum, dtype) else None
    if op_type == "ReluGrad":
        return [(_relu_grad_writer(dtype), positions)]
    if op_type == "AddN":
        # its kernel adds the inputs one by one from the first, ``np.add`` each time
        if len(positions) < 2 or not _exact_ufunc(np.add, dtype):
            return None
        add = _ufunc_writer(np.add, dtype)
        return [(add, (0, 1)), *((add, (-1, k)) for k in positions[2:])]
    extra = op._op_def.extra
    ufunc = extra.get("ufunc")
    if ufunc is not None:
        if dtype in extra.get("dtype_kernels", ()) or not _exact_ufunc(ufunc, input_dtypes[0]):
            return None
        if ufunc in FLOAT_EXTREMA and len(set(input_dtypes)) != 1:
            return None
        return [(_ufunc_writer(ufunc, input_dtypes[0]), positions)]
    writer = _template_writer(node)
    return None if writer is None else [(writer, positions)]


# Ops whose kernels do not broadcast as numpy does: every input has the output's shape, but
# those named here, which may also be 0-d (``Select``'s condition; a condition vector picks
# whole rows, and 'then' and 'else' of different shapes are an error).
_SAME_SHAPES = {"ReluGrad": (), "Select": (0,), "AddN": ()}


def array_form(node: Node) -> Optional[_Form]:
    """The node's `_Form` when it may be a member of an array region (module docstring)."""
    if node.kind != NodeKind.OP or node.num_outputs != 1 or not is_eligible(node):
        return None
    op = node.tag
    outputs = getattr(op, "outputs", ())
    inputs = getattr(op, "inputs", ())
    if len(outputs) != 1 or len(inputs) != len(node.inputs) or not inputs:
        return None
    dtype, shape = _static(outputs[0])
    if dtype not in ADMITTED_DTYPES or not shape:
        return None
    rows = set()
    input_dtypes = []
    same_shapes = _SAME_SHAPES.get(getattr(op, "type", None))
    for k, tensor in enumerate(inputs):
        input_dtype, dims = _static(tensor)
        if input_dtype not in ADMITTED_DTYPES or dims is None:
            return None
        pattern = _pattern(dims, shape)
        if pattern is None:
            return None
        if same_shapes is not None and pattern[0] != FULL and not (k in same_shapes and not dims):
            return None
        if pattern[0] == ROW:
            rows.add(pattern[1])
        input_dtypes.append(input_dtype)
    if len(rows) > 1:
        return None
    ops = _op_text(node, input_dtypes, dtype)
    if ops is None:
        return None
    passes = 2 if getattr(op, "type", None) == "ReluGrad" else len(ops)  # compare, multiply
    return _Form(shape, rows.pop() if rows else 0, dtype, ops, passes)


def find_array_regions(
    nodes: Sequence[Node],
    within: Optional[Sequence[bool]] = None,
    analysis: Optional[tuple[Sequence[int], Sequence[frozenset]]] = None,
) -> tuple[list[list[int]], dict]:
    """The array regions of ``nodes`` (module docstring), each a list of node indices in
    topological order, and the `_Form` of each member; with ``within``, only of the nodes
    it marks True.  ``analysis`` is the nodes' topological order and guards, when the caller
    has them (`loops.loop_guards`); by default `regions.guards`."""
    forms = {
        i: form
        for i, node in enumerate(nodes)
        if (within is None or within[i]) and (form := array_form(node)) is not None
    }
    admitted = [i in forms for i in range(len(nodes))]

    def joins(p: int, i: int) -> bool:
        a, b = forms[p], forms[i]
        return a.shape == b.shape and (not a.row or not b.row or a.row == b.row)

    if analysis is None:
        order = topological_order(nodes)
        analysis = (order, guards(nodes, order))
    found = regions_with_guards(nodes, *analysis, 1, admitted, joins)
    groups = _merged(nodes, found, forms, analysis, siblings=within is not None)
    found = []
    for members in groups:
        # Consecutive members of a region in topological order are a region too: no path
        # between two of them leaves the region, so none leaves the stretch between them.
        for start in range(0, len(members), MAX_MEMBERS):
            part = members[start : start + MAX_MEMBERS]
            if sum(forms[m].passes for m in part) >= MIN_STEPS:
                found.append(part)
    return found, forms


def _merged(
    nodes: Sequence[Node],
    groups: list[list[int]],
    forms: dict,
    analysis: tuple,
    siblings: bool = False,
) -> list[list[int]]:
    """``groups`` with any two joined by an edge merged while the union stays a region.

    `find_regions` keeps a region convex by tiers, which is safe but splits more than it
    must: Adam's step takes its scale ``lr * sqrt(1 - beta2^t) / (1 - beta1^t)`` from ops
    outside, computed later than the moments' inputs, so its last chain lands a tier above
    the moments'.  Here two groups linked by an edge (same shape, rows, deadness) merge when
    no path leaves their union and comes back into it, checked by walking forward from the
    union's consumers outside it, no further than its last member.  ``analysis``: the
    nodes' topological order and guards.  With ``siblings``, two groups that read the same
    value merge on the same conditions though no edge joins them (`_merge_siblings`): in a
    loop's body, where nothing runs beside them, one kernel call costs less than two."""
    order, guard = analysis
    position = {index: k for k, index in enumerate(order)}
    consumers: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        producers = [p for p, _ in node.inputs if not _is_back_edge(nodes, p, node)]
        for p in dict.fromkeys([*producers, *node.control_inputs]):
            consumers[p].append(index)
    groups = [list(g) for g in groups]
    group_of = {m: g for g, members in enumerate(groups) for m in members}

    def convex(members: set) -> bool:
        last = max(position[m] for m in members)
        stack = [c for m in members for c in consumers[m] if c not in members]
        seen: set[int] = set()
        while stack:
            index = stack.pop()
            if index in members:
                return False
            if index in seen or position.get(index, last + 1) > last:
                continue
            seen.add(index)
            stack += consumers[index]
        return True

    def mergeable(a: int, b: int, p: int, i: int) -> bool:
        if forms[p].shape != forms[i].shape or guard[p] != guard[i]:
            return False
        rows = {forms[m].row for m in groups[a] + groups[b]} - {0}
        return len(rows) <= 1 and convex(set(groups[a]) | set(groups[b]))

    merged = True
    while merged:
        merged = False
        for index in sorted(group_of, key=position.__getitem__):
            b = group_of[index]
            for p, _ in nodes[index].inputs:
                a = group_of.get(p)
                if a is None or a == b or not mergeable(a, b, p, index):
                    continue
                groups[b] = sorted(groups[a] + groups[b], key=position.__getitem__)
                for m in groups[a]:
                    group_of[m] = b
                groups[a] = []
                merged = True
                break
            if merged:
                break
        if not merged and siblings:
            merged = _merge_siblings(nodes, groups, group_of, mergeable, position)
    return [g for g in groups if g]


def _merge_siblings(nodes, groups: list, group_of: dict, mergeable, position: dict) -> bool:
    """Merges two groups that read the same value (an LSTM's backward chains, which read the
    same popped gates) where `_merged`'s ``mergeable`` allows it; whether it merged two."""
    read = [
        {tuple(e) for m in members for e in nodes[m].inputs} - {(m, 0) for m in members}
        for members in groups
    ]
    for a, first in enumerate(groups):
        for b in range(a + 1, len(groups)):
            second = groups[b]
            if not first or not second or not read[a] & read[b]:
                continue
            if mergeable(a, b, first[0], second[0]):
                groups[b] = sorted(first + second, key=position.__getitem__)
                for m in first:
                    group_of[m] = b
                groups[a] = []
                return True
    return False


class _KernelWriter:
    """Writes the kernel of one array region, and its scalar probe.

    Every value has a name and a *class*: ``"once"`` (computed from scalars and constants
    alone, before the loop) or ``"each"`` (per element, inside the loop)."""

    def __init__(self, region, forms: dict):
        self.region = region
        self.forms = forms
        nodes = region.nodes
        first = forms[region.members[0]]
        self.shape = first.shape
        self.row = max(forms[m].row for m in region.members)
        self.names: dict[tuple, str] = {}
        self.classes: dict[str, str] = {}
        self.dtypes: dict[str, np.dtype] = {}
        self.once: list[str] = []
        self.each: list[str] = []
        self.loads: list[tuple[str, int, str]] = []  # (name, input, pattern) read per element
        self.patterns: list[tuple[str, np.dtype]] = []
        for k, edge in enumerate(region.inputs):
            tensor = static_output(nodes[edge[0]], edge[1])
            dtype, dims = (None, None) if tensor is None else _static(tensor)
            if dtype is None or dims is None:
                raise NotNative(f"input {k} has no static dtype and shape")
            pattern = _pattern(dims, self.shape)
            if pattern is None:  # an input of a member, so already admitted
                raise NotNative(f"input {k} does not broadcast to the region")
            name = f"x{k}"
            self.names[tuple(edge)] = name
            self.dtypes[name] = dtype
            self.patterns.append((pattern[0], dtype))
            if pattern[0] == SCALAR:
                self.classes[name] = "once"
                self.once.append(f"{name} = in{k}")
            else:
                self.classes[name] = "each"
                self.loads.append((name, k, pattern[0]))
        if not any(p == FULL for p, _ in self.patterns):
            raise NotNative("no input has the region's shape")
        for index in region.members:
            self._member(index)

    def _member(self, index: int) -> None:
        node = self.region.nodes[index]
        form = self.forms[index]
        args = [self.names[tuple(edge)] for edge in node.inputs]
        previous = None
        for writer, operands in form.ops:
            names = [previous if k < 0 else args[k] for k in operands]
            target = f"t{len(self.dtypes)}"  # by position, not by op: see `kernel_source`
            once = all(self.classes[n] == "once" for n in names)
            self.classes[target] = "once" if once else "each"
            self.dtypes[target] = form.dtype
            (self.once if once else self.each).append(f"{target} = {writer(names)}")
            previous = target
        self.names[(index, 0)] = previous

    def outputs(self) -> list[str]:
        return [self.names[tuple(edge)] for edge in self.region.outputs]

    def kernel_source(self) -> str:
        """The kernel: it takes the inputs (a full one and the outputs as ``(rows, row
        length)`` arrays when the region has rows, else flat; a row flat; a scalar as a
        value) and computes every element of the outputs it is given.  Loops over ranges
        from 0 and two-dimensional indexing let LLVM vectorize it (indices it cannot prove
        non-negative would each carry numba's wraparound test).  The text names no op (the
        region's Python source does): regions that compute alike, Adam's update of each
        variable, share one kernel, compiled and cached once."""
        ins = [f"in{k}" for k in range(len(self.region.inputs))]
        outs = [f"out{k}" for k in range(len(self.region.outputs))]
        lines = [
            _ARRAY_DECORATOR,
            f"def kernel({', '.join([*ins, *outs])}):",
            "    nan = False",
            *(f"    {line}" for line in self.once),
        ]
        if self.row:
            lines += [
                "    for i in range(out0.shape[0]):",
                "        for j in range(out0.shape[1]):",
            ]
            depth = "            "
            at = {FULL: "i, j", ROW: "j"}
        else:
            lines.append("    for i in range(out0.shape[0]):")
            depth = "        "
            at = {FULL: "i"}
        lines += [f"{depth}{name} = in{k}[{at[pattern]}]" for name, k, pattern in self.loads]
        lines += [depth + line for line in self.each]
        for k, name in enumerate(self.outputs()):
            lines.append(f"{depth}out{k}[{at[FULL]}] = {name}")
            if self.dtypes[name].kind == "f":
                lines.append(f"{depth}nan |= {name} != {name}")
        lines.append("    return nan")
        return "\n".join(lines) + "\n"

    def probe_source(self) -> tuple[str, list]:
        """A function of one element of each input that computes every value and returns
        them: the types numba gives its results are the ones the kernel computes in."""
        ins = [f"in{k}" for k in range(len(self.region.inputs))]
        lines = [
            _ARRAY_DECORATOR,
            f"def probe({', '.join(ins)}):",
            *(f"    {line}" for line in self.once),
            *(f"    {name} = in{k}" for name, k, _ in self.loads),
            *(f"    {line}" for line in self.each),
        ]
        values = list(self.dtypes)
        lines.append(f"    return ({''.join(name + ', ' for name in values)})")
        return "\n".join(lines) + "\n", [self.dtypes[name] for name in values]


class NativeArrayRegion(native._Tier):
    """The executor's callable for an array region (module docstring): checks the inputs,
    allocates the outputs, runs the kernel over them (in blocks on the intra-op threads when
    large), and gives the Python function the calls it cannot take."""

    native_array_region = True  # `regions.why_not_eligible`: not a member of another region

    def __init__(self, region, python_function, source, probe, writer: _KernelWriter):
        self.patterns = writer.patterns
        self.shape = writer.shape
        self.row = writer.row
        self.inner = math.prod(writer.shape[len(writer.shape) - writer.row :]) if writer.row else 1
        self._kernel_shape = (-1, self.inner) if self.row else (-1,)  # what the kernel loops over
        self.output_dtypes = [writer.dtypes[name] for name in writer.outputs()]
        # the graph's tensors the outputs stand for (`static_output`)
        self.native_calls = 0  # calls whose results the kernel gave (tests and benchmarks)
        self.output_tensors = [region.nodes[m].tag.outputs[k] for m, k in region.outputs]
        self.probe_source, self.probe_dtypes = probe
        threads = [
            getattr(region.nodes[m].tag, "attrs", {}).get("intra_op_threads")
            for m in region.members
        ]
        self.threads = max([t for t in threads if t] or [default_threads()])
        super().__init__(region, python_function, source, "kernel", (), ())

    def _array_ndims(self) -> list[int]:
        """Per input, its array's dimensions in the kernel (0: a scalar value)."""
        full = 2 if self.row else 1
        return [{SCALAR: 0, ROW: 1, FULL: full}[p] for p, _ in self.patterns]

    def worker_types(self) -> list:
        full = 2 if self.row else 1
        ins = [[d.str, n] if n else d.str for n, (_, d) in zip(self._array_ndims(), self.patterns)]
        return ins + [[d.str, full] for d in self.output_dtypes]

    def _signature(self, numba) -> tuple:
        def array(dtype, ndim):
            return numba.types.Array(numba.from_dtype(dtype), ndim, "C")

        full = 2 if self.row else 1
        ins = tuple(
            array(d, n) if n else numba.from_dtype(d)
            for n, (_, d) in zip(self._array_ndims(), self.patterns)
        )
        return ins + tuple(array(d, full) for d in self.output_dtypes)

    def _build(self) -> tuple:
        """Compiles the probe, checks its types, then the kernel."""
        self._check_probe()
        numba = native._import_numba()
        return native.compiled_entry(self.source, "kernel", self._signature(numba))

    def _check_probe(self) -> None:
        input_dtypes = [d for _, d in self.patterns]
        native._compile(self.probe_source, "probe", input_dtypes, self.probe_dtypes)

    def __call__(self, *values):
        kernel = self._ready()
        if kernel is None:
            return self.python_function(*values)
        arguments = self._arguments(values)
        if arguments is None:
            return self.python_function(*values)
        shape, ins = arguments
        size = math.prod(shape)
        outs = [np.empty(shape, dtype) for dtype in self.output_dtypes]
        if size == 0:
            return outs[0] if len(outs) == 1 else tuple(outs)
        try:
            nan = self._run(kernel, size, ins, outs)
        except Exception:
            return self.python_function(*values)
        if nan:
            return self.python_function(*values)
        self.native_calls += 1
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _arguments(self, values) -> Optional[tuple]:
        """``(iteration shape, kernel inputs)`` for ``values``, or None when one is not what
        the kernel was made for.  A compiled loop calls this once per iteration, so the
        common case (every dimension known when the plan was made) takes the short paths."""
        shape = None
        ins = []
        full = self._kernel_shape
        for value, (pattern, dtype) in zip(values, self.patterns):
            if pattern == SCALAR:
                if type(value) is dtype.type:
                    ins.append(value)
                elif type(value) is np.ndarray and value.size == 1 and value.dtype == dtype:
                    ins.append(value.reshape(())[()])
                else:
                    return None
                continue
            if type(value) is not np.ndarray or value.dtype != dtype:
                return None
            if not value.flags.c_contiguous:
                # a view (a column block of a split, say): copied, one pass the Python
                # function's numpy calls would make many times over
                value = np.ascontiguousarray(value)
            if pattern == FULL:
                if shape is None:
                    shape = value.shape
                    if shape != self.shape and not self._fits(shape):
                        return None
                elif value.shape != shape:
                    return None
                ins.append(value.reshape(full))
                continue
            if value.size != self.inner or (
                value.shape[value.ndim - self.row :] != self.shape[len(self.shape) - self.row :]
            ):
                return None
            ins.append(value.reshape(-1))
        if shape is None:
            return None
        return shape, ins

    def _fits(self, shape: tuple) -> bool:
        """Whether a run's ``shape`` is the static iteration shape, some of whose dimensions
        were unknown when the plan was made."""
        return len(shape) == len(self.shape) and all(
            s is None or s == n for s, n in zip(self.shape, shape)
        )

    def _run(self, kernel, size: int, ins: list, outs: list) -> bool:
        """Runs the kernel over every element of ``outs``; whether one holds a NaN."""
        shape = (-1, self.inner) if self.row else (-1,)
        flat_outs = [out.reshape(shape) for out in outs]
        rows = flat_outs[0].shape[0]
        if size < PARALLEL_MIN_ELEMENTS or self.threads < 2 or rows < 2:
            return kernel(*ins, *flat_outs)
        full = [pattern == FULL for pattern, _ in self.patterns]
        count = min(rows, self.threads * BLOCKS_PER_THREAD)
        nans = [False] * count

        def run_block(number: int) -> None:
            block = slice(rows * number // count, rows * (number + 1) // count)
            block_ins = [x[block] if f else x for x, f in zip(ins, full)]
            nans[number] = kernel(*block_ins, *(out[block] for out in flat_outs))

        run_blocks(count, run_block, self.threads)
        return any(nans)

    def status(self) -> str:
        return "array kernel: " + super().status()


class _Draft:
    """What `_KernelWriter` reads of a region, before the region is made."""

    def __init__(self, nodes: Sequence[Node], members: Sequence[int], outputs):
        self.name = nodes[members[-1]].name
        self.nodes, self.members, self.outputs = nodes, tuple(members), tuple(outputs)
        member_set = set(members)
        inputs: list = []
        for index in members:
            for edge in nodes[index].inputs:
                if edge[0] not in member_set and tuple(edge) not in inputs:
                    inputs.append(tuple(edge))
        self.inputs = tuple(inputs)  # in the order `CompiledRegion` takes them


def array_kernel_writable(nodes: Sequence[Node], members, outputs, forms: dict) -> bool:
    """Whether the array region of ``members`` (one of `find_array_regions`) whose edges
    ``outputs`` are used outside has a kernel (`_KernelWriter` finds nothing to refuse)."""
    try:
        _KernelWriter(_Draft(nodes, members, outputs), forms)
    except NotNative:
        return False
    return True


def native_array_region(region, python_function, forms: dict) -> NativeArrayRegion:
    """The `NativeArrayRegion` of ``region`` (a `CompiledRegion` that
    `array_kernel_writable` admitted)."""
    writer = _KernelWriter(region, forms)
    source = native._module_source(writer.kernel_source())
    probe_text, probe_dtypes = writer.probe_source()
    probe = (native._module_source(probe_text), probe_dtypes)
    return NativeArrayRegion(region, python_function, source, probe, writer)


# -- the logistic sigmoid: numpy's exp between two native loops ----------------------------------
# ``Sigmoid``'s kernel (`dataflow.ops.math_ops`) computes ``z = exp(-|x|)``, ``r = 1 / (1 + z)``
# and ``where(x >= 0, r, z * r)``: eight numpy passes over the array, each allocating.  The
# exponential must stay numpy's (module docstring, "Left out"); the rest is exact arithmetic.
# So `NativeSigmoid` runs one native loop for ``-|x|`` (into a buffer), numpy's ``exp`` on that
# buffer in place (the same call on the same values as the kernel's, so the same bits and the
# same warnings), and one native loop for the rest: three passes (four for an input that is
# a view with strides, copied first: a gate of an LSTM is a column block of one product).
_SIGMOID_SOURCE = """\
{decorator}
def before(x, z):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            z[i, j] = -abs(x[i, j])


{decorator}
def after(x, z, out):
    nan = False
    one = np.{dtype}(1.0)
    zero = np.{dtype}(0.0)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            e = z[i, j]
            r = one / (one + e)
            v = r if x[i, j] >= zero else e * r
            out[i, j] = v
            nan |= v != v
    return nan


{decorator}
def probe(x, e):
    one = np.{dtype}(1.0)
    zero = np.{dtype}(0.0)
    m = -abs(x)
    s = one + e
    r = one / s
    p = e * r
    return (m, s, r, p, r if x >= zero else p)
"""

SIGMOID_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def sigmoid_dtype(node: Node) -> Optional[np.dtype]:
    """The dtype of a ``Sigmoid`` node that `NativeSigmoid` may run (a pure op of an admitted
    float dtype and a known rank of at least 1), else None."""
    if node.kind != NodeKind.OP or node.num_outputs != 1 or not is_eligible(node):
        return None
    if getattr(node.tag, "type", None) != "Sigmoid" or len(node.inputs) != 1:
        return None
    dtype, shape = _static(node.tag.outputs[0])
    return dtype if dtype in SIGMOID_DTYPES and shape else None


class NativeSigmoid(native._Tier):
    """The executor's callable for a region of one ``Sigmoid`` (see above): the two native
    loops around numpy's ``exp``, or the Python function for a call they cannot take (another
    dtype, a 0-d or empty array, numpy's error state set to raise) or whose result holds a
    NaN (computed again in Python, for the kernel's NaN bits)."""

    native_array_region = True  # `regions.why_not_eligible`: not a member of another region

    def __init__(self, region, python_function, dtype: np.dtype):
        self.dtype = np.dtype(dtype)
        self.native_calls = 0  # calls whose results the loops gave (tests and benchmarks)
        self.output_tensors = [region.nodes[m].tag.outputs[k] for m, k in region.outputs]
        text = _SIGMOID_SOURCE.format(decorator=_ARRAY_DECORATOR, dtype=self.dtype.name)
        source = native._module_source(text)
        super().__init__(region, python_function, source, "after", (), ())

    def worker_types(self) -> list:
        name = self.dtype.str
        return [[name, 2]] * 3

    def _build(self) -> tuple:
        """Checks the types numba gives every value (the probe), then compiles both loops."""
        native._compile(self.source, "probe", [self.dtype] * 2, [self.dtype] * 5)
        numba = native._import_numba()
        contiguous = numba.types.Array(numba.from_dtype(self.dtype), 2, "C")
        entries = []
        for name, signature in (("before", (contiguous,) * 2), ("after", (contiguous,) * 3)):
            entry, dispatcher = native.compiled_entry(self.source, name, signature)
            entries.append(entry)
        return tuple(entries), dispatcher

    def __call__(self, x):
        loops = self._ready()
        if (
            loops is None
            or type(x) is not np.ndarray
            or x.dtype != self.dtype
            or x.ndim == 0
            or x.size == 0
        ):
            return self.python_function(x)
        before, after = loops
        rows = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
        if not rows.flags.c_contiguous:
            # LLVM vectorizes the loops over contiguous rows only (a loop over a view with
            # strides took four times as long as this copy and the loop together)
            rows = np.ascontiguousarray(rows)
        z = np.empty(rows.shape, self.dtype)
        out = np.empty(x.shape, self.dtype)
        try:
            before(rows, z)
            np.exp(z, out=z)
            nan = after(rows, z, out.reshape(rows.shape))
        except Exception:
            return self.python_function(x)
        if nan:
            return self.python_function(x)
        self.native_calls += 1
        return out

    def status(self) -> str:
        return "sigmoid loops: " + super().status()
