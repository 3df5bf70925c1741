"""Graph breaks and guards: ``df.function(fn, experimental_graph_breaks=True)``.

TorchDynamo's way of capturing a function that a trace cannot stage whole: where a statement
needs a tensor's *value* in Python, the function is split there; the statements before it run
as one graph, that statement runs eagerly, and the statements after it are traced as another
graph.  Here the split is made on the function's source (Python's ``ast``), at the level of
its top-level statements:

- The function's body is cut into *segments*: maximal runs of top-level statements that trace
  cleanly, each compiled into a generated function of the names it reads and traced with
  ``df.function`` (one `Function` per segment, so each has its own signatures, traces and
  cached plans), and *breaking statements*, each run as Python in eager mode, op by op.
- A statement breaks when tracing it asks a symbolic tensor for a Python value: ``t.numpy()``,
  ``float(t)``, ``int(t)``, ``bool(t)`` (an ``if``/``while``/``and``/``or`` on a tensor:
  segments are traced without AutoGraph, so such a statement breaks rather than being
  staged), ``operator.index(t)`` (``range(t)``, indexing a list), ``np.asarray(t)`` and
  ``str(t)``/``format`` (a ``print`` of a value).  The whole top-level statement that
  contains it breaks (an ``if`` block with a ``.numpy()`` deep inside runs eagerly as a
  whole).  Nothing else breaks: a print of a Python value, a call of
  any Python function that makes ops, Python control flow on Python values all trace.
- Breaks are found on the first call that reaches them (a segment whose trace breaks is split
  there and the call goes on from the segment's start, so no op runs twice; the Python of the
  abandoned trace, as of any trace, has run once more) and are reported by
  `BreakingFunction.graph_breaks` with the user's file:line and why.
- Each segment reads its inputs from the names bound before it (the arguments, the names
  earlier statements assigned, the closure's cells) and hands back the names it assigns, or
  what it returns.  A tensor or numpy value among them is an input of the segment's graph
  (fed at each call); a Python value is baked in, and guarded (below).  So ``n = int(t)``
  followed by ``range(n)`` makes the next segment depend on ``n``'s value, which TorchDynamo
  also specializes on, while ``a = t.numpy()`` feeds ``a`` to the next segment as an array.

Guards (TorchDynamo's, not TensorFlow's): a segment's trace is valid only while the Python
values it baked in are the same.  Those values are its signature: the Python values among the
names it reads, including the module globals and closure values it reads that are numbers,
strings, booleans or None.  A call that finds one changed retraces that segment.  A
``tf.function`` does not: it keeps the global's value of its trace time, silently.

Limits: the function's source must be available (not a lambda); statements with ``global``,
``nonlocal``, ``yield`` or ``await`` run eagerly; graph breaks apply to calls made eagerly (a
call while a graph is being built is traced whole, as ``df.function`` does, and a value
needed there is the usual error); the Python code runs at every call (only the ops between
breaks are replayed from compiled segments, not the Python that made them: that needs
TorchDynamo's bytecode rewriting).
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import types
from dataclasses import dataclass
from typing import Optional

from ...framework.graph import SourceLocation, Tensor, _ipython_cell
from .tracing import FuncGraph, Function, register_breaking_function_type

_GUARDED_TYPES = (bool, int, float, complex, str, bytes, type(None))
_NOT_STAGED = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)


class GraphBreakError(TypeError):
    """A symbolic tensor was asked for a Python value during a trace that allows breaks."""

    def __init__(self, tensor: Tensor, why: str):
        super().__init__(f"{why} of the symbolic tensor '{tensor.name}' needs its value")
        self.why = why


class _ValueTensor(Tensor):
    """The tensors of a trace that allows breaks: asking one for a Python value raises
    `GraphBreakError`, which splits the function there (see the module docstring)."""

    __slots__ = ()

    def _needs_value(self, why: str):
        raise GraphBreakError(self, why)

    def numpy(self):
        self._needs_value(".numpy()")

    def __bool__(self):
        self._needs_value("bool()")

    def __float__(self):
        self._needs_value("float()")

    def __int__(self):
        self._needs_value("int()")

    def __index__(self):
        self._needs_value("use as an index")

    def __array__(self, dtype=None, copy=None):
        self._needs_value("conversion to a numpy array")

    def __str__(self):
        self._needs_value("str() (a print)")

    def __format__(self, spec):
        self._needs_value("format() (a print)")


class _BreakingFuncGraph(FuncGraph):
    """A `FuncGraph` whose tensors are `_ValueTensor`s."""

    def create_op(self, *args, **kwargs):
        op = super().create_op(*args, **kwargs)
        for t in op._outputs:
            if t.__class__ is Tensor:
                t.__class__ = _ValueTensor
        return op


@dataclass(frozen=True)
class GraphBreak:
    """One statement that runs eagerly: where (the user's file:line), why, and its source."""

    location: str
    why: str
    statement: str

    def __str__(self) -> str:
        return f"{self.location}: {self.why} -- `{self.statement}`"


class _Segment:
    """A run of top-level statements ``body[start:end]`` compiled into a generated function
    ``segment(namespace) -> ("return", value) | ("locals", {name: value})``; traced with
    ``df.function`` unless ``eager`` (a breaking statement)."""

    def __init__(self, owner: BreakingFunction, start: int, end: int, eager: bool):
        self.start, self.end, self.eager = start, end, eager
        statements = owner._body[start:end]
        self.reads = sorted(_loaded_names(statements))
        self.assigns = sorted(_stored_names(statements))
        self.python = owner._compile(statements, self.assigns, f"segment_{start}_{end}")
        self.function: Optional[Function] = None
        if not eager:
            # A segment is generated code with no source of its own to convert: a statement
            # AutoGraph would stage (an ``if`` on a tensor) breaks instead.
            name = f"{owner._name}_segment_{start}_{end}"
            self.function = Function(self.python, name=name, autograph=False)
            self.function._graph_class = _BreakingFuncGraph

    def run(self, namespace: dict):
        if self.eager:
            return self.python(namespace)
        return self.function(namespace)


class BreakingFunction(Function):
    """A ``df.function`` whose eager calls split the function at graph breaks and guard the
    Python values its segments baked in (see the module docstring)."""

    def __init__(self, python_function, **kwargs):
        super().__init__(python_function, **kwargs)
        node, self._filename = _function_source(python_function, self._name)
        self._body: list[ast.stmt] = node.body
        self._breaking: dict[int, GraphBreak] = {}
        for i, statement in enumerate(self._body):
            if any(isinstance(n, _NOT_STAGED) for n in ast.walk(statement)):
                self._breaking[i] = GraphBreak(
                    self._where(statement.lineno),
                    "global, nonlocal, yield or await cannot be staged",
                    ast.unparse(statement).splitlines()[0],
                )
        self._segments: dict[tuple, _Segment] = {}

    def graph_breaks(self) -> list[GraphBreak]:
        """The statements found so far that run eagerly, in the function's order."""
        return [self._breaking[i] for i in sorted(self._breaking)]

    def experimental_get_tracing_count(self) -> int:
        """The traces of all segments (a trace abandoned at a break found on it included)."""
        return sum(s.function._trace_count for s in self._segments.values() if s.function)

    def __call__(self, *args, **kwargs):
        from .tracing import _executing_eagerly

        if not _executing_eagerly():
            return super().__call__(*args, **kwargs)
        namespace = self._bind(args, kwargs)
        start = 0
        while start < len(self._body):
            segment = self._segment_from(start)
            try:
                kind, value = segment.run(self._inputs_of(segment, namespace))
            except GraphBreakError as e:
                self._note_break(segment, e)
                continue  # the segment is split now: run it again from its start
            if kind == "return":
                return value
            namespace.update(value)
            start = segment.end
        return None

    # -- segments --------------------------------------------------------------------------------
    def _segment_from(self, start: int) -> _Segment:
        end = start + 1
        if start not in self._breaking:
            while end < len(self._body) and end not in self._breaking:
                end += 1
        eager = start in self._breaking
        segment = self._segments.get((start, end, eager))
        if segment is None:
            segment = self._segments[start, end, eager] = _Segment(self, start, end, eager)
        return segment

    def _note_break(self, segment: _Segment, error: GraphBreakError) -> None:
        """Marks the top-level statement of ``segment`` in which ``error`` was raised as a
        breaking one."""
        line = None
        traceback = error.__traceback__
        while traceback is not None:
            if traceback.tb_frame.f_code is segment.python.__code__:
                line = traceback.tb_lineno
            traceback = traceback.tb_next
        index = segment.start
        for i in range(segment.start, segment.end):
            statement = self._body[i]
            if line is not None and statement.lineno <= line <= statement.end_lineno:
                index = i
        statement = self._body[index]
        if index in self._breaking:  # cannot be: a breaking statement is not traced
            raise error
        self._breaking[index] = GraphBreak(
            self._where(line or statement.lineno),
            f"{error.why} of a tensor",
            ast.unparse(statement).splitlines()[0],
        )

    def _where(self, lineno: int) -> str:
        """``file:line`` of the function's line ``lineno`` (``Cell In[n], line k`` in IPython)."""
        cell = _ipython_cell(self._filename)
        return str(SourceLocation(self._filename, lineno, self._name, cell))

    def _inputs_of(self, segment: _Segment, namespace: dict) -> dict:
        """What ``segment`` reads: the bound names, the closure's cells and the guarded
        globals (whose values are part of the segment's signature)."""
        closure = self._closure()
        module = self._python_function.__globals__
        inputs = {}
        for name in segment.reads:
            if name in namespace:
                inputs[name] = namespace[name]
            elif name in closure:
                inputs[name] = closure[name]
            elif name in module and isinstance(module[name], _GUARDED_TYPES):
                inputs[name] = module[name]
        return inputs

    def _closure(self) -> dict:
        code = self._python_function.__code__
        cells = self._python_function.__closure__ or ()
        found = {}
        for name, cell in zip(code.co_freevars, cells):
            try:
                found[name] = cell.cell_contents
            except ValueError:  # a cell not yet filled
                pass
        return found

    def _bind(self, args, kwargs) -> dict:
        bound = self._parameters.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def _compile(self, statements: list, assigns: list, name: str) -> types.FunctionType:
        """A function of one dict (the names ``statements`` read) that runs them and gives
        back ``("return", value)`` or ``("locals", {assigned name: value})``; its code keeps
        the user's file and lines, so errors and tracebacks point there.  A name read that the
        dict lacks is the function's global (or builtin) as Python would find it."""
        template = ast.parse(
            f"def {name}(__inputs, __global=None, __unbound=None):\n"
            + "".join(
                f"    {read} = __inputs[{read!r}] if {read!r} in __inputs else __global({read!r})\n"
                for read in sorted(_loaded_names(statements))
            )
            + f"    return ('locals', {{k: v for k, v in locals().items() if k in {set(assigns)!r}"
            + " and v is not __unbound})\n"
        )
        definition = template.body[0]
        prologue, epilogue = definition.body[:-1], definition.body[-1:]
        for node in prologue + epilogue:
            ast.increment_lineno(node, statements[0].lineno - node.lineno)
        copied = [_ReturnsTagged().visit(copy.deepcopy(s)) for s in statements]
        definition.body = prologue + copied + epilogue
        ast.copy_location(definition, statements[0])
        module = ast.fix_missing_locations(template)
        code = compile(module, self._filename, "exec")
        function_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        scope = self._python_function.__globals__
        return types.FunctionType(
            function_code, scope, name, (lambda read: _global(scope, read), _UNBOUND)
        )


_UNBOUND = object()  # a name read before the statements bind it


def _global(scope: dict, name: str):
    if name in scope:
        return scope[name]
    builtins = scope.get("__builtins__", __builtins__)
    if isinstance(builtins, dict):
        return builtins.get(name, _UNBOUND)
    return getattr(builtins, name, _UNBOUND)


class _ReturnsTagged(ast.NodeTransformer):
    """``return x`` -> ``return ("return", x)`` outside nested functions and classes."""

    def visit_Return(self, node: ast.Return):
        value = node.value or ast.Constant(None)
        tagged = ast.Tuple([ast.Constant("return"), value], ast.Load())
        return ast.copy_location(ast.Return(tagged), node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _loaded_names(statements: list) -> set:
    return {
        n.id
        for s in statements
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _stored_names(statements: list) -> set:
    names = set()
    for s in statements:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                names.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return names


def _function_source(python_function, name: str) -> tuple[ast.FunctionDef, str]:
    """The ``def`` of ``python_function`` parsed, with the user's line numbers, and its file."""
    function = inspect.unwrap(python_function)
    try:
        lines, first = inspect.getsourcelines(function)
    except (OSError, TypeError) as e:
        raise ValueError(
            f"df.function '{name}' with experimental_graph_breaks needs the function's source "
            f"to split it at graph breaks: {e}"
        ) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(
            f"df.function '{name}' with experimental_graph_breaks takes a function defined "
            "with def (a lambda has no statements to split)"
        )
    ast.increment_lineno(tree, first - 1)
    return node, function.__code__.co_filename


__all__ = ["BreakingFunction", "GraphBreak", "GraphBreakError"]


register_breaking_function_type(BreakingFunction)
