"""How the work of tracing a df.function grows with the function's length.

As `tests/test_scale.py` does for graphs: each test counts the work of one trace (lines of the
runtime's Python executed and comparisons made by linear scans, `work_counter.count_work`) for
a function of n ops and one of 2n, and requires the ratio to stay near 2 (linear), not near 4
(quadratic).  Nothing is timed; ``benchmarks/bench_eager.py`` prints trace times by length.
"""

from __future__ import annotations

import numpy as np
from work_counter import count_work

import dataflow as df

# Work for 2n ops over work for n ops: 2 for linear work, 4 for quadratic work.  The margin
# takes in the fixed cost of a trace (its AutoGraph conversion, the signature).
LINEAR = 2.4


def growth(work_of_size, size: int) -> float:
    return work_of_size(2 * size) / work_of_size(size)


def trace_work(python_function, *arguments) -> int:
    """The work of the first trace of ``python_function`` for ``arguments``."""
    function = df.function(python_function)
    return count_work(lambda: function.get_concrete_function(*arguments))


def test_tracing_a_chain_of_ops_is_linear():
    def chain_of(steps):
        def chain(x):
            for _ in range(steps):
                x = df.tanh(x * 0.5)
            return x

        return trace_work(chain, df.TensorSpec([4], df.float32))

    assert growth(chain_of, 150) < LINEAR


def test_tracing_many_stateful_ops_in_program_order_is_linear():
    """Automatic control dependencies chain every variable write after the one before."""

    def writes(count):
        with df.eager_mode():
            counter = df.Variable(0.0)

            def increments(x):
                for _ in range(count):
                    counter.assign_add(x)
                return counter.read_value()

            return trace_work(increments, df.TensorSpec([], df.float32))

    assert growth(writes, 100) < LINEAR


def test_tracing_a_function_of_many_arguments_and_captures_is_linear():
    def arguments_and_captures(count):
        with df.eager_mode():
            captured = [df.constant(float(i)) for i in range(count)]

            def total(values):
                return df.add_n([v * c for v, c in zip(values, captured)])

            values = [np.float32(i) for i in range(count)]
            return trace_work(total, [df.constant(v) for v in values])

    assert growth(arguments_and_captures, 100) < LINEAR
