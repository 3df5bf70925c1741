"""`Message`: the base of the option records that mirror TensorFlow 1.x's protocol buffers
(``ConfigProto``, ``RunOptions``, ``RunMetadata``, ``GraphOptions``, ``RewriterConfig``,
``DebugOptions``, ...).

A subclass is a dataclass whose annotations give each field's type.  As a protobuf message
does, it checks every value given to a field, in the constructor or assigned later, so that a
mistake fails where it is made rather than in a run much later, or not at all: a value of the
wrong type is a ``TypeError`` naming the message, the field, the type it takes and what was
given; a name that is no field is a ``TypeError`` in the constructor (the dataclass's) and an
``AttributeError`` when assigned, as protobuf raises.

Field types understood (anything else is not checked):

- ``int``: an integer, not a bool (as protobuf); ``bool``: a bool or an integer, kept as a bool;
  ``str``: a string;
- another `Message` type, or a dict of its fields (which builds one, as protobuf accepts);
- ``list[T]``: a list or tuple of ``T`` (kept as given when it is a list); ``dict[str, T]``: a
  mapping from strings to ``T``; a bare ``list`` or ``dict`` takes any elements; a subclass of
  ``list`` takes a list or tuple and makes one of that class from it;
- ``Optional[T]``: None or a ``T``; ``Any``: anything.
"""

from __future__ import annotations

import dataclasses
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

_Check = Callable[[Any, str], Any]


class Message:
    """Base of the proto-like option records (see the module docstring)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        check = _checks_of(type(self)).get(name)
        if check is None:
            fields = ", ".join(f.name for f in dataclasses.fields(self))
            raise AttributeError(
                f"{type(self).__name__} has no field '{name}' (its fields: {fields})."
            )
        object.__setattr__(self, name, check(value, f"{type(self).__name__}.{name}"))

    def HasField(self, name: str) -> bool:  # noqa: N802 (protobuf's name)
        """Whether field ``name`` holds something other than its default (protobuf's
        ``HasField``); a name that is no field is a ``ValueError``, as protobuf raises."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        if name not in fields:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        default = fields[name].default
        if default is dataclasses.MISSING:
            default = fields[name].default_factory()
        value = getattr(self, name)
        if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
            return True
        return bool(value != default)


_CHECKS: dict[type, dict[str, _Check]] = {}


def _checks_of(cls: type) -> dict[str, _Check]:
    """The check of each field of the dataclass ``cls``, made from its annotations once."""
    checks = _CHECKS.get(cls)
    if checks is None:
        hints = typing.get_type_hints(cls)
        checks = {f.name: _check_for(hints.get(f.name, Any)) for f in dataclasses.fields(cls)}
        _CHECKS[cls] = checks
    return checks


def _wrong(value: Any, where: str, expected: str) -> TypeError:
    return TypeError(f"{where} must be {expected}, got {value!r} of type {type(value).__name__}.")


def _check_for(hint: Any) -> _Check:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return lambda value, where: value
    if hint is bool:
        return _check_bool
    if hint is int:
        return _check_int
    if hint is str:
        return _check_str
    if isinstance(hint, type) and issubclass(hint, Message):
        return _message_check(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        others = [a for a in args if a is not type(None)]
        inner = _check_for(others[0] if len(others) == 1 else Any)
        return lambda value, where: None if value is None else inner(value, where)
    if isinstance(hint, type) and issubclass(hint, list) and hint is not list:
        return _list_subclass_check(hint)
    if hint is list or origin is list:
        return _list_check(_check_for(args[0]) if args else None)
    if hint is dict or origin is dict:
        return _dict_check(_check_for(args[1]) if args else None)
    return lambda value, where: value


def _check_bool(value: Any, where: str) -> bool:
    if isinstance(value, (numbers.Integral, np.bool_)):
        return bool(value)
    raise _wrong(value, where, "a bool")


def _check_int(value: Any, where: str) -> int:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise _wrong(value, where, "an int")


def _check_str(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    raise _wrong(value, where, "a str")


def _message_check(cls: type) -> _Check:
    def check(value: Any, where: str) -> Any:
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls(**value)
        raise _wrong(value, where, f"a {cls.__name__} (or a dict of its fields)")

    return check


def _list_check(element: _Check | None) -> _Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, (list, tuple)):
            raise _wrong(value, where, "a list")
        if element is None:
            return value if isinstance(value, list) else list(value)
        checked = [element(item, f"{where}[{i}]") for i, item in enumerate(value)]
        if isinstance(value, list) and all(a is b for a, b in zip(checked, value)):
            return value  # a repeated field's own list type (its ``add``) is kept
        return type(value)(checked) if isinstance(value, list) else checked

    return check


def _list_subclass_check(cls: type) -> _Check:
    def check(value: Any, where: str) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, (list, tuple)):
            raise _wrong(value, where, "a list")
        return cls(value)

    return check


def _dict_check(element: _Check | None) -> _Check:
    def check(value: Any, where: str) -> Any:
        if not isinstance(value, Mapping):
            raise _wrong(value, where, "a dict")
        for key in value:
            if not isinstance(key, str):
                raise _wrong(key, f"a key of {where}", "a str")
        if element is None:
            return value
        return {key: element(item, f"{where}[{key!r}]") for key, item in value.items()}

    return check
