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

**Not yet native:** arrays (values of any other shape than ``[]``) in this tier -- regions
of elementwise ops on arrays have a tier of their own (`native_arrays`) --, float
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
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from .native_cache import (  # noqa: F401 - defined there, reached here too
    CACHE_LIMIT_BYTES,
    EVICT_EVERY,
    _cache_entry,
    _checked,
    _disk_cache,
    _import_numba,
    _module_name,
    _modules_lock,
    _numba_directory,
    _refused_directories,
    _run_module,
    _written_since_eviction,
    cache_directory,
    cache_key,
    evict,
    is_loaded,
    load_function,
)
from .native_source import (  # noqa: F401 - defined there, reached here too
    _DECORATOR,
    _UNCACHED_DECORATOR,
    INTEGER_ONLY_UFUNCS,
    NotNative,
    _indented,
    _loop_parts,
    _module_source,
    _write_cond,
    _Writer,
)

MODES = ("off", "auto", "force")
_mode = os.environ.get("DATAFLOW_NATIVE", "auto")
if _mode not in MODES:
    raise ValueError(f"DATAFLOW_NATIVE must be one of {MODES}, not {_mode!r}")
AUTO_AFTER_CALLS = 3
CHUNK_ITERATIONS = 4096


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


# -- writing the source ------------------------------------------------------------------------


def compiled_entry(source: str, function_name: str, signature: tuple):
    """The machine-code entry point of ``function_name`` of ``source`` compiled for the numba
    types ``signature``, and its dispatcher; `NotNative` when numba refuses the code."""
    dispatcher = load_function(source, function_name)
    try:
        dispatcher.compile(signature)
    except Exception as e:  # numba's typing or lowering refused the code
        raise NotNative(f"numba could not compile it: {type(e).__name__}") from e
    return dispatcher.overloads[signature].entry_point, dispatcher


def _compile(source: str, function_name: str, argument_dtypes, result_dtypes):
    """The machine-code entry point of ``function_name`` for arguments of
    ``argument_dtypes``, or `NotNative` when numba's return types are not ``result_dtypes``
    (entries None are not checked)."""
    numba = _import_numba()
    signature = tuple(numba.from_dtype(d) for d in argument_dtypes)
    _, dispatcher = compiled_entry(source, function_name, signature)
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


# A job that compiles nothing: `wait_until_idle` queues it to learn when those before it are done.
_BARRIER = object()


def wait_until_idle() -> None:
    """Returns once the compile thread has done every job queued before this call (at once
    when nothing was ever queued).  Measurements that must not count its work, such as the
    memory a run takes, call it first."""
    if _compile_queue is None:
        return
    done = threading.Event()
    _compile_queue.put((_BARRIER, done))
    done.wait()


def _compile_forever(jobs: queue.Queue) -> None:
    while True:
        tier, done = jobs.get()
        if tier is _BARRIER:
            done.set()
            continue
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
        getattr(module, name).compile(tuple(
            numba.types.Array(numba.from_dtype(np.dtype(d[0])), d[1], "C")
            if isinstance(d, list) else numba.from_dtype(np.dtype(d))
            for d in dtypes
        ))
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
        if directory is None or is_loaded(digest) or _in_numba_cache(directory, digest):
            return
        path = _cache_entry(directory, digest, tier.source)
    worker = _start_worker()
    if path is None or worker is None:
        return
    dtypes = tier.worker_types()
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
        """Compiles the native code now (once, `_build`), or records why it is not used."""
        with self._lock:
            if self.native is not None or self.refused is not None:
                return
            began = time.perf_counter()
            try:
                self.native, self.dispatcher = self._build()
            except NotNative as e:
                self.refused = str(e)
            except Exception as e:  # numba, the disk, a bug: the Python function stays
                self.refused = f"compiling it failed: {type(e).__name__}: {e}"
                _report_failure(self.compiled, e)
            self.compile_seconds = time.perf_counter() - began

    def _build(self) -> tuple:
        """The native code and its numba dispatcher; `NotNative` says why there is none."""
        return _compile(
            self.source,
            self.function_name,
            (*self.signature_prefix, *self.argument_dtypes),
            self.result_dtypes(),
        )

    def wait(self) -> None:
        """Waits for a compilation started in the background, if any."""
        if self.pending is not None:
            self.pending.wait()

    def result_dtypes(self) -> list:
        raise NotImplementedError

    def worker_types(self) -> list:
        """The argument types as the compile process reads them: a dtype's string, or
        ``[dtype string, dimensions]`` for a C-contiguous array of it."""
        return [d.str for d in (*self.signature_prefix, *self.argument_dtypes)]

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


def _refuse_state(nodes: Sequence, members) -> None:
    """`NotNative` naming the first member that acts on state (a gradient stack's push or
    pop, a TensorArray's read or write, a variable's read: the stateful ops a compiled cond or
    loop may hold, `regions.why_not_eligible`), or of a cond or loop inside that does: native
    code holds numbers, not the stack or array objects those kernels act on, so the structure
    runs in Python, where the kernels act on the same objects as the interpreter's."""
    for index in members:
        node = nodes[index]
        inner = getattr(node.kernel, "compiled_cond", None) or getattr(
            node.kernel, "compiled_loop", None
        )
        if inner is not None:
            _refuse_state(inner.nodes, inner.members)
            continue
        op_def = getattr(node.tag, "_op_def", None)
        if op_def is not None and op_def.stateful:
            raise NotNative(
                f"{node.name} ({op_def.type}) acts on a stack, an array or a variable, which "
                "native code does not hold"
            )


def native_cond(cond, python_function):
    """The callable for ``cond`` (`conds.CompiledCond`): a `NativeCond`, or
    ``python_function`` when its code may not be native or the mode is off."""
    if _mode == "off" or not native_available():
        return python_function
    writer = _Writer(cond.nodes)
    inputs = cond.structure.inputs
    try:
        _refuse_state(cond.nodes, cond.members)
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
        _refuse_state(loop.nodes, loop.members)
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
