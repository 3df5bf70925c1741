"""``df.make_template``: a function whose variables are made on its first call and shared by
every later call (``tf.compat.v1.make_template``).

The first call runs ``func_`` in a new variable scope (``name_``, made unique); later calls
enter the same scope with ``reuse=True``, so ``get_variable`` returns the variables of the
first call.  A later call that would make a new trainable variable is an error, as in
TensorFlow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Optional

from ..framework.graph import get_collection
from ..framework.graph_keys import GraphKeys
from .variable_scope import variable_scope

__all__ = ["Template", "make_template"]


class Template:
    """A function wrapped by `make_template`: call it as the function itself."""

    def __init__(
        self,
        name: str,
        func: Callable,
        create_scope_now: bool = False,
        unique_name: Optional[str] = None,
        custom_getter: Optional[Callable] = None,
    ):
        if not name:
            raise ValueError("name cannot be None or empty.")
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        self._variables_created = False
        if create_scope_now:
            with variable_scope(unique_name, default_name=name, custom_getter=custom_getter) as vs:
                self._variable_scope = vs

    @property
    def name(self) -> str:
        return self._name

    @property
    def variable_scope(self):
        """The variable scope of the template's variables (None before the first call unless
        ``create_scope_now_``)."""
        return self._variable_scope

    @property
    def variable_scope_name(self) -> Optional[str]:
        return None if self._variable_scope is None else self._variable_scope.name

    @property
    def variables(self) -> list:
        return self.global_variables

    @property
    def global_variables(self) -> list:
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def trainable_variables(self) -> list:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    def _collection(self, key: str) -> list:
        if self._variable_scope is None:
            return []
        return get_collection(key, scope=self._variable_scope.name + "/")

    def __call__(self, *args, **kwargs):
        if self._variable_scope is None:
            scope = variable_scope(
                self._unique_name, default_name=self._name, custom_getter=self._custom_getter
            )
        else:
            scope = variable_scope(
                self._variable_scope,
                reuse=True if self._variables_created else None,
                custom_getter=self._custom_getter,
            )
        with scope as vs:
            self._variable_scope = vs
            if not self._variables_created:
                result = self._func(*args, **kwargs)
                self._variables_created = True
                return result
            trainable_before = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
            result = self._func(*args, **kwargs)
            if len(get_collection(GraphKeys.TRAINABLE_VARIABLES)) != trainable_before:
                raise ValueError(
                    "Trainable variable created when calling a template after the first time, "
                    "perhaps you used tf.Variable when you meant tf.get_variable: "
                    f"template '{self._name}'"
                )
            return result


def make_template(
    name_: str,
    func_: Callable,
    create_scope_now_: bool = False,
    unique_name_: Optional[str] = None,
    custom_getter_: Optional[Callable] = None,
    **kwargs,
) -> Template:
    """``func_`` (with ``kwargs`` bound) as a `Template`: its variables are made by its first
    call, in a variable scope named after ``name_``, and shared by every later call."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now_, unique_name_, custom_getter_)
