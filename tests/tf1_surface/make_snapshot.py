"""Write ``tensorflow_compat_v1.json``: every public name of ``tf.compat.v1`` and its
submodules, with the parameters (names, kinds, defaults) of each function and class
constructor, as the installed TensorFlow lists them.

Run once with TensorFlow installed (``tensorflow-cpu``), never by the test suite:
``python tests/tf1_surface/make_snapshot.py``.  TensorFlow is not a dependency of dataflow;
the JSON it writes is committed, and ``test_tf1_surface.py`` compares dataflow with it.

A name is recorded under the module path it is reached by (``""`` for ``tf.compat.v1``
itself, ``"train"``, ``"nn.rnn_cell"``...).  ``compat.v1.compat`` (the v1/v2 trees again)
and modules that are not TensorFlow's API (absl's ``flags``, ``unittest.mock``) are not
walked; Keras-backed modules (``layers``, ``nn.rnn_cell``) are listed but cannot be walked
without Keras 2.  A default is recorded as its ``repr`` when that is a plain literal (numbers,
strings, None, bools, tuples of them) and as ``"<object>"`` otherwise, so the snapshot does
not depend on TensorFlow's object addresses.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensorflow_compat_v1.json")
NOT_WALKED = {"compat"}


def _default(value) -> str:
    text = repr(value)
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return "<object>"
    return text


def _parameters(obj):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = []
    for p in signature.parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            entry["default"] = _default(p.default)
        params.append(entry)
    return params


def _describe(obj) -> dict:
    if inspect.isclass(obj):
        entry = {"kind": "class", "params": _parameters(obj.__init__)}
        if entry["params"] and entry["params"][0]["name"] == "self":
            entry["params"] = entry["params"][1:]
        entry["members"] = sorted(
            n for n in dir(obj) if not n.startswith("_") or n in ("__call__", "__enter__")
        )
        return entry
    if callable(obj):
        return {"kind": "function", "params": _parameters(obj)}
    return {"kind": "value", "type": type(obj).__name__}


def _walk(module, path: str, out: dict, seen: set) -> None:
    if id(module) in seen:
        return
    seen.add(id(module))
    names = {}
    try:
        listed = sorted(dir(module))
    except Exception:  # noqa: BLE001 - a lazily loaded part that is not installed (keras)
        out[path] = {"<not importable>": {"kind": "value", "type": "module"}}
        return
    for name in listed:
        if name.startswith("_"):
            continue
        try:
            obj = getattr(module, name)
        except Exception:  # noqa: BLE001 - lazy loaders of optional parts
            continue
        if isinstance(obj, types.ModuleType):
            names[name] = {"kind": "module"}
            # Only TensorFlow's own API modules: ``flags`` is absl's, ``test.mock`` Python's.
            try:
                module_name = obj.__name__
            except AttributeError:  # Keras 3's stand-in module
                module_name = ""
            tensorflow_api = module_name.startswith("tensorflow.") and "_api" in module_name
            if tensorflow_api and (name not in NOT_WALKED or path):
                _walk(obj, f"{path}.{name}" if path else name, out, seen)
            continue
        names[name] = _describe(obj)
    out[path] = names


def main() -> None:
    import tensorflow as tf

    out: dict = {}
    _walk(tf.compat.v1, "", out, set())
    snapshot = {"tensorflow_version": tf.__version__, "modules": out}
    with open(OUT, "w") as f:
        json.dump(snapshot, f, indent=0, sort_keys=True)
        f.write("\n")
    total = sum(len(v) for v in out.values())
    print(f"{len(out)} modules, {total} names -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
