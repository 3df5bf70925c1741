"""``df.flags`` (also ``df.app.flags``): TensorFlow 1.x's command-line flags.

``DEFINE_string("data_dir", "/tmp/data", "help")`` and its siblings define a flag;
``FLAGS.data_dir`` reads it.  The first read parses ``sys.argv`` if nothing has parsed it yet,
as TensorFlow 1.x does, so a program works whether or not it goes through ``df.app.run``.
``--name=value`` and ``--name value`` set a flag; a boolean also takes ``--name`` and
``--noname``.  Parsing keeps the arguments it does not know (a notebook kernel's, say) and
returns them, with ``argv[0]`` first.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Optional


class Error(Exception):
    """A flag that is defined twice, or a bad value on the command line."""


DuplicateFlagError = Error
IllegalFlagValueError = Error


class _Flag:
    __slots__ = ("name", "default", "help", "parse", "is_boolean", "value")

    def __init__(self, name: str, default, help: str, parse: Callable, is_boolean: bool):  # noqa: A002
        self.name = name
        self.help = help
        self.parse = parse
        self.is_boolean = is_boolean
        self.default = default if default is None else parse(default)
        self.value = self.default


class FlagValues:
    """The defined flags and their values; ``FLAGS(argv)`` parses ``argv``."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)
        object.__setattr__(self, "_lock", threading.RLock())

    def _define(self, flag: _Flag) -> None:
        with self._lock:
            if flag.name in self._flags:
                raise DuplicateFlagError(f"The flag '{flag.name}' is defined twice.")
            self._flags[flag.name] = flag

    def __getattr__(self, name: str):
        flags = self._flags
        if name not in flags:
            raise AttributeError(name)
        if not self._parsed:
            self(sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name: str, value) -> None:
        if name not in self._flags:
            raise AttributeError(f"Unknown flag '{name}': define it before setting it")
        self._flags[name].value = value

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __iter__(self):
        return iter(list(self._flags))

    def is_parsed(self) -> bool:
        return self._parsed

    def mark_as_parsed(self) -> None:
        object.__setattr__(self, "_parsed", True)

    def flag_values_dict(self) -> dict[str, Any]:
        return {name: flag.value for name, flag in self._flags.items()}

    def __call__(self, argv, known_only: bool = False) -> list[str]:
        """Sets the flags ``argv[1:]`` names; returns ``argv[0]`` and the other arguments."""
        argv = list(argv)
        remaining = argv[:1]
        args = iter(argv[1:])
        with self._lock:
            for arg in args:
                if arg == "--":
                    remaining.extend(args)
                    break
                if not arg.startswith("-") or arg == "-":
                    remaining.append(arg)
                    continue
                name, has_value, text = arg.lstrip("-").partition("=")
                flag = self._flags.get(name)
                if flag is None and name.startswith("no") and not has_value:
                    negated = self._flags.get(name[2:])
                    if negated is not None and negated.is_boolean:
                        negated.value = False
                        continue
                if flag is None:
                    if not known_only:
                        raise Error(f"Unknown command line flag '{name}'")
                    remaining.append(arg)
                    continue
                if not has_value:
                    if flag.is_boolean:
                        flag.value = True
                        continue
                    text = next(args, None)
                    if text is None:
                        raise Error(f"Flag --{name} needs a value")
                try:
                    flag.value = flag.parse(text)
                except (TypeError, ValueError) as e:
                    raise IllegalFlagValueError(f"Invalid value for flag --{name}: {e}") from None
            self.mark_as_parsed()
        return remaining


FLAGS = FlagValues()


def _boolean(value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "t", "1", "yes"):
        return True
    if text in ("false", "f", "0", "no"):
        return False
    raise ValueError(f"{value!r} is not a boolean")


def _list(value) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [item.strip() for item in str(value).split(",") if item.strip()]


def _define(name: str, default, help: Optional[str], parse: Callable, is_boolean=False) -> None:  # noqa: A002
    FLAGS._define(_Flag(name, default, help or "", parse, is_boolean))


def DEFINE_string(name: str, default: Optional[str], help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    _define(name, default, help, str)


def DEFINE_integer(name: str, default: Optional[int], help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    _define(name, default, help, int)


def DEFINE_float(name: str, default: Optional[float], help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    _define(name, default, help, float)


def DEFINE_boolean(name: str, default: Optional[bool], help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    _define(name, default, help, _boolean, is_boolean=True)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name: str, default, help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    """A comma-separated list of strings."""
    _define(name, default, help, _list)


def DEFINE_enum(name: str, default, enum_values, help: Optional[str] = None, **_) -> None:  # noqa: A002, N802
    """A string that must be one of ``enum_values``."""
    allowed = list(enum_values)

    def parse(value):
        if value not in allowed:
            raise ValueError(f"{value!r} is not one of {allowed}")
        return value

    _define(name, default, help, parse)
