"""The AST passes that rewrite a function's control flow into calls of the runtime operators.

A function's tree goes through these passes in order (`convert_function_tree`):

1. **Statements rewritten in place** (`_StatementRewriter`): ``assert`` becomes
   ``ag__.assert_``, ``xs.append(v)`` becomes ``xs = ag__.list_append(xs, v)`` (so that the list
   is a loop variable, and may become a `TensorArray`), decorators are dropped.
2. **Returns** inside ``if``/``while``/``for`` become ``do_return = True; retval_ = value``; what
   follows is guarded by ``if not do_return:``, loops also stop on it, and the function ends with
   ``return retval_``.
3. **break / continue** become flags (``break_``, ``continue_``), and a loop's ``else`` runs
   under ``if not break_:``.  Loops test ``not break_`` (a ``for`` through its ``extra_test``).
4. **Expressions** (`_ExpressionRewriter`): ``and``/``or`` (lazily, through lambdas), ``not``,
   ``a if c else b``, ``print(...)`` and calls of functions that are not attributes of a module
   (``ag__.call(f, ...)``, which converts user functions when they are called).
5. **Liveness** (`_Liveness`), backwards over each function body: the names live after every
   ``if``/``while``/``for``.  Break, continue and return are gone by then, so the analysis is the
   textbook one for structured code.
6. **Control flow** (`_ControlFlowConverter`): each ``if``/``while``/``for`` becomes nested
   functions (``if_true``/``if_false``, ``while_test``/``while_body``, ``for_body``/``for_test``)
   and one operator call.  The functions take the statement's *state* as parameters and return
   it: the names the statement assigns that are live after it or read inside it before being
   assigned.  A state name that may have no value yet is first set to ``ag__.Undefined(name)``.

Invariants: every generated node carries the line of the user statement it came from, so code
compiled from the tree reports the user's lines; generated names never collide with the user's
(a numbered suffix is added when they would); nothing here looks at values, every decision that
depends on one is the operators' at run time.
"""

from __future__ import annotations

import ast
import itertools
from typing import Optional

AG = "ag__"
_NESTED_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class ConversionError(SyntaxError):
    """A construct the conversion cannot rewrite (raised with the user's file and line)."""


# -- small builders --------------------------------------------------------------------------------
def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _store(name: str) -> ast.Name:
    return ast.Name(name, ast.Store())


def _ag(attr: str) -> ast.Attribute:
    return ast.Attribute(_load(AG), attr, ast.Load())


def _ag_call(attr: str, *args: ast.expr, keywords=()) -> ast.Call:
    return ast.Call(_ag(attr), list(args), list(keywords))


def _is_ag(node: ast.expr, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == AG
    )


def _thunk(body: ast.expr) -> ast.Lambda:
    return ast.Lambda(_arguments([]), body)


def _arguments(names) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[],
        args=[ast.arg(n) for n in names],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([_store(name)], value)


def _names_tuple(names, ctx) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _located(nodes, source: ast.AST):
    """Gives every node in ``nodes`` (and below) without a line the first line of ``source``
    (only its first: a traceback then shows the statement's header, not its whole body)."""
    for root in nodes if isinstance(nodes, list) else [nodes]:
        for node in ast.walk(root):
            if "lineno" in node._attributes and not hasattr(node, "lineno"):
                node.lineno = node.end_lineno = source.lineno
                node.col_offset = source.col_offset
                node.end_col_offset = source.col_offset
    return nodes


# -- scopes and names ------------------------------------------------------------------------------
def _walk_scope(node: ast.AST):
    """The nodes under ``node`` that belong to its scope: nested functions, classes, lambdas and
    comprehensions are yielded themselves but not entered."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, _NESTED_SCOPES):
            stack.extend(ast.iter_child_nodes(child))


def bound_names(statements) -> list:
    """The names the statements bind in their own scope, in order of first appearance."""
    found: dict = {}
    for statement in statements:
        for node in itertools.chain([statement], _walk_scope(statement)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                found.setdefault(node.id)
            elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                found.setdefault(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    found.setdefault((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                found.setdefault(node.name)
    return list(found)


def _ordered_loads(node: ast.AST) -> list:
    """Every name read under ``node``, nested scopes included (an over-approximation that keeps
    the free variables of lambdas and nested functions live), in order of first appearance."""
    seen: dict = {}
    for child in itertools.chain([node], ast.walk(node)):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            seen.setdefault(child.id)
        elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
            seen.setdefault(child.target.id)
    return list(seen)


def _loads(node: Optional[ast.AST]) -> set:
    return set() if node is None else set(_ordered_loads(node))


def _all_identifiers(tree: ast.AST) -> set:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            names.add(node.name)
    return names


class _Namer:
    """Fresh names for generated variables and functions that avoid the user's names."""

    def __init__(self, user_names: set):
        self._user_names = set(user_names)
        self._taken = set(user_names)

    def fresh(self, base: str) -> str:
        name, index = base, 0
        while name in self._taken:
            index += 1
            name = f"{base}{index}" if base.endswith("_") else f"{base}_{index}"
        self._taken.add(name)
        return name

    def stable(self, base: str) -> str:
        """``base`` itself unless the user has that name (generated functions may reuse one)."""
        name, index = base, 0
        while name in self._user_names:
            index += 1
            name = f"{base}_{index}"
        return name


# -- 1. statements rewritten in place --------------------------------------------------------------
class _StatementRewriter(ast.NodeTransformer):
    """``assert`` to ``ag__.assert_``, ``xs.append(v)`` to ``xs = ag__.list_append(xs, v)``;
    each only when its feature is on (AutoGraph's ``ASSERT_STATEMENTS`` and ``LISTS``), and an
    append only where ``xs`` is a local of the function (a list of an enclosing function or of
    the module is appended to in place, as Python does: rebinding it would make it a local)."""

    def __init__(self, asserts: bool = True, lists: bool = True):
        self.asserts, self.lists = asserts, lists
        self._locals: list[set] = []  # the local names of each function entered

    def _visit_function(self, node):
        args = node.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        declared = {
            name
            for child in _walk_scope(node)
            if isinstance(child, (ast.Global, ast.Nonlocal))
            for name in child.names
        }
        self._locals.append((params | set(bound_names(node.body))) - declared)
        self.generic_visit(node)
        self._locals.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    def visit_Assert(self, node: ast.Assert):
        self.generic_visit(node)
        if not self.asserts:
            return node
        message = [_thunk(node.msg)] if node.msg is not None else []
        return ast.copy_location(ast.Expr(_ag_call("assert_", node.test, *message)), node)

    def visit_Expr(self, node: ast.Expr):
        self.generic_visit(node)
        call = node.value
        if (
            self.lists
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and len(call.args) == 1
            and not call.keywords
            and (not self._locals or call.func.value.id in self._locals[-1])
        ):
            target = call.func.value.id
            value = _ag_call("list_append", _load(target), call.args[0])
            return _located(_assign(target, value), node)
        return node


# -- 2. returns ------------------------------------------------------------------------------------
def _contains_return(statements) -> bool:
    return any(
        isinstance(node, ast.Return)
        for statement in statements
        for node in itertools.chain([statement], _walk_scope(statement))
    )


def _needs_return_lowering(function: ast.FunctionDef) -> bool:
    """True when a ``return`` sits inside a compound statement (one at the top level, last, is
    already in the form the conversion needs)."""
    body = function.body
    for index, statement in enumerate(body):
        if isinstance(statement, ast.Return):
            return False if index == len(body) - 1 else True
        if not isinstance(statement, (*_FUNCTIONS, ast.ClassDef)) and _contains_return([statement]):
            return True
    return False


class _ReturnLowering:
    def __init__(self, namer: _Namer):
        self.flag = namer.fresh("do_return")
        self.value = namer.fresh("retval_")

    def lower(self, function: ast.FunctionDef) -> None:
        start = function.body[0]
        prologue = [
            _assign(self.flag, ast.Constant(False)),
            _assign(self.value, _ag_call("UndefinedReturn", ast.Constant(self.value))),
        ]
        body = self._block(function.body)
        epilogue = ast.Return(_load(self.value))
        _located(epilogue, function.body[-1])
        function.body = _located(prologue, start) + body + [epilogue]

    def _guard(self, statements, source) -> ast.If:
        test = ast.UnaryOp(ast.Not(), _load(self.flag))
        return _located(ast.If(test, statements, []), source)

    def _block(self, statements) -> list:
        result = []
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                value = statement.value if statement.value is not None else ast.Constant(None)
                result += _located(
                    [_assign(self.flag, ast.Constant(True)), _assign(self.value, value)],
                    statement,
                )
                return result
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)) or not _contains_return(
                [statement]
            ):
                result.append(statement)
                continue
            self._lower_compound(statement)
            result.append(statement)
            rest = self._block(statements[index + 1 :])
            if rest:
                result.append(self._guard(rest, statements[index + 1]))
            return result
        return result

    def _lower_compound(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.While):
            statement.test = ast.BoolOp(
                ast.And(), [ast.UnaryOp(ast.Not(), _load(self.flag)), statement.test]
            )
            _located(statement.test, statement)
        elif isinstance(statement, ast.For):
            statement.extra_tests = getattr(statement, "extra_tests", []) + [self.flag]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block:
                setattr(statement, field, self._block(block))
        for handler in getattr(statement, "handlers", []):
            handler.body = self._block(handler.body)


# -- 3. break and continue -------------------------------------------------------------------------
def _loop_jumps(body, kind) -> bool:
    """True when ``body`` holds a ``kind`` (Break/Continue) that belongs to this loop."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            return True
        if isinstance(node, (ast.While, ast.For, *_NESTED_SCOPES)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


class _JumpLowering:
    """Rewrites ``break`` and ``continue`` of each loop into flags, innermost loops first."""

    def __init__(self, namer: _Namer):
        self._namer = namer

    def lower_block(self, statements) -> list:
        result = []
        for statement in statements:
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                result.append(statement)
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(statement, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    setattr(statement, field, self.lower_block(block))
            for handler in getattr(statement, "handlers", []):
                handler.body = self.lower_block(handler.body)
            if isinstance(statement, (ast.While, ast.For)):
                result += self._lower_loop(statement)
            else:
                result.append(statement)
        return result

    def _lower_loop(self, loop) -> list:
        before, after = [], []
        if _loop_jumps(loop.body, ast.Continue):
            flag = self._namer.fresh("continue_")
            reset = _located(_assign(flag, ast.Constant(False)), loop.body[0])
            loop.body = [reset] + _guarded(loop.body, flag, ast.Continue)
        if _loop_jumps(loop.body, ast.Break) or loop.orelse:
            flag = self._namer.fresh("break_")
            before.append(_located(_assign(flag, ast.Constant(False)), loop))
            loop.body = _guarded(loop.body, flag, ast.Break)
            if isinstance(loop, ast.While):
                loop.test = _located(
                    ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), _load(flag)), loop.test]), loop
                )
            else:
                loop.extra_tests = getattr(loop, "extra_tests", []) + [flag]
            if loop.orelse:
                test = ast.UnaryOp(ast.Not(), _load(flag))
                after.append(_located(ast.If(test, loop.orelse, []), loop.orelse[0]))
                loop.orelse = []
        return before + [loop] + after


def _guarded(statements, flag: str, kind) -> list:
    """``statements`` with each ``kind`` replaced by ``flag = True`` and what follows a statement
    that may set the flag run only under ``if not flag:``."""
    result = []
    for index, statement in enumerate(statements):
        if isinstance(statement, kind):
            result.append(_located(_assign(flag, ast.Constant(True)), statement))
            return result
        if isinstance(statement, (ast.While, ast.For, *_NESTED_SCOPES)) or not _loop_jumps(
            [statement], kind
        ):
            result.append(statement)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block:
                setattr(statement, field, _guarded(block, flag, kind))
        for handler in getattr(statement, "handlers", []):
            handler.body = _guarded(handler.body, flag, kind)
        result.append(statement)
        rest = statements[index + 1 :]
        if rest:
            rest = _guarded(rest, flag, kind)
            test = ast.UnaryOp(ast.Not(), _load(flag))
            result.append(_located(ast.If(test, rest, []), rest[0]))
        return result
    return result


# -- 4. expressions --------------------------------------------------------------------------------
class _ExpressionRewriter(ast.NodeTransformer):
    """``and``/``or``/``not``, conditional expressions, and calls: ``print``, ``range`` and
    ``len`` go to their operators, other builtins and attributes of modules stay as they are, and
    calls of names and of ``self.<method>`` go through ``ag__.call``, which converts user code."""

    _BUILTIN_OPERATORS = {"print": "print_", "range": "range_", "len": "len_"}

    def __init__(self, module_names: set, builtin_names: set, print_calls: bool = True):
        self._module_names = module_names
        self._builtin_names = builtin_names
        # Whether ``print`` goes to its operator (``BUILTIN_FUNCTIONS``), or stays Python's.
        self._print_calls = print_calls
        self._first_parameters: list = []

    def visit_FunctionDef(self, node: ast.FunctionDef):
        arguments = node.args.posonlyargs + node.args.args
        self._first_parameters.append(arguments[0].arg if arguments else None)
        self.generic_visit(node)
        self._first_parameters.pop()
        return node

    def _explicit_super(self, node: ast.Call) -> ast.Call:
        """``super()`` as ``super(__class__, self)``: the branch and loop functions the
        conversion makes would otherwise give zero-argument super their own first argument."""
        instance = self._first_parameters[-1] if self._first_parameters else None
        if node.args or node.keywords or instance is None:
            return node
        return _located(ast.Call(node.func, [_load("__class__"), _load(instance)], []), node)

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        operator = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _ag_call(operator, _thunk(value), _thunk(result))
        return _located(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _located(_ag_call("not_", node.operand), node)
        return node

    def visit_Compare(self, node: ast.Compare):
        """``==``/``!=`` compare values (``ag__.eq``), as a graph tensor's own ``==`` (identity,
        as in TensorFlow 1.x) would not; a chain ``a < b < c`` is an ``and`` of its links."""
        self.generic_visit(node)
        links = []
        operands = [node.left, *node.comparators]
        for left, operator, right in zip(operands, node.ops, operands[1:]):
            if isinstance(operator, (ast.Eq, ast.NotEq)):
                name = "eq" if isinstance(operator, ast.Eq) else "not_eq"
                links.append(_ag_call(name, left, right))
            else:
                links.append(ast.Compare(left, [operator], [right]))
        result = links[-1]
        for link in reversed(links[:-1]):
            result = _ag_call("and_", _thunk(link), _thunk(result))
        return _located(result, node)

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return _located(_ag_call("if_exp", node.test, _thunk(node.body), _thunk(node.orelse)), node)

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        function = node.func
        if isinstance(function, ast.Name):
            if function.id == "super" and "super" in self._builtin_names:
                return self._explicit_super(node)
            if function.id in self._builtin_names:
                operator = self._BUILTIN_OPERATORS.get(function.id)
                if operator is None or (function.id == "print" and not self._print_calls):
                    return node
                return _located(ast.Call(_ag(operator), node.args, node.keywords), node)
            if function.id == AG or function.id in self._module_names:
                return node
        elif not (
            isinstance(function, ast.Attribute)
            and isinstance(function.value, ast.Name)
            and function.value.id == "self"
        ):
            return node
        return _located(ast.Call(_ag("call"), [function, *node.args], node.keywords), node)


# -- 5. liveness -----------------------------------------------------------------------------------
class _Liveness:
    """Annotates each ``if``/``while``/``for`` of one function with ``ag_state``: the names it
    assigns that are live after it or read in it before being assigned, in source order."""

    def block(self, statements, live_out: set) -> set:
        live = set(live_out)
        for statement in reversed(statements):
            live = self.statement(statement, live)
        return live

    def statement(self, statement: ast.stmt, live_out: set) -> set:
        if isinstance(statement, ast.If):
            live_body = self.block(statement.body, live_out)
            live_else = self.block(statement.orelse, live_out)
            assigned = bound_names(statement.body + statement.orelse)
            needed = live_out | live_body | live_else
            statement.ag_state = [n for n in assigned if n in needed]
            return _loads(statement.test) | live_body | live_else
        if isinstance(statement, ast.While):
            head = set(live_out) | _loads(statement.test)
            while True:
                new_head = head | self.block(statement.body, head)
                if new_head == head:
                    break
                head = new_head
            statement.ag_state = [n for n in bound_names(statement.body) if n in head]
            return head
        if isinstance(statement, ast.For):
            targets = set(bound_names([ast.Assign([statement.target], ast.Constant(None))]))
            extra = set(getattr(statement, "extra_tests", []))
            head = set(live_out) | extra
            while True:
                new_head = head | (self.block(statement.body, head) - targets)
                if new_head == head:
                    break
                head = new_head
            assigned = bound_names(statement.body)
            statement.ag_targets_live = [n for n in targets if n in live_out]
            statement.ag_state = statement.ag_targets_live + [
                n for n in assigned if n in head and n not in targets
            ]
            return head | _loads(statement.iter)
        if isinstance(statement, (ast.With, ast.Try)):
            live = set(live_out)
            blocks = [getattr(statement, f, []) for f in ("finalbody", "orelse", "body")]
            for block in blocks:
                live |= self.block(block, live)
            for handler in getattr(statement, "handlers", []):
                live |= self.block(handler.body, live_out)
            return live | _loads_of_headers(statement)
        if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            return (live_out - {statement.name}) | _loads(statement)
        return (live_out - set(bound_names([statement]))) | _loads(statement)


def _loads_of_headers(statement) -> set:
    if isinstance(statement, ast.With):
        return set().union(*(_loads(item) for item in statement.items))
    return set()


# -- 6. control flow -------------------------------------------------------------------------------
class _ControlFlowConverter:
    """Replaces each annotated ``if``/``while``/``for`` of a block by nested functions and an
    operator call; ``bound`` holds the names that surely have a value at each point."""

    def __init__(self, namer: _Namer):
        self._namer = namer

    def function(self, function: ast.FunctionDef) -> None:
        _Liveness().block(function.body, set())
        self._declared = {
            name
            for node in _walk_scope(function)
            if isinstance(node, (ast.Global, ast.Nonlocal))
            for name in node.names
        }
        arguments = function.args
        parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        function.body = self.block(function.body, parameters)

    def block(self, statements, bound: set) -> list:
        result = []
        for statement in statements:
            if isinstance(statement, ast.If):
                result += self._if(statement, bound)
            elif isinstance(statement, ast.While):
                result += self._while(statement, bound)
            elif isinstance(statement, ast.For):
                result += self._for(statement, bound)
            else:
                if isinstance(statement, _FUNCTIONS):
                    self.function(statement)
                else:
                    for field in ("body", "orelse", "finalbody"):
                        block = getattr(statement, field, None)
                        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                            setattr(statement, field, self.block(block, bound))
                    for handler in getattr(statement, "handlers", []):
                        handler.body = self.block(handler.body, bound | {handler.name})
                result.append(statement)
                bound |= set(bound_names([statement]))
        return result

    def _undefined_first(self, state, bound, source) -> list:
        declared = [n for n in state if n in getattr(self, "_declared", ())]
        if declared:
            raise ConversionError(
                f"'{declared[0]}' is declared global or nonlocal and assigned in the statement at "
                f"line {source.lineno}, which the conversion turns into functions of the names it "
                "assigns: assign it outside the if or loop, or keep this function unconverted "
                "(df.autograph.do_not_convert)"
            )
        return [
            _located(_assign(n, _ag_call("Undefined", ast.Constant(n))), source)
            for n in state
            if n not in bound
        ]

    def _def(self, name: str, parameters, body, returns, source) -> ast.FunctionDef:
        body = list(body) + [_located(ast.Return(returns), source)]
        function = ast.FunctionDef(name, _arguments(parameters), body, [], None)
        if hasattr(ast.FunctionDef, "type_params") or "type_params" in ast.FunctionDef._fields:
            function.type_params = []
        return _located(function, source)

    def _state_call(self, state, call, source) -> ast.stmt:
        if state:
            return _located(ast.Assign([_names_tuple(state, ast.Store)], call), source)
        return _located(ast.Expr(call), source)

    def _if(self, node: ast.If, bound: set) -> list:
        state = node.ag_state
        before = self._undefined_first(state, bound, node)
        results = _names_tuple(state, ast.Load)
        true_name, false_name = self._namer.stable("if_true"), self._namer.stable("if_false")
        if_true = self._def(true_name, state, self.block(node.body, set(state)), results, node)
        orelse = node.orelse or []
        if_false = self._def(false_name, state, self.block(orelse, set(state)), results, node)
        call = _ag_call(
            "if_stmt", node.test, _load(true_name), _load(false_name), _names_tuple(state, ast.Load)
        )
        bound |= set(state)
        return before + [if_true, if_false, self._state_call(state, call, node)]

    @staticmethod
    def _loop_options(node) -> list:
        """Takes a ``set_loop_options(...)`` call out of the loop's body: its arguments become
        the keyword ``options=ag__.loop_options(...)``, evaluated before the loop (where the
        variables it names still hold their values on entry), as AutoGraph's directives are."""

        def is_directive(statement):
            if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
                return None
            call = statement.value
            function = call.func
            if _is_ag(function, "call") and call.args:
                function = call.args[0]
            name = getattr(function, "attr", None) or getattr(function, "id", None)
            return call if name == "set_loop_options" else None

        for index, statement in enumerate(node.body):
            call = is_directive(statement)
            if call is not None:
                del node.body[index]
                if not node.body:
                    node.body.append(_located(ast.Pass(), statement))
                options = _ag_call("loop_options", *call.args, keywords=call.keywords)
                return [_located(ast.keyword("options", options), statement)]
        return []

    def _while(self, node: ast.While, bound: set) -> list:
        state = node.ag_state
        options = self._loop_options(node)
        before = self._undefined_first(state, bound, node)
        test_name, body_name = self._namer.stable("while_test"), self._namer.stable("while_body")
        test = self._def(test_name, state, [], node.test, node)
        body = self.block(node.body, set(state))
        while_body = self._def(body_name, state, body, _names_tuple(state, ast.Load), node)
        call = _ag_call(
            "while_stmt",
            _load(test_name),
            _load(body_name),
            _names_tuple(state, ast.Load),
            keywords=options,
        )
        bound |= set(state)
        return before + [test, while_body, self._state_call(state, call, node)]

    def _for(self, node: ast.For, bound: set) -> list:
        state = node.ag_state
        options = self._loop_options(node)
        before = self._undefined_first(state, bound, node)
        target = node.target
        inner_bound = set(state) | set(bound_names([ast.Assign([target], ast.Constant(None))]))
        body = self.block(node.body, inner_bound)
        if isinstance(target, ast.Name) and target.id not in state:
            item = target.id
        else:
            item = self._namer.fresh("itr")
            body = [_located(ast.Assign([target], _load(item)), node)] + body
        body_name = self._namer.stable("for_body")
        for_body = self._def(body_name, [item, *state], body, _names_tuple(state, ast.Load), node)
        definitions = [for_body]
        keywords = options
        extra_tests = getattr(node, "extra_tests", [])
        if extra_tests:
            test_name = self._namer.stable("for_test")
            flags = [ast.UnaryOp(ast.Not(), _load(flag)) for flag in extra_tests]
            expression = flags[0] if len(flags) == 1 else ast.BoolOp(ast.And(), flags)
            expression = _ExpressionRewriter(set(), set()).visit(_located(expression, node))
            definitions.append(self._def(test_name, state, [], expression, node))
            keywords.append(ast.keyword("extra_test", _load(test_name)))
        call = _ag_call(
            "for_stmt",
            node.iter,
            _load(body_name),
            _names_tuple(state, ast.Load),
            keywords=keywords,
        )
        bound |= set(state)
        return before + definitions + [self._state_call(state, call, node)]


# -- the pipeline ----------------------------------------------------------------------------------
def convert_function_tree(
    function: ast.FunctionDef,
    module_names: set,
    builtin_names: set,
    asserts: bool = True,
    lists: bool = True,
    print_calls: bool = True,
) -> ast.FunctionDef:
    """Converts ``function`` (a parsed ``def``, changed in place and returned) and the functions
    nested in it.  ``module_names`` are the names that refer to modules where the function is
    defined (calls of their attributes, ``df.add``, ``np.sum``, stay as they are) and
    ``builtin_names`` the names that refer to Python's builtins there.  ``asserts``,
    ``lists`` and ``print_calls`` turn the conversion of ``assert`` statements, of list
    appends and of ``print`` calls on."""
    function.decorator_list = []
    namer = _Namer(_all_identifiers(function) | {AG})
    _StatementRewriter(asserts, lists).visit(function)
    functions = [n for n in ast.walk(function) if isinstance(n, _FUNCTIONS)]
    for nested in functions:
        nested.decorator_list = [] if nested is function else nested.decorator_list
        if _needs_return_lowering(nested):
            _ReturnLowering(namer).lower(nested)
        nested.body = _JumpLowering(namer).lower_block(nested.body)
    _ExpressionRewriter(module_names, builtin_names, print_calls).visit(function)
    _ControlFlowConverter(namer).function(function)
    ast.fix_missing_locations(function)
    return function
