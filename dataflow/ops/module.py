"""``df.Module``: TensorFlow's ``tf.Module``, a named container of variables and other modules.

A module takes a name scope of its own when it is made (its ``name``, made unique in the
graph: ``dense``, ``dense_1``, ...); ``with module.name_scope:`` re-enters it, and methods
decorated with `Module.with_name_scope` run inside it.  ``variables``,
``trainable_variables``, ``non_trainable_variables`` and ``submodules`` find what the module's
attributes hold (directly, or in lists, tuples and dicts), walking into submodules, as
TensorFlow walks them: attributes in sorted order, a module's own values before those of its
submodules, each object once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Optional

from ..framework.graph import get_default_graph, name_scope

__all__ = ["Module"]

_VALID_NAME = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")
_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


class _ModuleNameScope:
    """Re-enters a module's name scope (a context manager, usable many times)."""

    def __init__(self, scope_name: str):
        self.name = scope_name
        self._entered: list = []

    def __enter__(self):
        scope = get_default_graph().name_scope(self.name)
        self._entered.append(scope)
        return scope.__enter__()

    def __exit__(self, *exc):
        return self._entered.pop().__exit__(*exc)


class Module:
    """A named container of variables and submodules (see the module docstring)."""

    def __init__(self, name: Optional[str] = None):
        if name is None:
            name = _CAMEL_TO_SNAKE.sub(r"_\1", type(self).__name__).lower()
        elif not _VALID_NAME.match(name):
            raise ValueError(
                f"'{name}' is not a valid module name. Module names must be valid Python "
                "identifiers (e.g. a valid class name)."
            )
        self._name = name
        with name_scope(name) as scope_name:
            self._name_scope = _ModuleNameScope(scope_name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> _ModuleNameScope:
        """The module's name scope, to re-enter with ``with``."""
        return self._name_scope

    @property
    def variables(self) -> tuple:
        """The variables of this module and of its submodules."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """The modules this module holds, and theirs (not itself)."""
        return tuple(self._flatten(predicate=lambda m: isinstance(m, Module)))

    def _flatten(self, recursive: bool = True, predicate: Optional[Callable] = None):
        """The objects the module's attributes hold (walking into submodules when
        ``recursive``) for which ``predicate`` is true, each once."""
        return _flatten_module(self, recursive, predicate or (lambda _: True), {id(self)}, [])

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorates a method so that it runs in its module's name scope."""

        @functools.wraps(method)
        def in_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return in_scope


def _is_variable(value) -> bool:
    from .variables import Variable

    return isinstance(value, Variable)


def _flatten_module(module: Module, recursive: bool, predicate, seen: set, stack: list):
    from ..framework import nest

    if id(module) in stack:
        recursive = False
    submodules = []
    attributes = vars(module)
    for key in sorted(attributes):
        for leaf in nest.flatten(attributes[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if recursive and isinstance(leaf, Module):
                submodules.append(leaf)
    stack.append(id(module))
    for submodule in submodules:
        yield from _flatten_module(submodule, recursive, predicate, seen, stack)
    stack.pop()
