"""From a Python function to its converted twin: source, tree, compiled code, function.

The converted function is built from the *code* of the generated ``def`` with the original
function's globals, defaults and closure cells (plus one cell holding the operators as
``ag__``), so globals and closed-over variables stay live and default values are the ones the
original ``def`` computed.  The generated code is compiled under the user's file name with the
user's line numbers: tracebacks, and the locations ops record (`graph._user_location`), point at
the user's source.

A converted function is cached per original function; code that is not the user's (this
package, numpy, the standard library, anything installed) is never converted.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import os
import sysconfig
import textwrap
import types
import weakref
from collections.abc import Callable
from typing import Optional

from . import operators
from .transforms import AG, ConversionError, convert_function_tree

# Where library code lives: functions from files under these are called, never converted.
_LIBRARY_PREFIXES = tuple(
    {
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # dataflow
        os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "primitives"),
        os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "executor"),
        *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    }
)

_converted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_generated_codes: weakref.WeakSet = weakref.WeakSet()
_DO_NOT_CONVERT = "__ag_do_not_convert__"
_CONVERTED = "__ag_converted__"


def do_not_convert(function: Callable) -> Callable:
    """Marks ``function`` to be called as it is by converted code (AutoGraph's
    ``do_not_convert``)."""
    setattr(function, _DO_NOT_CONVERT, True)
    return function


def _is_user_function(function) -> bool:
    if not isinstance(function, types.FunctionType):
        return False
    if getattr(function, _DO_NOT_CONVERT, False) or getattr(function, _CONVERTED, False):
        return False
    code = function.__code__
    if code in _generated_codes:
        return False
    filename = os.path.abspath(code.co_filename) if not code.co_filename.startswith("<") else ""
    return not (filename and filename.startswith(_LIBRARY_PREFIXES))


def converted_or_none(function) -> Optional[Callable]:
    """``function`` converted when converted code should run it converted: a user function or
    method, when recursive conversion is on (`to_graph`'s ``recursive``); else None."""
    if not _recursive():
        return None
    if inspect.ismethod(function):
        inner = converted_or_none(function.__func__)
        return None if inner is None else types.MethodType(inner, function.__self__)
    if not _is_user_function(function):
        return None
    try:
        return to_graph(function)
    except ConversionError:
        return None


def _recursive() -> bool:
    stack = getattr(operators._local, "recursive", None)
    return stack[-1] if stack else True


# -- source ----------------------------------------------------------------------------------------
def _function_tree(function) -> ast.FunctionDef:
    """The ``def`` of ``function`` (a lambda as a ``def`` returning its body), with the lines
    and columns it has in its file."""
    code = function.__code__
    where = f"{code.co_filename}:{code.co_firstlineno}"
    try:
        lines, first_line = inspect.getsourcelines(function)
    except (OSError, TypeError) as e:
        raise ConversionError(
            f"Cannot convert {function.__qualname__} ({where}): its source is not available "
            f"({e}). Functions typed at a plain Python prompt or made by exec have none."
        ) from None
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(source) - len(source.lstrip()) - (len(dedented) - len(dedented.lstrip()))
    try:
        tree = ast.parse(dedented)
    except SyntaxError:
        tree = None
    if tree is not None:
        ast.increment_lineno(tree, first_line - 1)
        for node in ast.walk(tree):
            if hasattr(node, "col_offset") and indent:
                node.col_offset += indent
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += indent
    if function.__name__ == "<lambda>":
        return _lambda_as_def(function, tree, where)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        raise ConversionError(f"Cannot convert {function.__qualname__} ({where}): no def found")
    return tree.body[0]


def _lambda_as_def(function, tree, where) -> ast.FunctionDef:
    code = function.__code__
    lambdas = [] if tree is None else [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    arguments = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    matches = [
        n
        for n in lambdas
        if n.lineno == code.co_firstlineno
        and [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == arguments
    ]
    if len(matches) != 1:
        raise ConversionError(
            f"Cannot convert the lambda at {where}: its source is not a statement that parses on "
            "its own, or other lambdas on its line take the same arguments. Define it with def."
        )
    found = matches[0]
    body = [ast.copy_location(ast.Return(found.body), found.body)]
    definition = ast.FunctionDef("lambda_", found.args, body, [], None)
    return ast.fix_missing_locations(ast.copy_location(definition, found))


def _names_in_scope(function) -> tuple[set, set]:
    """The names that refer to modules, and those that refer to builtins, in ``function``."""
    namespace = dict(function.__globals__)
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            namespace[name] = cell.cell_contents
        except ValueError:
            namespace[name] = None
    modules = {name for name, value in namespace.items() if isinstance(value, types.ModuleType)}
    builtin_names = set(dir(builtins)) - set(namespace)
    return modules, builtin_names


# -- conversion ------------------------------------------------------------------------------------
def converted_tree(function) -> ast.FunctionDef:
    """The converted ``def`` of ``function`` (a fresh tree)."""
    tree = _function_tree(function)
    modules, builtin_names = _names_in_scope(function)
    try:
        return convert_function_tree(tree, modules, builtin_names)
    except ConversionError as e:
        filename = function.__code__.co_filename
        raise ConversionError(f"Cannot convert {function.__qualname__} ({filename}): {e}") from None


def _compile(function, tree: ast.FunctionDef):
    """The code object of the converted ``def``, compiled inside a factory whose parameters
    (``ag__`` and the original's free variables) make those names free in it."""
    free = [AG, *function.__code__.co_freevars]
    factory = ast.FunctionDef(
        "ag__factory",
        ast.arguments(
            posonlyargs=[],
            args=[ast.arg(n) for n in free],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        [tree, ast.Return(ast.Name(tree.name, ast.Load()))],
        [],
        None,
    )
    ast.copy_location(factory, tree)
    ast.fix_missing_locations(factory)
    module = ast.Module([factory], [])
    filename = function.__code__.co_filename
    module_code = compile(module, filename, "exec", dont_inherit=True)
    factory_code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    codes = [factory_code]
    while codes:
        code = codes.pop()
        _generated_codes.add(code)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = [c for c in factory_code.co_consts if isinstance(c, types.CodeType)]
    return next(c for c in inner if c.co_name == tree.name)


def _build(function, code: types.CodeType):
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    cells[AG] = types.CellType(operators)
    closure = tuple(cells[name] for name in code.co_freevars)
    converted = types.FunctionType(
        code, function.__globals__, function.__name__, function.__defaults__, closure
    )
    converted.__kwdefaults__ = function.__kwdefaults__
    return converted


def to_graph(function: Callable, recursive: bool = True) -> Callable:
    """``function`` converted: its ``if``/``while``/``for`` (and ``and``/``or``/``not``,
    ``print``, ``assert``, list appends) stage graph control flow when their conditions are
    graph tensors and run as Python otherwise.  With ``recursive``, the user functions it calls
    are converted too.  Methods stay bound; decorators are dropped (the function is converted
    from its ``def``).  Raises `ConversionError` (a SyntaxError) when the source is missing."""
    if inspect.ismethod(function):
        return types.MethodType(to_graph(function.__func__, recursive), function.__self__)
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_graph converts Python functions and methods, got {function!r}")
    if getattr(function, _CONVERTED, False):
        return function
    cached = _converted.get(function, {}).get(recursive)
    if cached is not None:
        return cached
    raw = _build(function, _compile(function, converted_tree(function)))

    @functools.wraps(function)
    def converted(*args, **kwargs):
        __tracebackhide__ = True
        return _run(raw, recursive, args, kwargs)

    setattr(converted, _CONVERTED, True)
    converted.__wrapped__ = function
    _converted.setdefault(function, {})[recursive] = converted
    return converted


def _run(raw, recursive: bool, args, kwargs):
    """Calls converted code in an effect scope; ties the effects to its results."""
    stack = getattr(operators._local, "recursive", None)
    if stack is None:
        stack = operators._local.recursive = []
    stack.append(recursive)
    try:
        with operators.EffectScope() as effects:
            result = raw(*args, **kwargs)
    finally:
        stack.pop()
    if isinstance(result, operators.Undefined):
        if result.reason:
            raise result.error()
        result = None
    if effects:
        if operators._has_graph_leaf(result):
            result = operators.attach_effects(result, effects)
            operators._record_effect(_first_graph_leaf(result))
        else:
            for op in effects:
                operators._record_effect(op)
    return result


def _first_graph_leaf(values):
    from dataflow import nest

    for leaf in nest.flatten(values):
        if operators._is_graph_tensor(leaf) or isinstance(leaf, operators.TensorArray):
            return operators._flow(leaf)
    return None


def to_code(function: Callable) -> str:
    """The converted source of ``function``, as text (what `to_graph` compiles)."""
    if inspect.ismethod(function):
        function = function.__func__
    function = getattr(function, "__wrapped__", function)
    return ast.unparse(converted_tree(function)) + "\n"
