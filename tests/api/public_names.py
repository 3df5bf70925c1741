"""The public names of `dataflow`, walked from ``import dataflow as df``.

`walk()` visits every module reachable from the package root through public attributes
(each module once, under the first path met in breadth-first order; later paths to the same
module are recorded as aliases of it).  The API is what the *namespaces* offer: the package
roots, every package's ``__init__``, and every module that stands for one of TensorFlow's
namespaces (``df.train``, ``df.math``, ``df.compat.v1``, ...).  Of a namespace, each public
name (no leading underscore) the project owns is recorded: functions, classes and constants,
wherever they are defined.  Of an implementation module (``dataflow.session``,
``dataflow.ops.math_ops``, ...), its path is recorded and the names its ``__all__`` declares:
the rest of its contents may move between modules, while code that imports it by that path,
or imports what it declares, keeps working.

Functions and classes are recorded with their signatures.  A module attribute is followed
when it is a submodule of its parent, is declared in the parent's ``__all__``, or is a
namespace.  Names from elsewhere (numpy, typing,
the standard library) are never part of it.

``python tests/api/public_names.py`` adds the public names found now to ``public_names.json``;
the names recorded before stay recorded, so the record only grows unless a change is accepted
deliberately (``--accept-changes``), and the diff shows it.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib
import pkgutil
import re
import sys
import types
from collections import deque

RECORD = pathlib.Path(__file__).with_name("public_names.json")
PACKAGES = ("dataflow", "primitives", "executor")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


_TF_NAMESPACES = frozenset(
    json.loads(
        (
            pathlib.Path(__file__).parent.parent / "tf1_surface" / "tensorflow_compat_v1.json"
        ).read_text()
    )["modules"]
)


def _ours(module_name: str) -> bool:
    return (module_name or "").split(".")[0] in PACKAGES


def is_namespace(path: str, module) -> bool:
    """Whether ``module``, reached at ``path``, offers names it does not define."""
    if path in PACKAGES or hasattr(module, "__path__"):
        return True
    package, _, relative = path.partition(".")
    if relative.startswith("compat.v1"):
        relative = relative[len("compat.v1") :].lstrip(".")
    return package == "dataflow" and relative in _TF_NAMESPACES


def signature_of(value) -> str:
    """The parameters of ``inspect.signature`` as text (names, kinds and defaults, object
    addresses taken out; annotations are left out, being documentation); "" when it has none."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return ""
    empty = inspect.Parameter.empty
    bare = signature.replace(
        parameters=[p.replace(annotation=empty) for p in signature.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )
    return _ADDRESS.sub("", str(bare))


def _is_routine(value) -> bool:
    return isinstance(value, type) or callable(value) and hasattr(value, "__module__")


def description_of(value) -> str:
    """``function(signature)``, ``class(signature)`` or ``value:<type name>``."""
    if isinstance(value, types.ModuleType):
        return "module"
    if _is_routine(value):
        kind = "class" if isinstance(value, type) else "function"
        return f"{kind}{signature_of(value)}"
    return f"value:{type(value).__name__}"


def describe(value):
    """What the record says about ``value``, a public name of a namespace; None when the
    name is not part of the API (see the module docstring)."""
    if _is_routine(value):
        if not _ours(getattr(value, "__module__", "") or ""):
            return None
    elif type(value).__module__ in ("typing", "__future__"):
        return None
    return description_of(value)


def _follows(parent_path: str, parent, name: str, module) -> bool:
    """Whether the walk goes into ``module``, found as ``parent.name``."""
    if not _ours(module.__name__):
        return False
    return (
        module.__name__ == f"{parent.__name__}.{name}"
        or name in getattr(parent, "__all__", ())
        or is_namespace(f"{parent_path}.{name}", module)
        and not hasattr(module, "__path__")
        and is_namespace(parent_path, parent)
    )


def walk(*roots) -> dict[str, str]:
    """``{dotted path: description}`` of every public name reachable from ``roots``."""
    entries: dict[str, str] = {}
    first_path: dict[int, str] = {}
    queue = deque((root.__name__, root) for root in roots)
    while queue:
        path, module = queue.popleft()
        if id(module) in first_path:
            entries[path] = f"module {first_path[id(module)]}"
            continue
        first_path[id(module)] = path
        entries[path] = "module"
        namespace = is_namespace(path, module)
        for name in sorted(dir(module)):
            if name.startswith("_") or name == "TYPE_CHECKING":
                continue
            value = getattr(module, name)
            if isinstance(value, types.ModuleType):
                if _follows(path, module, name, value):
                    queue.append((f"{path}.{name}", value))
                continue
            declared = name in getattr(module, "__all__", ())
            description = describe(value) if namespace or declared else None
            if description is not None:
                entries[f"{path}.{name}"] = description
    return entries


def roots() -> tuple:
    """The three packages, with every module in them imported (so that each is an attribute
    of its package whatever ran before, and the walk does not depend on import order)."""
    import dataflow
    import executor
    import primitives

    for package in (dataflow, primitives, executor):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    return dataflow, primitives, executor


def resolve(path: str):
    """The object at ``path`` (``dataflow.train.AdamOptimizer``), reached by attributes from
    the package the path starts with."""
    first, *rest = path.split(".")
    value = {root.__name__: root for root in roots()}[first]
    for part in rest:
        value = getattr(value, part)
    return value


def differences(record: dict[str, str]) -> tuple[list[str], list[str]]:
    """``(lost, changed)``: the recorded paths that no longer resolve, and those that resolve
    to something else than recorded (each with what it was and what it is)."""
    lost, changed = [], []
    for path, recorded in sorted(record.items()):
        try:
            value = resolve(path)
        except AttributeError:
            lost.append(path)
            continue
        if recorded.startswith("module "):
            target = recorded.partition(" ")[2]
            if value is not resolve(target):
                changed.append(f"{path}: no longer the module {target}")
            continue
        now = description_of(value)
        if now != recorded:
            changed.append(f"{path}:\n    was {recorded}\n    now {now}")
    return lost, changed


def main(argv: list[str]) -> int:
    """Adds the public names found now to the record; the names recorded before stay in it
    (moving a definition leaves its old path recorded, and the test keeps it working).  A
    recorded name that is lost or changed is refused unless ``--accept-changes`` is given."""
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    lost, changed = differences(record)
    if (lost or changed) and "--accept-changes" not in argv:
        print("recorded names lost or changed (--accept-changes to record that):", file=sys.stderr)
        for line in lost + changed:
            print(f"  {line}", file=sys.stderr)
        return 1
    for path in lost:
        del record[path]
    found = walk(*roots())
    for path in changed:
        path = path.partition(":")[0]
        record[path] = found.get(path) or description_of(resolve(path))
    added = sorted(set(found) - set(record))
    record.update((path, found[path]) for path in added)
    RECORD.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
    print(f"{len(added)} names added; {len(record)} recorded in {RECORD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
