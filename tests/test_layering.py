"""The house's rules, read from the source (`layering`): imports go down the layers, no
modules import each other in a circle, and the lowest layers stay free of the rest.

The layout is being brought to these rules.  Until it is, `STILL_UPWARD` lists the imports
that still go up and `STILL_IN_A_CIRCLE` the modules still caught in circles; both may only
shrink: a new upward import or circle fails, and so does an entry that no longer holds (take
it off the list when the import is gone).
"""

from __future__ import annotations

import pathlib

import layering

ALLOWANCES = pathlib.Path(__file__).with_name("layering_allowances.txt")


def _allowances() -> tuple[set[str], set[str]]:
    upward, circle = set(), set()
    section = None
    for line in ALLOWANCES.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line in ("[upward]", "[circle]"):
            section = line
        elif line:
            (upward if section == "[upward]" else circle).add(line)
    return upward, circle


STILL_UPWARD, STILL_IN_A_CIRCLE = _allowances()
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
    upward = _upward()
    new = [str(edge) for pair, edges in sorted(upward.items()) if pair not in STILL_UPWARD
           for edge in edges]  # fmt: skip
    assert not new, "imports that go up a layer:\n  " + "\n  ".join(
        f"{edge}: layer {layering.layer_of(edge.partition(' -> ')[0])} imports layer "
        f"{layering.layer_of(edge.partition(' -> ')[2].partition(' ')[0])}"
        for edge in new
    )


def test_the_upward_imports_still_allowed_still_exist():
    gone = sorted(STILL_UPWARD - set(_upward()))
    assert not gone, f"no longer imported; take them off {ALLOWANCES.name}:\n  " + "\n  ".join(gone)


def test_no_modules_import_each_other_in_a_circle():
    caught = {name for circle in layering.circles(EDGES) for name in circle}
    new = sorted(caught - STILL_IN_A_CIRCLE)
    assert not new, "modules newly caught in an import circle:\n  " + "\n  ".join(new)
    freed = sorted(STILL_IN_A_CIRCLE - caught)
    assert not freed, f"out of every circle now; take them off {ALLOWANCES.name}:\n  " + (
        "\n  ".join(freed)
    )


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


def test_the_import_reader_sees_imports_inside_functions_and_skips_type_checking(tmp_path):
    edges = {(e.importer, e.imported): e for e in EDGES}
    # executor.runner names Plan only for type checking; plan imports the runner for Plan.run.
    assert ("executor.runner", "executor.plan") not in edges
    assert ("executor.plan", "executor.runner") in edges
    inside = [e for e in EDGES if e.in_function]
    assert inside and all(isinstance(e.line, int) for e in inside)
