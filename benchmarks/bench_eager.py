"""Dynamic against static execution: prints figures side by side, in one run.

    python benchmarks/bench_eager.py            # every figure
    python benchmarks/bench_eager.py --quick    # fewer repeats and sizes (CI speed)

One function per figure; `main` prints them in turn.

0. `section_eager_per_op_overhead`: one op on scalars and on small arrays, eagerly, against
   the numpy call (median microseconds per op, ratio to the numpy floor), and one
   ``Session.run`` of the same scalar add for scale.
0b. `bench_function` (tracing): the call overhead of a traced 10-op function after tracing
   (its `ConcreteFunction` run through its cached plan) against one ``Session.run`` of the
   same 10-op graph, fed the same value (target: within 2x); and trace time against the
   function's length (ops per trace): it should grow linearly, so the time per op stays
   about flat.
0c. `bench_graph_breaks` (breaks): a 20-op function with one ``.numpy()`` in the middle,
   called eagerly op by op, through ``df.function(experimental_graph_breaks=True)`` (two
   traced segments and the breaking statement), and the same 20 ops with no break under a
   plain ``df.function``, for scale.
Timings are medians over repeats, every way timed in turn within a round; the machine may be
shared, so read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import statistics
import time
import timeit

import numpy as np

import dataflow as df


# -- 0. eager per-op overhead ----------------------------------------------------------------
def _median_us(fn, number: int = 2000, repeat: int = 7) -> float:
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def section_eager_per_op_overhead() -> None:
    """One op on scalars and on small arrays, eagerly, against the numpy call."""
    print("== eager per-op overhead (median us per op; ratio to the numpy floor) ==")
    cases = [
        ("scalar add", np.float32(1.5), np.float32(2.5)),
        ("4x4 add", np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)),
        ("64x64 add", np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)),
    ]
    with df.eager_mode():
        for label, a, b in cases:
            ta, tb = df.constant(a), df.constant(b)
            floor = _median_us(lambda a=a, b=b: np.add(a, b))
            op = _median_us(lambda ta=ta, tb=tb: df.add(ta, tb))
            operator = _median_us(lambda ta=ta, tb=tb: ta + tb)
            print(
                f"{label:>10}: numpy {floor:6.2f}   df.add {op:6.2f} ({op / floor:5.1f}x)   "
                f"a + b {operator:6.2f} ({operator / floor:5.1f}x)"
            )
        ta = df.constant(np.float32(1.5))
        converted = _median_us(lambda: ta * 2.0)
        print(f"{'scalar*2.0':>10}: with a Python operand converted: {converted:6.2f}")
        sess_graph = df.Graph()
    with sess_graph.as_default():
        a = df.constant(np.float32(1.5))
        total = a + a
        with df.Session() as sess:
            sess.run(total)
            run = _median_us(lambda: sess.run(total), number=500)
    print(f"{'for scale':>10}: one Session.run of the same scalar add: {run:6.2f}")


# -- 0b. df.function call overhead and trace time ----------------------------------------------
def _ten_ops(x):
    """Ten small elementwise ops on ``x``."""
    y = x
    for i in range(5):
        y = df.tanh(y * (0.5 + i))
    return y


def bench_function(repeats: int) -> None:
    """df.function: call overhead against Session.run, and trace time against length."""
    print("-- df.function --")
    value = np.ones(4, np.float32)

    traced = df.function(_ten_ops)
    concrete = traced.get_concrete_function(df.TensorSpec([4], df.float32))
    computing = [op for op in concrete.graph.get_operations() if op.inputs]
    assert len(computing) == 10, [op.type for op in computing]

    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [4])
        y = _ten_ops(x)
    session = df.Session(graph=graph)
    call_time, run_time = paired_median_times(
        lambda: concrete._run([value]), lambda: session.run(y, {x: value}), repeats=repeats
    )
    print(
        f"10-op function call: {call_time * 1e6:8.1f} us   Session.run of the same graph: "
        f"{run_time * 1e6:8.1f} us   ratio {call_time / run_time:.2f} (target <= 2)"
    )
    with df.eager_mode():
        eager_value = df.constant(value)
        traced(eager_value)
        eager_call, run_time = paired_median_times(
            lambda: traced(eager_value), lambda: session.run(y, {x: value}), repeats=repeats
        )
    print(
        f"10-op function called eagerly (signature, run, EagerTensor out): "
        f"{eager_call * 1e6:8.1f} us   ratio to Session.run {eager_call / run_time:.2f}"
    )

    print("trace time by function length:")
    for length in (10, 100, 1000):

        def long_function(x, length=length):
            for _ in range(length // 2):
                x = df.tanh(x * 0.5)
            return x

        samples = []
        for _ in range(max(3, repeats // 50)):
            fn = df.function(long_function)
            start = time.perf_counter()
            fn.get_concrete_function(df.TensorSpec([4], df.float32))
            samples.append(time.perf_counter() - start)
        median = sorted(samples)[len(samples) // 2]
        print(f"  {length:5d} ops: {median * 1e3:8.2f} ms   {median / length * 1e6:6.1f} us per op")


def _twenty_ops_with_a_break(x):
    """Twenty small ops, with one statement that needs a value between the two halves."""
    y = _ten_ops(x)
    peek = y.numpy()
    return _ten_ops(y) + peek


def _twenty_ops(x):
    return _ten_ops(_ten_ops(x)) + 1.0


def bench_graph_breaks(repeats: int) -> None:
    """df.function with graph breaks against eager calls and a break-free trace."""
    print("-- graph breaks --")
    with df.eager_mode():
        value = df.constant(np.ones(4, np.float32))
        broken = df.function(_twenty_ops_with_a_break, experimental_graph_breaks=True)
        whole = df.function(_twenty_ops)
        eager_time, broken_time, whole_time = paired_median_times(
            lambda: _twenty_ops_with_a_break(value),
            lambda: broken(value),
            lambda: whole(value),
            repeats=max(20, repeats // 10),
        )
    print(
        f"20 ops, one .numpy() between: eagerly {eager_time * 1e6:8.1f} us   with graph breaks "
        f"{broken_time * 1e6:8.1f} us ({broken_time / eager_time:.2f}x eager; "
        f"{len(broken.graph_breaks())} break)   no break, one trace {whole_time * 1e6:8.1f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 200 if args.quick else 2000
    print(describe_machine(repeats))
    section_eager_per_op_overhead()
    bench_function(repeats)
    bench_graph_breaks(repeats)


if __name__ == "__main__":
    main()
