"""Dynamic against static execution: prints figures side by side, in one run.

    python benchmarks/bench_eager.py            # every figure
    python benchmarks/bench_eager.py --quick    # fewer repeats and sizes (CI speed)

One function per figure; `main` prints them in turn.

1. `lazy_chain_figure`: a chain of 30 small elementwise ops at several array sizes, run by
   numpy directly (the floor), eagerly (one op at a time), lazily (`df.lazy_mode`: recorded,
   then one run with the graph passes, which fuse the chain into one kernel), and as a graph
   built once and run by a Session (what a traced function runs).  Lazy mode pays for
   recording and planning on every run, so it wins only once the arrays are large enough for
   fusion (no intermediate arrays) to outweigh that.
2. `training_loop_figure`: an MLP's training step (forward, gradients, SGD update) on random
   data, for a range of layer widths: eagerly (`df.GradientTape`), under `df.function`, lazily
   and as a graph run by a Session; time per step, and where the fastest way changes.
   PyTorch eager is an optional row when ``torch`` is importable.  A way whose parts are not
   in this build prints ``n/a``.

Timings are medians over repeats, every way timed in turn within a round; the machine may be
shared, so read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse

import numpy as np

import dataflow as df


def _table(header: list, rows: list) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)) for row in rows]
    head = "  ".join(str(cell).rjust(width) for cell, width in zip(header, widths))
    return "\n".join([head, "-" * len(head), *lines])


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


# -- 1. a chain of small elementwise ops: eager, lazy, graph ----------------------------------
def elementwise_chain(x, m=df):
    """30 elementwise ops: scale, shift, clamp, fold and squash, six times over."""
    for k in range(6):
        x = m.multiply(x, 0.999 - k * 1e-3)
        x = m.add(x, 0.25)
        x = m.maximum(x, -4.0)
        x = m.abs(x)
        x = m.tanh(x)
    return x


def _chain_row(size: int, repeats: int) -> list:
    data = np.random.default_rng(0).standard_normal(size)
    expected = elementwise_chain(data, np)

    def eager():
        with df.eager_mode():
            return elementwise_chain(df.constant(data)).numpy()

    def lazy():
        with df.lazy_mode():
            return elementwise_chain(df.constant(data)).numpy()

    graph = df.Graph()
    with graph.as_default():
        fed = df.placeholder(df.float64, [size])
        result = elementwise_chain(fed)
    with df.Session(graph=graph) as session, df.lazy_mode() as recording:

        def static():
            return session.run(result, {fed: data})

        def lazy_again():  # in one lazy_mode block: the chain's plan is made once
            return elementwise_chain(df.constant(data)).numpy()

        for way in (eager, lazy, lazy_again, static):
            np.testing.assert_allclose(way(), expected, rtol=1e-12)
        floor, eager_t, lazy_t, again_t, static_t = paired_median_times(
            lambda: elementwise_chain(data, np), eager, lazy, lazy_again, static, repeats=repeats
        )
        assert recording.plan_reuses == recording.materialisations - 1
    return [
        f"{size:,}",
        _ms(floor),
        _ms(eager_t),
        _ms(lazy_t),
        _ms(again_t),
        _ms(static_t),
        f"{eager_t / again_t:.2f}",
        f"{again_t / static_t:.2f}",
    ]


def lazy_chain_figure(quick: bool) -> str:
    sizes = (1, 1_000, 100_000) if quick else (1, 1_000, 100_000, 1_000_000)
    repeats = 5 if quick else 15
    rows = [_chain_row(size, repeats) for size in sizes]
    header = [
        "elements",
        "numpy",
        "eager",
        "lazy, new",
        "lazy, again",
        "graph",
        "eager/again",
        "again/graph",
    ]
    return (
        "1. A chain of 30 elementwise ops (float64), median time per evaluation\n"
        + _table(header, rows)
        + "\n   lazy, new = a new lazy_mode block each time: record, plan with the passes (the"
        "\n     chain fuses into one kernel), run;"
        "\n   lazy, again = the chain recorded again in one block: record, then the plan made"
        "\n     the first time runs with the new data;"
        "\n   graph = the chain built once as a graph, a Session run of its cached plan."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and sizes")
    args = parser.parse_args()
    print(describe_machine("5" if args.quick else "15"))
    print()
    print(lazy_chain_figure(args.quick))


if __name__ == "__main__":
    main()
