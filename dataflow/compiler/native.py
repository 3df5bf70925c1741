"""The native tier: compiled regions and loops of scalars run as numba machine code.

A `CompiledRegion` or `CompiledLoop` (the Python tier, `codegen`, `loops`) hands its Python
function to `native_region` / `native_loop`, which return the callable the executor runs: the
Python function itself when the code cannot be native, else a `NativeRegion` / `NativeLoop`
that runs an ``njit`` function written from the same members and falls back to the Python
function, per call, whenever it cannot use it.

**What may be native** (`_Writer`): every value of the region or loop is a 0-d value of an
admitted dtype (``bool``, the integers, ``float32``, ``float64``; the static shape must be
``[]``), and every member is one of

- a ufunc op whose ufunc numba computes exactly as numpy (`EXACT_UFUNCS`: arithmetic,
  comparisons, logical ops, min/max of integers, abs, negation, floor/ceil, square, sqrt --
  the last correctly rounded in both), written ``np.<ufunc>(...)``: numba types a ufunc on
  scalars with numpy's rules, so int32 stays int32 and wraps, float32 stays float32 (its operators
  would promote small integers to int64, so the code never uses them);
- an op whose definition declares a template (``OpDef.extra["native"]``, see `math_ops`:
  ``Cast``, ``Select``, ``SelectV2``);
- a constant (its value as a literal of its dtype), or a pass-through (``Identity``,
  ``LoopCond``);
- a fused elementwise chain of small values whose steps are all exact ufuncs.

Anything else -- transcendentals (LLVM's ``exp``/``tanh``/``log`` differ from numpy's in
the last bit), reductions (numpy sums pairwise), ops that can raise (integer division),
arrays, inner loops -- keeps the whole region or loop in Python.  After compiling, the
return types numba inferred are checked against the graph's dtypes; any difference keeps
Python too.

**Values.**  numba returns Python scalars; the wrapper converts each result back to what the
interpreter gives, from the kind each template declares: a numpy scalar of the op's dtype,
a 0-d array, or the kind of an input (a ``Cast`` or ``Identity`` of a 0-d array constant is
a 0-d array).  An output that is an input passed through is that input itself.  A loop
variable whose next value is another variable unchanged stays in Python: which kind its
value has would depend on the iteration.  An input that is not a 0-d value of the expected
dtype sends the call to Python.  Native code is silent where numpy warns (float overflow,
invalid operations), as TensorFlow is; the values are the same, NaN signs and payloads
included: LLVM treats a NaN's sign and payload as free to change when it optimizes
(``a - (-b)`` becomes ``a + b``; ``inf - inf`` on constants folds to a positive NaN where the
machine makes a negative one), so a call whose results include a NaN is run again in Python,
which gives the interpreter's bits.  Only a result that is a NaN can show a NaN's sign: no
admitted op reads it (comparisons, ``where`` and casts to bool ignore it).

**Errors.**  No admitted op raises (floats follow ``error_model="numpy"``: division by zero
gives inf as numpy does).  Should the native call raise all the same, the wrapper re-runs
the same inputs through the Python function -- regions and loops are pure -- so an error
names the op, line and iteration the interpreter names.

**Deadlines.**  A native loop runs at most `CHUNK_ITERATIONS` iterations per call and returns
its state; between calls the wrapper compares the clock with ``context.deadline`` and raises
the Python loop's deadline error, with the iteration reached.

**Not yet native:** arrays (values of any other shape than ``[]``), conds, a loop with an
inner loop (the inner loop alone is native), float minimum/maximum (numba keeps the first
operand of two zeros where numpy picks the signed one).  A cond could be added as an
``if``/``else`` of two line blocks, the `_Writer` writing each branch.

**When it compiles** (the mode: ``DATAFLOW_NATIVE``, read at import, or `set_native`):
``"off"`` never; ``"auto"`` (the default) in the background: the `AUTO_AFTER_CALLS`-th call
of a region or loop hands its compilation to one compiler thread and every call runs the
Python function until the machine code is ready, so no run waits for numba (its import alone
takes a few tenths of a second; a compilation from some 30 ms for a few ops to seconds for a
1000-op region) and no run's deadline is spent on it;
``"force"`` at once, synchronously, when the region is made -- before its run starts the
clock (the test mode: with the compile plugin, the suite proves native code equal to the
interpreter).  The mode is read when a region is made, and at each call until it compiles.

**Caching.**  Per plan, the wrapper keeps its compiled function.  Across plans and processes,
the generated module is written to ``$DATAFLOW_CACHE_DIR`` (default
``~/.cache/dataflow``) as ``native/df_<hash of its source>.py`` and imported from there, and
numba's ``cache=True`` keeps the machine code beside it: a new process loads it instead of
compiling.  `native_available` says whether numba can be imported; ``import dataflow`` never
imports it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import queue
import sys
import threading
import time
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
# numba's float minimum and maximum keep their first operand where numpy's pick -0.0 / 0.0
INTEGER_ONLY_UFUNCS = frozenset({np.minimum, np.maximum})
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


class NotNative(Exception):
    """Why a region or loop stays in Python (the message says which op and why)."""


# -- writing the source ------------------------------------------------------------------------
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
    maps a name to what the interpreter's value there is: ``"scalar"``, ``"array"``, or
    ``("input", k)`` / ``("var", k)``: the kind of the function's argument ``k`` / of loop
    variable ``k`` (set by `NativeLoop`)."""

    def __init__(self, nodes: Sequence[Node]):
        self.nodes = nodes
        self.names: dict[tuple[int, int], str] = {}
        self.kinds: dict[str, Any] = {}
        self.dtypes: dict[str, np.dtype] = {}
        self.lines: list[str] = []
        self.computed = 0  # lines that are not constants

    def parameter(self, edge: tuple, name: str, kind: Any) -> None:
        self.names[tuple(edge)] = name
        self.kinds[name] = kind
        self.dtypes[name] = _scalar_dtype(self.nodes[edge[0]], edge[1])

    def alias(self, edge: tuple, name: str) -> None:
        self.names[tuple(edge)] = name

    def write(self, index: int) -> None:
        """The lines of node ``index`` (`NotNative` when it may not be native)."""
        from . import codegen

        node = self.nodes[index]
        args = tuple(self.names[tuple(edge)] for edge in node.inputs)
        where = codegen.describe(node)
        if node.num_outputs != 1:
            raise NotNative(f"{where} has {node.num_outputs} outputs")
        dtype = _scalar_dtype(node, 0)
        target = codegen.value_name(index, 0, 1)
        self.names[(index, 0)] = target
        constant = codegen._constant_value(node)
        if constant is not None:
            self._line(target, _literal(constant), "array", dtype, where, constant=True)
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
                raise NotNative(f"{where}: numba's float {extra['ufunc'].__name__} differs")
            text = f"np.{extra['ufunc'].__name__}({', '.join(args)})"
            self._line(target, text, "scalar", dtype, where)
            return
        template = extra.get("native")
        written = template(node.tag) if template is not None else None
        if written is None:
            raise NotNative(f"{where} has no exact native form")
        text, result = written
        kind = self.kinds[args[0]] if result == "like 0" else result
        self._line(target, text.format(*args), kind, dtype, where)

    def _fused(self, index: int, node: Node, args: tuple, steps: list, dtype) -> None:
        from . import codegen

        previous = None
        floats = dtype.kind == "f" or any(self.dtypes[a].kind == "f" for a in args)
        for position, (ufunc, operands, record, _) in enumerate(steps):
            if ufunc not in EXACT_UFUNCS or (ufunc in INTEGER_ONLY_UFUNCS and floats):
                raise NotNative(f"{record[2]} ({record[0]}) has no exact native form")
            operand_names = [previous if k < 0 else args[k] for k in operands]
            last = position == len(steps) - 1
            target = codegen.value_name(index, 0, 1) if last else f"v{index}_step{position}"
            comment = f"{record[2]} ({record[0]}) at {record[3]}, step {position + 1}"
            text = f"np.{ufunc.__name__}({', '.join(operand_names)})"
            self._line(target, text, "scalar", dtype if last else None, comment)
            previous = target
        self.names[(index, 0)] = previous

    def _line(self, target, text, kind, dtype, comment: str, constant: bool = False) -> None:
        self.computed += not constant
        self.lines.append(f"{target} = {text}  # {comment}")
        self.kinds[target] = kind
        if dtype is not None:
            self.dtypes[target] = dtype

    def result(self, edge: tuple) -> str:
        return self.names[tuple(edge)]


def _module_source(function_source: str) -> str:
    return "import numpy as np\nfrom numba import njit\n\n\n" + function_source


_DECORATOR = '@njit(cache=True, error_model="numpy")'


# -- loading and compiling ---------------------------------------------------------------------
_modules: dict[str, Any] = {}
_modules_lock = threading.Lock()


def cache_directory() -> str:
    """Where generated modules and numba's machine code are kept across processes."""
    root = os.environ.get("DATAFLOW_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dataflow"
    )
    return os.path.join(root, "native")


def load_function(source: str, function_name: str):
    """The numba dispatcher named ``function_name`` of the module ``source``: written to the
    cache directory under its hash (once) and imported from there (once per process)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    with _modules_lock:
        module = _modules.get(digest)
        if module is None:
            directory = cache_directory()
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, f"df_{digest}.py")
            if not os.path.exists(path):
                partial = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
                with open(partial, "w") as f:
                    f.write(source)
                os.replace(partial, path)
            name = f"dataflow_native_{digest}"
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            _modules[digest] = module
    return getattr(module, function_name)


def _compile(source: str, function_name: str, argument_dtypes, result_dtypes):
    """The machine-code entry point of ``function_name`` for arguments of
    ``argument_dtypes``, or `NotNative` when numba's return types are not ``result_dtypes``
    (entries None are not checked)."""
    import numba

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
        if want is not None and got != numba.from_dtype(want):
            raise NotNative(f"numba returns {got} where the graph has {want}")
    return overload.entry_point, dispatcher


_compile_queue: Optional[queue.Queue] = None


def _compile_in_background(tier: _Tier) -> threading.Event:
    """Queues ``tier``'s compilation for the one daemon thread that compiles native code in
    "auto" mode, one function at a time (a process may exit while it compiles); returns the
    event set when it is done."""
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
            tier.compile()
        finally:
            done.set()


class _Tier:
    """What `NativeRegion` and `NativeLoop` share: the Python function, the native source,
    when to compile, and the conversion of values in and out."""

    signature_prefix: tuple = ()  # numba's arguments before the values'

    def __init__(self, compiled, python_function, source, function_name, argument_dtypes):
        self.compiled = compiled
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
        if native is not None or self.refused is not None or _mode == "off":
            return native
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
            else:
                self.native = native
            self.compile_seconds = time.perf_counter() - began

    def wait(self) -> None:
        """Waits for a compilation started in the background, if any."""
        if self.pending is not None:
            self.pending.wait()

    def result_dtypes(self) -> list:
        raise NotImplementedError

    def arguments(self, values) -> Optional[list]:
        """``values`` as numba's arguments (numpy scalars), or None when one is not a 0-d
        value of its dtype."""
        arguments = []
        for value, dtype in zip(values, self.argument_dtypes):
            if type(value) is dtype.type:
                arguments.append(value)
            elif type(value) is np.ndarray and value.ndim == 0 and value.dtype == dtype:
                arguments.append(value[()])
            else:
                return None
        return arguments


def _any_nan(results) -> bool:
    """Whether a native result is a NaN, whose sign and payload LLVM does not keep as the
    machine's arithmetic makes them (module docstring, "Values")."""
    return any(type(r) is float and r != r for r in results)


def _out(value, dtype: np.dtype, kind, inputs) -> Any:
    """A native result as the interpreter's value: numpy scalar or 0-d array (`_Writer`)."""
    if isinstance(kind, tuple):
        kind = "array" if type(inputs[kind[1]]) is np.ndarray else "scalar"
    if kind == "array":
        return np.array(value, dtype=dtype)
    return dtype.type(value)


class NativeRegion(_Tier):
    """The executor's callable for a region that may run natively (module docstring)."""

    def __init__(self, region, python_function, source, outputs):
        self.outputs = outputs  # per output: ("value", dtype, kind) or ("input", k)
        self.native_outputs = [o for o in outputs if o[0] == "value"]
        argument_dtypes = region.native_argument_dtypes
        super().__init__(region, python_function, source, "region", argument_dtypes)

    def result_dtypes(self) -> list:
        return [dtype for _, dtype, _ in self.native_outputs]

    def __call__(self, *values):
        native = self._ready()
        if native is None:
            return self.python_function(*values)
        arguments = self.arguments(values)
        if arguments is None:
            return self.python_function(*values)
        try:
            results = native(*arguments)
        except Exception:
            return self.python_function(*values)
        if _any_nan(results):
            return self.python_function(*values)
        position = 0
        outputs = []
        for output in self.outputs:
            if output[0] == "input":
                outputs.append(values[output[1]])
            else:
                _, dtype, kind = output
                outputs.append(_out(results[position], dtype, kind, values))
                position += 1
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def native_region(region, python_function):
    """The callable for ``region`` (`CompiledRegion`): a `NativeRegion`, or
    ``python_function`` when its code may not be native or the mode is off."""
    if _mode == "off" or not native_available():
        return python_function
    writer = _Writer(region.nodes)
    try:
        dtypes = []
        for k, edge in enumerate(region.inputs):
            writer.parameter(edge, f"in{k}", ("input", k))
            dtypes.append(writer.dtypes[f"in{k}"])
        for index in region.members:
            writer.write(index)
        outputs = []
        returned = []
        for edge in region.outputs:
            name = writer.result(edge)
            if name.startswith("in"):
                outputs.append(("input", int(name[2:])))
                continue
            returned.append(name)
            outputs.append(("value", writer.dtypes[name], writer.kinds[name]))
        if not writer.computed:
            raise NotNative("it computes nothing: constants and identities only")
    except NotNative as e:
        region.native_refused = str(e)
        return python_function
    region.native_argument_dtypes = dtypes
    body = "\n".join(f"    {line}" for line in writer.lines)
    parameters = ", ".join(f"in{k}" for k in range(len(region.inputs)))
    source = _module_source(
        f"{_DECORATOR}\n"
        f"def region({parameters}):\n"
        f"    # {region.name}\n"
        f"{body}\n"
        f"    return ({''.join(name + ', ' for name in returned)})\n"
    )
    return NativeRegion(region, python_function, source, outputs)


class NativeLoop(_Tier):
    """The executor's callable for a loop that may run natively (module docstring): it takes
    the run's context and the loop's inputs, runs chunks of at most `CHUNK_ITERATIONS`
    iterations, and checks the deadline between them."""

    signature_prefix = (np.dtype(np.int64),)  # the chunk's budget of iterations

    def __init__(self, loop, python_function, source, variables, exits, argument_dtypes):
        self.variables = variables  # per loop variable: (input position, dtype, kind)
        self.exits = exits  # per Exit: the loop variable it gives
        self.compiled_loop = loop
        super().__init__(loop, python_function, source, "loop", argument_dtypes)

    def result_dtypes(self) -> list:
        return [np.dtype(np.bool_), np.dtype(np.int64), *(d for _, d, _ in self.variables)]

    def __call__(self, context, *values):
        native = self._ready()
        if native is None:
            return self.python_function(context, *values)
        arguments = self.arguments([values[k] for k, _, _ in self.variables] + list(values))
        if arguments is None:
            return self.python_function(context, *values)
        count = len(self.variables)
        state, invariants = arguments[:count], arguments[count:]
        deadline = getattr(context, "deadline", None)
        iteration = 0
        try:
            while True:
                done, iterations, *state = native(CHUNK_ITERATIONS, *state, *invariants)
                iteration += iterations
                if done:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    error = self.compiled._deadline_error(iteration)
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
            results = []
            for v in self.exits:
                _, dtype, kind = self.variables[v]
                results.append(_out(state[v], dtype, kind, values))
        return results[0] if len(results) == 1 else tuple(results)


def native_loop(loop, python_function, schedule):
    """The callable for ``loop`` (`CompiledLoop`): a `NativeLoop`, or ``python_function``
    when its code may not be native or the mode is off.  ``schedule`` is
    ``(merges, predicate side, body)`` as the Python loop runs them."""
    if _mode == "off" or not native_available():
        return python_function
    merges, predicate_ops, body_ops = schedule
    nodes = loop.nodes
    writer = _Writer(nodes)
    count = len(merges)
    try:
        argument_dtypes = []
        enter_input = {}
        for k, edge in enumerate(loop.inputs):
            writer.parameter(edge, f"in{k}", ("input", k))
            argument_dtypes.append(writer.dtypes[f"in{k}"])
        for index, node in enumerate(nodes):
            if index in set(loop.members) and node.kind == NodeKind.ENTER:
                k = loop.inputs.index(tuple(node.inputs[0]))
                enter_input[index] = k
                writer.alias((index, 0), f"in{k}")
        variables = []
        for v, merge in enumerate(merges):
            enter = nodes[merge].inputs[0][0]
            k = enter_input[enter]
            name = f"var{v}"
            writer.names[(merge, 0)] = name
            writer.kinds[name] = ("var", v)
            writer.dtypes[name] = _scalar_dtype(nodes[merge], 0)
            switch = loop.switch_of_merge[merge]
            writer.alias((switch, 0), name)
            writer.alias((switch, 1), name)
            variables.append([k, writer.dtypes[name], None])
        for index in predicate_ops:
            writer.write(index)
        predicate_lines = list(writer.lines)
        writer.lines = []
        predicate = writer.result(loop.predicate)
        for index in body_ops:
            writer.write(index)
        next_names = []
        for v, merge in enumerate(merges):
            back = nodes[merge].inputs[1][0]
            name = writer.result(nodes[back].inputs[0])
            kind = writer.kinds.get(name)
            if kind == ("var", v):
                kind = ("input", variables[v][0])
            elif isinstance(kind, tuple) and kind[0] == "var":
                raise NotNative(f"loop variable {v} takes the value of another")
            variables[v][2] = kind
            next_names.append(name)
        exits = []
        for exit_index in loop.exits:
            switch = nodes[exit_index].inputs[0][0]
            merge = nodes[switch].inputs[0][0]
            exits.append(merges.index(merge))
    except NotNative as e:
        loop.native_refused = str(e)
        return python_function
    state = ", ".join(f"var{v}" for v in range(count))
    invariants = ", ".join(f"in{k}" for k in range(len(loop.inputs)))
    indent = "        "
    lines = [
        _DECORATOR,
        f"def loop(budget, {state}, {invariants}):",
        f"    # {loop.name}",
        "    iterations = 0",
        "    while iterations < budget:",
        *(indent + line for line in predicate_lines),
        f"{indent}if not {predicate}:",
        f"{indent}    return True, iterations, {state}",
        *(indent + line for line in writer.lines),
        f"{indent}{state} = {', '.join(next_names)}",
        f"{indent}iterations += 1",
        f"    return False, iterations, {state}",
    ]
    source = _module_source("\n".join(lines) + "\n")
    variable_dtypes = [d for _, d, _ in variables]
    return NativeLoop(
        loop,
        python_function,
        source,
        [tuple(v) for v in variables],
        exits,
        [*variable_dtypes, *argument_dtypes],
    )


def status(compiled) -> str:
    """How a compiled region or loop runs: natively, or in Python and why."""
    function = compiled.function
    if isinstance(function, _Tier):
        return function.status()
    if not native_available():
        return "Python (numba is not installed)"
    reason = getattr(compiled, "native_refused", None)
    if reason is None and getattr(compiled, "kind", None) == "cond":
        reason = "a cond is not written natively yet"
    return f"Python ({reason})" if reason else "Python (native mode off)"
