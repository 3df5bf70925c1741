"""The house's rules, read from the source (`layering`): imports go down the layers, no
modules import each other in a circle, and the lowest layers stay free of the rest.  Imports
inside functions count: they tie two modules as firmly, only later."""

from __future__ import annotations

import layering

EDGES = layering.import_edges()


def _upward() -> dict[str, list[layering.Import]]:
    found: dict[str, list[layering.Import]] = {}
    for edge in EDGES:
        if layering.layer_of(edge.importer) < layering.layer_of(edge.imported):
            found.setdefault(f"{edge.importer} -> {edge.imported}", []).append(edge)
    return found


def test_every_module_has_a_layer():
    unplaced = [name for name in layering.modules() if _layer_or_none(name) is None]
    assert not unplaced, "modules no entry of layering.LAYERS places: " + ", ".join(unplaced)


def _layer_or_none(name):
    try:
        return layering.layer_of(name)
    except KeyError:
        return None


def test_no_import_goes_up_a_layer():
    upward = [str(edge) for _, edges in sorted(_upward().items()) for edge in edges]
    assert not upward, "imports that go up a layer:\n  " + "\n  ".join(
        f"{edge}: layer {layering.layer_of(edge.partition(' -> ')[0])} imports layer "
        f"{layering.layer_of(edge.partition(' -> ')[2].partition(' ')[0])}"
        for edge in upward
    )


def test_no_modules_import_each_other_in_a_circle():
    found = layering.circles(EDGES)
    described = []
    for circle in found:
        members = set(circle)
        ties = [str(e) for e in EDGES if e.importer in members and e.imported in members]
        described.append(", ".join(circle) + "\n    " + "\n    ".join(ties))
    assert not found, "modules that import each other in a circle:\n  " + "\n  ".join(described)


def test_the_executor_imports_nothing_of_the_other_packages():
    outside = [
        str(edge)
        for edge in EDGES
        if edge.importer.split(".")[0] == "executor" and edge.imported.split(".")[0] != "executor"
    ]
    assert not outside, "\n".join(outside)


def test_the_executor_is_free_of_circles():
    caught = [c for c in layering.circles(EDGES) if c[0].startswith("executor")]
    assert not caught, caught


def test_the_reader_finds_an_upward_import_and_a_circle_in_a_small_tree(tmp_path):
    files = {
        "executor/__init__.py": "",
        "executor/a.py": "from .b import x\n",
        "executor/b.py": "def f():\n    from . import a\n",
        "dataflow/__init__.py": "",
        "dataflow/framework/__init__.py": "",
        "dataflow/framework/graph.py": "def eval():\n    from ..client.session import run\n",
        "dataflow/client/__init__.py": "",
        "dataflow/client/session.py": "from ..framework.graph import Graph\n",
        "dataflow/client/helpers.py": "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .session import Session\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    edges = layering.import_edges(str(tmp_path))
    pairs = {(e.importer, e.imported, e.in_function) for e in edges}
    assert ("dataflow.framework.graph", "dataflow.client.session", True) in pairs
    assert not any(e.importer == "dataflow.client.helpers" for e in edges)  # type checking only
    assert layering.layer_of("dataflow.framework.graph") < layering.layer_of(
        "dataflow.client.session"
    )
    assert layering.circles(edges) == [
        ["dataflow.client.session", "dataflow.framework.graph"],
        ["executor.a", "executor.b"],
    ]


def test_the_import_reader_sees_the_packages_own_imports():
    edges = {(e.importer, e.imported): e for e in EDGES}
    # The plan runs its runs; the runner reads the plan's tables, never the plan module.
    assert ("executor.plan", "executor.runner") in edges
    assert ("executor.runner", "executor.tables") in edges
    assert ("executor.runner", "executor.plan") not in edges
    inside = [e for e in EDGES if e.in_function]
    assert inside and all(isinstance(e.line, int) for e in inside)
