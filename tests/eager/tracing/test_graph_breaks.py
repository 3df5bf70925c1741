"""Graph breaks: a statement needing a tensor value runs eagerly, the rest as graphs; guards."""

import inspect

import numpy as np
import pytest

import dataflow as df

SCALE = 2.0


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def _line_of(function, text: str) -> str:
    """The file:line of the first line of ``function`` that contains ``text``."""
    lines, first = inspect.getsourcelines(function)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(function)}:{first + offset}"


def _scaled_then_branch_on_value(x):
    y = x * 2.0 + 1.0
    if df.reduce_sum(y) > 10.0:
        z = y * 10.0
    else:
        z = y - 1.0
    return z + x


def test_statement_needing_a_value_runs_eagerly_and_the_rest_as_graphs():
    broken = df.function(_scaled_then_branch_on_value, experimental_graph_breaks=True)
    for values in ([1.0, 2.0], [3.0, 4.0], [0.0, 0.5]):
        x = df.constant(values)
        got, want = broken(x), _scaled_then_branch_on_value(x)
        np.testing.assert_allclose(got.numpy(), want.numpy())
    (only_break,) = broken.graph_breaks()
    assert only_break.location == _line_of(_scaled_then_branch_on_value, "if df.reduce_sum(")
    assert "bool()" in only_break.why


def test_a_python_value_made_at_a_break_is_a_guard_of_the_segments_after_it():
    @df.function(experimental_graph_breaks=True)
    def thresholded(x):
        total = float(df.reduce_sum(x))
        return x * 2.0 if total > 1.0 else x * 3.0

    assert thresholded(df.constant([1.0, 1.0])).numpy().tolist() == [2.0, 2.0]
    assert thresholded(df.constant([0.0, 0.5])).numpy().tolist() == [0.0, 1.5]


def test_later_calls_replay_the_segments_without_tracing_again():
    broken = df.function(_scaled_then_branch_on_value, experimental_graph_breaks=True)
    broken(df.constant([1.0, 2.0]))
    traces = broken.experimental_get_tracing_count()
    big = broken(df.constant([5.0, 6.0]))
    small = broken(df.constant([0.0, 1.0]))
    np.testing.assert_allclose(big.numpy(), [115.0, 136.0])
    np.testing.assert_allclose(small.numpy(), [0.0, 3.0])
    assert broken.experimental_get_tracing_count() == traces


def _numpy_call(x):
    return x.numpy()


def _float_call(x):
    return float(x)


def _int_call(x):
    return int(x)


def _python_if(x):
    if x > 0:
        return 1
    return -1


def _numpy_conversion(x):
    return np.asarray(x) * 2


def _print_value(x):
    print("x is", x)


def _range_of(x):
    return list(range(x))


@pytest.mark.parametrize(
    "function, why",
    [
        (_numpy_call, ".numpy()"),
        (_float_call, "float()"),
        (_int_call, "int()"),
        (_python_if, "bool()"),
        (_numpy_conversion, "numpy array"),
        (_print_value, "print"),
        (_range_of, "index"),
    ],
)
def test_each_kind_of_value_use_is_a_break(function, why):
    broken = df.function(function, experimental_graph_breaks=True)
    x = df.constant(3)
    got, want = broken(x), function(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    (found,) = broken.graph_breaks()
    assert why in found.why


def test_python_work_on_python_values_does_not_break(capsys):
    @df.function(experimental_graph_breaks=True)
    def unrolled(x, steps):
        for i in range(steps):
            x = x * 2.0 + i
        print("steps:", steps)
        return x

    assert unrolled(df.constant(1.0), 3).numpy() == 12.0
    assert unrolled.graph_breaks() == []
    assert "steps: 3" in capsys.readouterr().out


def test_changing_a_global_the_graph_baked_in_retraces():
    global SCALE

    @df.function(experimental_graph_breaks=True)
    def scaled(x):
        return x * SCALE

    try:
        assert scaled(df.constant(1.0)).numpy() == 2.0
        SCALE = 3.0
        assert scaled(df.constant(1.0)).numpy() == 3.0
        assert scaled.experimental_get_tracing_count() == 2
        assert scaled(df.constant(5.0)).numpy() == 15.0
        assert scaled.experimental_get_tracing_count() == 2
    finally:
        SCALE = 2.0


def test_plain_df_function_keeps_the_global_of_its_trace_as_tensorflow_does():
    global SCALE

    @df.function
    def scaled(x):
        return x * SCALE

    try:
        assert scaled(df.constant(1.0)).numpy() == 2.0
        SCALE = 3.0
        assert scaled(df.constant(1.0)).numpy() == 2.0
    finally:
        SCALE = 2.0


def test_changing_a_closure_scalar_retraces():
    offset = 1.0

    @df.function(experimental_graph_breaks=True)
    def shifted(x):
        return x + offset

    assert shifted(df.constant(1.0)).numpy() == 2.0
    offset = 10.0
    assert shifted(df.constant(1.0)).numpy() == 11.0


def test_finding_a_break_runs_no_op_twice():
    counter = df.Variable(0.0)

    @df.function(experimental_graph_breaks=True)
    def counted(x):
        counter.assign_add(1.0)
        seen = x.numpy()
        counter.assign_add(10.0)
        return seen

    assert float(counted(df.constant(4.0))) == 4.0
    assert counter.numpy() == 11.0
    counted(df.constant(4.0))
    assert counter.numpy() == 22.0


def test_gradient_tape_sees_through_segments_and_breaks():
    weight = df.Variable(3.0)

    def model(x):
        y = x * weight
        sign = 1.0 if y.numpy() > 0 else -1.0
        return y * y * sign

    broken = df.function(model, experimental_graph_breaks=True)
    for value in (2.0, -2.0):
        x = df.constant(value)
        with df.GradientTape() as tape:
            got = broken(x)
        with df.GradientTape() as reference:
            want = model(x)
        assert got.numpy() == want.numpy()
        assert tape.gradient(got, weight).numpy() == reference.gradient(want, weight).numpy()


def test_error_in_a_segment_names_the_users_line():
    def mismatched(x):
        y = x * 2.0
        return df.matmul(y, df.ones([3, 3]))

    broken = df.function(mismatched, experimental_graph_breaks=True)
    with pytest.raises(ValueError, match=_line_of(mismatched, "df.matmul(")):
        broken(df.ones([2, 2]))


def test_a_lambda_cannot_be_split():
    with pytest.raises(ValueError, match="lambda"):
        df.function(lambda x: x, experimental_graph_breaks=True)


def test_called_while_a_graph_is_built_it_is_traced_whole():
    def doubled(x):
        return x * 2.0

    broken = df.function(doubled, experimental_graph_breaks=True)
    with df.Graph().as_default() as graph:
        x = df.placeholder(df.float32, [2])
        y = broken(x)
        with df.Session(graph=graph) as session:
            assert session.run(y, {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]
        # Traced whole, a statement needing a value is the usual error, not a break.
        with pytest.raises(TypeError, match="float"):
            df.function(_float_call, experimental_graph_breaks=True)(x)
