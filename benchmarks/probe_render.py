"""The size of the pictures of big graphs: prints pixels per view of two training steps; asserts
nothing.

    python benchmarks/probe_render.py                 # the engine render picks on this machine
    python benchmarks/probe_render.py --engine wasm   # or: system

For the training step of ``examples/train_mlp_digits.py`` (a two-layer perceptron with Adam)
and of ``examples/train_rnn_sine.py`` (a recurrent network in a ``while_loop``, its backward
loop, Adam), each view is rendered to PNG and its width x height in pixels printed, with the
number of nodes the picture has (ops and collapsed boxes) and the time to build and draw it:

- everything open: ``max_depth=None``, what ``df.render(train_op)`` drew before big graphs were
  collapsed by default.
- collapse_scopes=True: every outermost name scope as one node.
- default: ``max_depth="auto"``, the view ``df.render(train_op)`` draws now.
- expand=...: the default with one block opened by name (the Adam update of the MLP's hidden
  weights, the RNN's forward loop).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re
import struct
import sys
import tempfile
import time

import dataflow as df
from dataflow.render.engine import resolve_engine

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def png_size(path: pathlib.Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def node_count(source: str) -> int:
    """Nodes declared in DOT text (ops and collapsed boxes; not edges or attribute lines)."""
    declared = re.findall(r'^\s*("(?:[^"\\]|\\.)*"|[^\s\[\];{}]+) \[', source, flags=re.M)
    return sum(1 for d in declared if d not in ("graph", "node", "edge"))


def probe(title: str, train_op, expand: str, engine: str, directory: pathlib.Path) -> None:
    views = [
        ("everything open", {"max_depth": None}),
        ("collapse_scopes=True", {"collapse_scopes": True, "max_depth": None}),
        ("default", {}),
        (f"expand={expand!r}", {"expand": [expand]}),
    ]
    print(f"\n{title}")
    for name, options in views:
        path = directory / f"{len(name)}_{abs(hash(name))}.png"
        start = time.perf_counter()
        picture = df.render(train_op, path, engine=engine, **options)
        seconds = time.perf_counter() - start
        width, height = png_size(path)
        print(
            f"  {name:<42} {width:>6} x {height:<6} px   {node_count(picture.source):>4} nodes"
            f"   {seconds:6.2f} s"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["auto", "system", "wasm"], default=None)
    args = parser.parse_args(argv)
    engine = resolve_engine(args.engine)
    print(f"engine: {engine}")
    mlp, rnn = load_example("train_mlp_digits"), load_example("train_rnn_sine")
    with tempfile.TemporaryDirectory() as directory:
        for title, example, expand in [
            ("MLP training step (examples/train_mlp_digits.py)", mlp, "Adam/update_hidden/weights"),
            ("RNN training step (examples/train_rnn_sine.py)", rnn, "rnn/over_time"),
        ]:
            with df.Graph().as_default() as graph:
                model = example.build_model()
                drawn = node_count(df.render(model.train_op, max_depth=None).source)
                title += f": {len(graph.get_operations())} ops in the graph, {drawn} drawn"
                probe(title, model.train_op, expand, engine, pathlib.Path(directory))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
