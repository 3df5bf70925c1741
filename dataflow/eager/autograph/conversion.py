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
import contextlib
import enum
import functools
import inspect
import os
import sysconfig
import textwrap
import types
import weakref
from collections.abc import Callable
from typing import NamedTuple, Optional

from ...framework.traceback_utils import _RUNTIME_DIRECTORIES
from . import ag_logging, operators
from .transforms import AG, ConversionError, convert_function_tree

# Where library code lives: functions from files under these are called, never converted.
_LIBRARY_PREFIXES = tuple(
    {
        *_RUNTIME_DIRECTORIES,  # dataflow, primitives, executor
        *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    }
)

_converted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_generated_codes: weakref.WeakSet = weakref.WeakSet()
_DO_NOT_CONVERT = "__ag_do_not_convert__"
_CONVERTED = "__ag_converted__"


class Feature(enum.Enum):
    """AutoGraph's optional conversions (``tf.autograph.experimental.Feature``), chosen with
    ``to_graph(experimental_optional_features=...)`` or ``df.function(
    experimental_autograph_options=...)`` (a feature or a tuple of them; ``ALL`` is every one):

    - ``ASSERT_STATEMENTS``: ``assert`` on a graph tensor becomes a ``df.Assert`` that runs
      with the function (unconverted, it asks the tensor for a Python bool, a TypeError);
    - ``LISTS``: ``xs.append(v)`` in a loop that stages makes ``xs`` a TensorArray
      (unconverted, the appends of a staged loop are an error);
    - ``BUILTIN_FUNCTIONS``: ``print`` of a graph tensor becomes a ``df.print`` that runs with
      the function (unconverted, Python prints the symbolic tensor once, while tracing);
    - ``NAME_SCOPES``: each converted function's ops are in a name scope of its name
      (``named/mul``);
    - ``EQUALITY_OPERATORS``: changes nothing.  ``==``/``!=`` on a graph tensor always
      compare elementwise, as TensorFlow 2's tensors' own ``==`` does whatever is chosen (a
      graph tensor's own ``==`` here is identity, TF1's, so the comparison is always converted);
    - ``AUTO_CONTROL_DEPS``: changes nothing.  ``df.function`` always orders a trace's effects
      (TensorFlow's feature only adds Identity ops to a function it already orders).

    Without a choice (None) `to_graph` converts ``assert``, list appends and ``print``, as
    TensorFlow 1.x's did, and ``df.function`` the first two, leaving ``print`` Python's as
    TensorFlow 2 does (TensorFlow's None converts neither of the first two, and its programs
    then fail where these stage); an empty tuple chooses none, as TensorFlow's None does."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"

    @classmethod
    def all(cls):
        """A tuple of every feature."""
        return tuple(cls.__members__.values())

    @classmethod
    def all_but(cls, exclude):
        """A tuple of every feature but ``exclude`` (one feature or several), and not ALL."""
        if not isinstance(exclude, (list, tuple, set)):
            exclude = (exclude,)
        return tuple(set(cls.all()) - set(exclude) - {cls.ALL})


class ConversionOptions(NamedTuple):
    """Which optional conversions a conversion makes (see `Feature`)."""

    asserts: bool
    lists: bool
    print_calls: bool
    name_scopes: bool


# What `to_graph` and ``df.function`` convert when no features are chosen.
_DEFAULT_OPTIONS = ConversionOptions(asserts=True, lists=True, print_calls=True, name_scopes=False)


def options_of(features, argument: str = "experimental_optional_features") -> ConversionOptions:
    """The `ConversionOptions` of a choice of features: None keeps this AutoGraph's default;
    a `Feature` or a collection of them turns each conversion on exactly when its feature, or
    ``ALL``, is there.  A TypeError names ``argument`` for anything else."""
    if features is None:
        return _DEFAULT_OPTIONS
    if isinstance(features, Feature):
        features = (features,)
    if not isinstance(features, (list, tuple, set, frozenset)):
        raise TypeError(
            f"{argument} takes a df.autograph.experimental.Feature or a tuple of them, got "
            f"{features!r}"
        )
    chosen = set()
    for feature in features:
        if not isinstance(feature, Feature):
            raise TypeError(
                f"{argument} takes df.autograph.experimental.Feature values, got {feature!r}"
            )
        chosen.add(feature)

    def uses(feature: Feature) -> bool:
        return Feature.ALL in chosen or feature in chosen

    return ConversionOptions(
        asserts=uses(Feature.ASSERT_STATEMENTS),
        lists=uses(Feature.LISTS),
        print_calls=uses(Feature.BUILTIN_FUNCTIONS),
        name_scopes=uses(Feature.NAME_SCOPES),
    )


def do_not_convert(func: Optional[Callable] = None) -> Callable:
    """Marks ``func`` to be called as it is by converted code (AutoGraph's
    ``do_not_convert``); without ``func``, a decorator that does so."""
    if func is None:
        return do_not_convert
    setattr(func, _DO_NOT_CONVERT, True)
    return func


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
        return _to_graph(function, True, _current_options())
    except ConversionError:
        return None


def _recursive() -> bool:
    stack = getattr(operators._local, "recursive", None)
    return stack[-1][0] if stack else True


def _current_options() -> ConversionOptions:
    stack = getattr(operators._local, "recursive", None)
    return stack[-1][1] if stack else _DEFAULT_OPTIONS


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
def converted_tree(function, options: ConversionOptions = _DEFAULT_OPTIONS) -> ast.FunctionDef:
    """The converted ``def`` of ``function`` (a fresh tree), with the optional conversions
    ``options`` chooses (`Feature`)."""
    tree = _function_tree(function)
    modules, builtin_names = _names_in_scope(function)
    try:
        return convert_function_tree(
            tree, modules, builtin_names, options.asserts, options.lists, options.print_calls
        )
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


def to_graph(
    entity: Callable,
    recursive: bool = True,
    arg_values=None,
    arg_types=None,
    experimental_optional_features=None,
) -> Callable:
    """``entity`` converted: its ``if``/``while``/``for`` (and ``and``/``or``/``not``,
    ``print``, ``assert``, list appends) stage graph control flow when their conditions are
    graph tensors and run as Python otherwise.  With ``recursive``, the user functions it calls
    are converted too.  ``experimental_optional_features`` (a `Feature` or several) chooses
    the optional conversions: ``assert`` statements with ``ASSERT_STATEMENTS``, list appends
    with ``LISTS``, ``print`` with ``BUILTIN_FUNCTIONS``, a name scope per function with
    ``NAME_SCOPES`` (``ALL`` every one); None converts ``assert``, appends and ``print``
    (TensorFlow's None converts none, and its programs then fail where these stage; see
    `Feature`).  ``arg_values`` and ``arg_types`` are ignored,
    as in TF1 (deprecated there).  Methods stay bound; decorators are dropped (the function is
    converted from its ``def``).  Raises `ConversionError` (a SyntaxError) when the source is
    missing."""
    del arg_values, arg_types  # deprecated in TF1, which ignores them too
    return _to_graph(entity, recursive, options_of(experimental_optional_features))


# What ``df.function`` converts without a choice: TensorFlow 2 leaves ``print`` alone, so it
# runs while the function is traced (once per trace, showing symbolic tensors), not each call.
FUNCTION_OPTIONS = _DEFAULT_OPTIONS._replace(print_calls=False)


def to_graph_for_function(entity: Callable, experimental_autograph_options=None) -> Callable:
    """``entity`` converted as ``df.function`` converts it: as `to_graph` does, except that
    without a choice of features ``print`` stays Python's (`FUNCTION_OPTIONS`), as in
    TensorFlow 2."""
    if experimental_autograph_options is None:
        return _to_graph(entity, True, FUNCTION_OPTIONS)
    options = options_of(experimental_autograph_options, "experimental_autograph_options")
    return _to_graph(entity, True, options)


def _to_graph(function: Callable, recursive: bool, options: ConversionOptions) -> Callable:
    if inspect.ismethod(function):
        return types.MethodType(_to_graph(function.__func__, recursive, options), function.__self__)
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_graph converts Python functions and methods, got {function!r}")
    if getattr(function, _CONVERTED, False):
        return function
    key = (recursive, options)
    cached = _converted.get(function, {}).get(key)
    if cached is not None:
        return cached
    tree = converted_tree(function, options)
    ag_logging.log(1, "Converted %s", function.__qualname__)
    if ag_logging.has_verbosity(4):
        ag_logging.log(4, "Transformed %s:\n\n%s\n", function.__qualname__, ast.unparse(tree))
    raw = _build(function, _compile(function, tree))

    @functools.wraps(function)
    def converted(*args, **kwargs):
        __tracebackhide__ = True
        return _run(raw, key, args, kwargs)

    setattr(converted, _CONVERTED, True)
    converted.__wrapped__ = function
    _converted.setdefault(function, {})[key] = converted
    return converted


def _run(raw, key: tuple, args, kwargs):
    """Calls converted code in an effect scope; ties the effects to its results."""
    stack = getattr(operators._local, "recursive", None)
    if stack is None:
        stack = operators._local.recursive = []
    stack.append(key)  # (recursive, options) of the conversion running
    scope = _function_scope(raw.__name__) if key[1].name_scopes else contextlib.nullcontext()
    try:
        with scope, operators.EffectScope() as effects:
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


def _function_scope(function_name: str):
    """The name scope of a converted function's ops under ``NAME_SCOPES``: its name, as
    TensorFlow's (a leading underscore gets ``fn`` before it; a lambda is ``lambda_``)."""
    from dataflow.framework.graph import name_scope

    name = "lambda_" if function_name == "<lambda>" else function_name
    if name.startswith("_"):
        name = "fn" + name
    return name_scope(name)


def _first_graph_leaf(values):
    from dataflow.framework import nest

    for leaf in nest.flatten(values):
        if operators._is_graph_tensor(leaf) or isinstance(leaf, operators.TensorArray):
            return operators._flow(leaf)
    return None


def to_code(
    entity: Callable,
    recursive: bool = True,
    arg_values=None,
    arg_types=None,
    indentation="  ",
    experimental_optional_features=None,
) -> str:
    """The converted source of ``entity``, as text (what `to_graph` compiles with the same
    ``experimental_optional_features``).  ``recursive`` converts called functions only when
    they run, so it does not change this text; ``arg_values``, ``arg_types`` and
    ``indentation`` are ignored, as in TF1 (deprecated there)."""
    del recursive, arg_values, arg_types, indentation  # as TF1's to_code_v1
    function = entity
    if inspect.ismethod(function):
        function = function.__func__
    function = getattr(function, "__wrapped__", function)
    options = options_of(experimental_optional_features)
    return ast.unparse(converted_tree(function, options)) + "\n"


operators.register_converter(converted_or_none)
