"""The layers of the house, and the imports between its modules, read from the source.

Every module of `executor`, `primitives` and `dataflow` belongs to one layer (`LAYERS`, by the
longest matching module-name prefix); a module may import modules of its own layer and of
lower layers, never of a higher one, and no set of modules may import each other in a circle.
``docs/architecture.md`` gives the reasons; `tests/test_layering.py` holds the rules.

`import_edges()` reads every ``import`` statement with `ast`, at module level and inside
functions alike (an import inside a function ties the two modules just as firmly, only
later), without importing anything: a circle that breaks ``import dataflow`` is still reported
here.  Imports under ``if TYPE_CHECKING:`` never run and are left out.
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("executor", "primitives", "dataflow")

# The layers, lowest first, and the modules of each: one folder per layer (a module belongs to
# the layer of the longest prefix of its dotted name that is listed).
LAYER_ORDER = [
    ("executor: the dataflow machine", ["executor"]),
    ("framework: graphs, tensors, dtypes, shapes, registries", ["dataflow.framework"]),
    ("ops: every op family, variables", ["dataflow.ops"]),
    ("primitives: control flow", ["primitives"]),
    ("linalg: matrix functions and linear operators", ["dataflow.linalg"]),
    ("autodiff", ["dataflow.autodiff"]),
    ("passes: graph rewrites", ["dataflow.passes"]),
    ("client: the Session and its run pipeline, the compiler", ["dataflow.client"]),
    ("eager: eager execution, tracing, AutoGraph, lazy graphs", ["dataflow.eager"]),
    ("io: saved graphs, GraphDef, events, checkpoints", ["dataflow.io"]),
    ("data: input pipelines (tf.data)", ["dataflow.data"]),
    ("distribute: partitions, devices, clusters", ["dataflow.distribute"]),
    ("nn: layers, RNNs, losses, metrics", ["dataflow.nn"]),
    ("training: optimizers, hooks, sessions that train", ["dataflow.training"]),
    ("render: pictures of graphs", ["dataflow.render"]),
    ("debug", ["dataflow.debug"]),
    ("compat: TensorFlow's namespaces and spellings", ["dataflow.compat"]),
    ("the package's face", ["dataflow", "dataflow.__main__"]),
]
LAYER_NAMES = {number: name for number, (name, _) in enumerate(LAYER_ORDER)}
LAYERS = {prefix: number for number, (_, prefixes) in enumerate(LAYER_ORDER) for prefix in prefixes}


def layer_of(module: str) -> int:
    """The layer of ``module``; KeyError for a module no entry places.  The package root
    ``dataflow`` places itself only: a module beside it at the top is in no layer."""
    name = module
    while name:
        if name in LAYERS and (name != "dataflow" or module == name):
            return LAYERS[name]
        name = name.rpartition(".")[0]
    raise KeyError(module)


def modules(root: str = ROOT) -> dict[str, str]:
    """``{dotted module name: file path}`` of every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for directory, dirnames, files in os.walk(os.path.join(root, package)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for file in files:
                if not file.endswith(".py"):
                    continue
                path = os.path.join(directory, file)
                name = os.path.relpath(path, root)[: -len(".py")].replace(os.sep, ".")
                found[name.removesuffix(".__init__")] = path
    return found


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    in_function: bool

    def __str__(self) -> str:
        where = "inside a function" if self.in_function else "at module level"
        return f"{self.importer} -> {self.imported} (line {self.line}, {where})"


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                skipped.update(id(inner) for inner in ast.walk(statement))
    return skipped


def _imported_names(node, importer: str, is_package: bool, known) -> list[str]:
    """The modules of the three packages that one import statement loads by name."""
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        if node.level:
            parts = importer.split(".") if is_package else importer.split(".")[:-1]
            base = ".".join(parts[: len(parts) - node.level + 1])
            source = f"{base}.{node.module}" if node.module else base
        else:
            source = node.module
        candidates = [
            f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
            for alias in node.names
        ]
    result = []
    for name in candidates:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != importer:
            result.append(name)
    return result


def import_edges(root: str = ROOT) -> list[Import]:
    """Every import between two modules of the three packages under ``root`` (one per
    statement and module imported)."""
    known = modules(root)
    edges = []
    for importer, path in sorted(known.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        skipped = _type_checking_only(tree)
        functions = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        inside = {id(inner) for f in functions for inner in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in skipped:
                continue
            is_package = path.endswith("__init__.py")
            for imported in _imported_names(node, importer, is_package, known):
                edges.append(Import(importer, imported, node.lineno, id(node) in inside))
    return edges


def circles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    graph = defaultdict(set)
    for edge in edges:
        graph[edge.importer].add(edge.imported)
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(set(graph) | {e.imported for e in edges}):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def upward_pairs(edges: list[Import]) -> set[str]:
    """``"importer -> imported"`` of each import that goes up a layer."""
    return {
        f"{edge.importer} -> {edge.imported}"
        for edge in edges
        if layer_of(edge.importer) < layer_of(edge.imported)
    }


def layer_picture_dot() -> str:
    """The layers as a Graphviz DOT graph: a column, highest layer on top, and an arrow from
    each layer to every layer it imports from (its width grows with the number of imports),
    drawn from the source.  Every arrow points down."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    members: dict[int, int] = defaultdict(int)
    for name in modules():
        members[layer_of(name)] += 1
    for edge in import_edges():
        a, b = layer_of(edge.importer), layer_of(edge.imported)
        if a != b:
            counts[(a, b)] += 1
    lines = [
        "digraph layers {",
        "  rankdir=TB; nodesep=0.3; ranksep=0.22;",
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#5b7aa8",'
        ' fontname="Helvetica", fontsize=11, width=4.6];',
        '  edge [color="#8a9bb0", arrowsize=0.5];',
    ]
    numbers = sorted(LAYER_NAMES, reverse=True)
    for number in numbers:
        title, _, role = LAYER_NAMES[number].partition(": ")
        label = f"{number}  {title}" + (f"\\n{role}" if role else "")
        count = members[number]
        label += f"\\n{count} module" + ("s" if count != 1 else "")
        lines.append(f'  L{number} [label="{label}"];')
    # The column: each layer right above the next one down.
    chain = " -> ".join(f"L{n}" for n in numbers)
    lines.append(f"  {chain} [style=invis, weight=100];")
    for (a, b), n in sorted(counts.items()):
        width = 0.4 + min(n, 400) / 100
        lines.append(f'  L{a} -> L{b} [constraint=false, penwidth={width:.2f}, tooltip="{n}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import subprocess
    import sys

    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "layers.svg")
    dot = layer_picture_dot()
    with open(target.removesuffix(".svg") + ".gv", "w", encoding="utf-8") as f:
        f.write(dot)
    subprocess.run(["dot", "-Tsvg", "-o", target], input=dot, text=True, check=True)
    print(target)
