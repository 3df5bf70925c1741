"""What source conversion costs: prints figures, in one run.

    python benchmarks/bench_autograph.py            # every figure
    python benchmarks/bench_autograph.py --quick    # fewer repeats

1. `section_conversion_time`: converting a function (read its source, rewrite the tree, compile)
   against its number of statements; a conversion happens once per function (it is cached).
2. `section_python_mode_overhead`: a converted function called on Python numbers (every
   statement decides at run time, finds a Python value and runs as Python) against the same
   function unconverted: the price of deciding at run time.
3. `section_staged_against_hand_written`: building the graph of a converted loop against a
   hand-written `while_loop` of the same computation, and one ``Session.run`` of each.

Timings are medians over repeats, every way timed in turn within a round; the machine may be
shared, so read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import importlib.util
import os
import tempfile

import dataflow as df
from dataflow.eager import autograph
from dataflow.eager.autograph import conversion


def _function_of_length(statements: int, directory: str):
    """A function with ``statements`` if-statements in a loop, from a real file."""
    lines = ["def program(n, x):", "    total = 0", "    for i in range(n):"]
    for k in range(statements):
        lines += [f"        if i % {k + 2} == 0:", f"            total = total + x * {k}"]
    lines += ["    return total", ""]
    path = os.path.join(directory, f"program_{statements}.py")
    with open(path, "w") as file:
        file.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location(f"program_{statements}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def section_conversion_time(repeats: int, directory: str) -> None:
    print("1. conversion time (source -> tree -> rewritten -> compiled), once per function")
    print(f"   {'if-statements':>13} {'ms':>8} {'us per statement':>17}")
    for statements in (1, 4, 16, 64):
        program = _function_of_length(statements, directory)

        def convert(program=program):
            conversion._converted.pop(program, None)
            autograph.to_graph(program)

        (seconds,) = paired_median_times(convert, repeats=repeats)
        per = seconds / statements * 1e6
        print(f"   {statements:>13} {seconds * 1e3:>8.2f} {per:>17.1f}")


def section_python_mode_overhead(repeats: int, directory: str) -> None:
    print("2. a converted function called on Python numbers, against the unconverted one")
    program = _function_of_length(4, directory)
    converted = autograph.to_graph(program)
    assert converted(20, 3) == program(20, 3)
    plain, staged = paired_median_times(
        lambda: program(20, 3), lambda: converted(20, 3), repeats=repeats
    )
    print(f"   plain {plain * 1e6:8.1f} us   converted {staged * 1e6:8.1f} us   "
          f"ratio {staged / plain:5.1f}x  (20 iterations, 4 ifs each)")  # fmt: skip


def section_staged_against_hand_written(repeats: int) -> None:
    print("3. a converted loop against the hand-written while_loop of the same computation")

    def converted_sum(n):
        total = 0
        i = 0
        while i < n:
            total += i * i
            i += 1
        return total

    def build_converted():
        with df.Graph().as_default() as graph:
            n = df.placeholder(df.int32, [])
            return graph, n, autograph.to_graph(converted_sum)(n)

    def build_by_hand():
        with df.Graph().as_default() as graph:
            n = df.placeholder(df.int32, [])
            _, total = df.while_loop(
                lambda i, total: i < n,
                lambda i, total: (i + 1, total + i * i),
                [df.constant(0), df.constant(0)],
            )
            return graph, n, total

    build_a, build_b = paired_median_times(build_converted, build_by_hand, repeats=repeats)
    print(f"   build: converted {build_a * 1e3:7.2f} ms   by hand {build_b * 1e3:7.2f} ms   "
          f"ratio {build_a / build_b:4.2f}x")  # fmt: skip
    runs = []
    for graph, n, total in (build_converted(), build_by_hand()):
        session = df.Session(graph=graph)
        session.run(total, {n: 100})
        runs.append((session, n, total))
    (sa, na, ta), (sb, nb, tb) = runs
    assert sa.run(ta, {na: 100}) == sb.run(tb, {nb: 100})
    run_a, run_b = paired_median_times(
        lambda: sa.run(ta, {na: 100}), lambda: sb.run(tb, {nb: 100}), repeats=repeats
    )
    print(f"   run (100 iterations): converted {run_a * 1e3:7.2f} ms   by hand "
          f"{run_b * 1e3:7.2f} ms   ratio {run_a / run_b:4.2f}x")  # fmt: skip
    print(f"   ops: converted {len(runs[0][2].graph.get_operations())}, "
          f"by hand {len(runs[1][2].graph.get_operations())}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 5 if parser.parse_args().quick else 25
    print(describe_machine(repeats))
    with tempfile.TemporaryDirectory() as directory:
        section_conversion_time(repeats, directory)
        section_python_mode_overhead(repeats * 8, directory)
    section_staged_against_hand_written(repeats)


if __name__ == "__main__":
    main()
