"""Each construct AutoGraph converts: the graph it stages on graph tensors (cond/while ops),
the plain Python it runs on Python values, and the same values as the unconverted function."""

import io

import numpy as np
import pytest

import dataflow as df
from dataflow.eager import autograph


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def _op_types(graph):
    return {op.type for op in graph.get_operations()}


def _run(fetches, feeds):
    with df.Session() as sess:
        return sess.run(fetches, feeds)


def _scalar(dtype=df.int32, name=None):
    return df.placeholder(dtype, [], name=name)


# -- if --------------------------------------------------------------------------------------------
def sign_of(x):
    if x > 0:
        y = 1
    elif x < 0:
        y = -1
    else:
        y = 0
    return y


def test_if_on_a_graph_tensor_stages_a_cond_with_the_same_values(fresh_graph):
    x = _scalar()
    y = autograph.to_graph(sign_of)(x)
    assert {"Switch", "Merge"} <= _op_types(fresh_graph)
    for value in (5, -3, 0):
        assert _run(y, {x: value}) == sign_of(value)


def test_if_on_a_python_value_runs_python_and_builds_no_cond(fresh_graph):
    converted = autograph.to_graph(sign_of)
    assert [converted(v) for v in (5, -3, 0)] == [1, -1, 0]
    assert fresh_graph.get_operations() == []


def test_a_python_condition_never_runs_the_other_branch():
    def pick(x, p):
        if p:
            y = x * 2
        else:
            raise AssertionError("the untaken branch ran")
        return y

    assert autograph.to_graph(pick)(3, True) == 6


def test_a_name_assigned_in_both_branches_keeps_each_branchs_dtype_check():
    def mixed(x):
        if x > 0:
            y = df.cast(x, df.float32)
        else:
            y = x
        return y

    with pytest.raises(TypeError, match=r"'y' is float32 in the true branch but int32"):
        autograph.to_graph(mixed)(_scalar())


# -- while -----------------------------------------------------------------------------------------
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def test_while_on_a_graph_tensor_stages_a_while_loop(fresh_graph):
    n = _scalar()
    steps = autograph.to_graph(collatz_steps)(n)
    assert {"Enter", "Exit", "NextIteration", "LoopCond"} <= _op_types(fresh_graph)
    for value in (1, 6, 27):
        assert _run(steps, {n: value}) == collatz_steps(value)


def test_while_on_python_values_runs_python(fresh_graph):
    assert autograph.to_graph(collatz_steps)(27) == collatz_steps(27) == 111
    assert fresh_graph.get_operations() == []


def test_while_stages_from_the_state_reached_when_its_test_becomes_a_tensor(fresh_graph):
    def count_up(limit):
        i = 0
        total = 0
        while i < 3 or total < limit:
            total += i
            i += 1
        return total

    limit = _scalar()
    total = autograph.to_graph(count_up)(limit)
    assert "LoopCond" in _op_types(fresh_graph)
    for value in (0, 10, 50):
        assert _run(total, {limit: value}) == count_up(value)


# -- for -------------------------------------------------------------------------------------------
def sum_of_odd(n):
    total = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        total += i
    return total


def test_for_over_range_of_a_tensor_stages_a_loop_and_continue_skips(fresh_graph):
    n = _scalar()
    total = autograph.to_graph(sum_of_odd)(n)
    assert "LoopCond" in _op_types(fresh_graph)
    for value in (0, 1, 7, 10):
        assert _run(total, {n: value}) == sum_of_odd(value)


def test_for_over_range_with_start_and_negative_step(fresh_graph):
    def countdown(n):
        seen = 0
        for i in range(n, 0, -2):
            seen = seen * 10 + i
        return seen

    n = _scalar()
    seen = autograph.to_graph(countdown)(n)
    for value in (0, 5, 6):
        assert _run(seen, {n: value}) == countdown(value)


def test_for_over_a_tensor_iterates_its_first_dimension():
    def row_sums_max(m):
        best = -1000.0
        for row in m:
            s = df.reduce_sum(row)
            if s > best:
                best = s
        return best

    m = df.placeholder(df.float32, [None, 3])
    best = autograph.to_graph(row_sums_max)(m)
    values = np.array([[1, 2, 3], [7, 0, 0], [-1, -1, -1]], np.float32)
    assert _run(best, {m: values}) == pytest.approx(7.0)


def test_for_over_a_tensor_array_reads_each_element():
    def total_of(array):
        total = 0.0
        for value in array:
            total += value
        return total

    array = df.TensorArray(df.float32, size=3)
    for index, value in enumerate((1.5, 2.0, 4.0)):
        array = array.write(index, value)
    assert _run(autograph.to_graph(total_of)(array), {}) == pytest.approx(7.5)


def test_break_leaves_a_staged_loop_and_the_rest_of_the_body_is_skipped():
    def first_square_above(limit):
        found = -1
        for i in range(limit):
            if i * i > limit:
                found = i
                break
            found = -2
        return found

    limit = _scalar()
    found = autograph.to_graph(first_square_above)(limit)
    for value in (0, 1, 5, 30):
        assert _run(found, {limit: value}) == first_square_above(value)


def test_for_else_runs_only_without_break():
    def search(n, target):
        where = -1
        for i in range(n):
            if i == target:
                break
        else:
            where = n
        return where

    n, target = _scalar(), _scalar()
    where = autograph.to_graph(search)(n, target)
    for a, b in ((5, 2), (5, 9)):
        assert _run(where, {n: a, target: b}) == search(a, b)


def test_return_inside_a_loop_and_a_branch():
    def index_of(n, target):
        for i in range(n):
            if i == target:
                return i * 10
        if n > 100:
            return -100
        return -1

    n, target = _scalar(), _scalar()
    result = autograph.to_graph(index_of)(n, target)
    for a, b in ((5, 3), (5, 7), (0, 0)):
        assert _run(result, {n: a, target: b}) == index_of(a, b)


# -- boolean operators -----------------------------------------------------------------------------
def test_and_evaluates_its_right_side_only_when_the_left_is_true():
    def safe_ratio_positive(a, b):
        return b != 0 and a // b > 0

    a, b = _scalar(), _scalar()
    result = autograph.to_graph(safe_ratio_positive)(a, b)
    # Integer division by zero fails in the kernel, so the right side must not run at b == 0.
    assert _run(result, {a: 5, b: 0}) == np.False_
    assert _run(result, {a: 5, b: 2}) == np.True_
    assert autograph.to_graph(safe_ratio_positive)(5, 0) is False


def test_or_and_not_on_tensors_match_python():
    def either(a, b):
        return not (a > 0) or b > 0

    a, b = _scalar(), _scalar()
    result = autograph.to_graph(either)(a, b)
    for x, y in ((1, 1), (1, -1), (-1, -1)):
        assert bool(_run(result, {a: x, b: y})) == either(x, y)


def test_conditional_expression_on_a_tensor_stages_a_cond(fresh_graph):
    def magnitude(x):
        return x if x > 0 else -x

    x = _scalar()
    result = autograph.to_graph(magnitude)(x)
    assert "Merge" in _op_types(fresh_graph)
    assert _run(result, {x: -4}) == 4


# -- print, assert, lists --------------------------------------------------------------------------
def test_print_of_a_tensor_prints_when_the_result_is_computed():
    stream = io.StringIO()

    def noisy(x):
        y = x + 1
        print("y is", y, output_stream=stream)
        return y * 2

    x = _scalar()
    result = autograph.to_graph(noisy)(x)
    assert _run(result, {x: 4}) == 10
    assert stream.getvalue() == "y is 5\n"


def test_print_inside_a_staged_branch_prints_only_when_taken():
    stream = io.StringIO()

    def report(x):
        if x > 0:
            print("positive", x, output_stream=stream)
        return x

    x = _scalar()
    result = autograph.to_graph(report)(x)
    _run(result, {x: -1})
    _run(result, {x: 3})
    assert stream.getvalue() == "positive 3\n"


def test_print_of_python_values_is_pythons_print(capsys):
    def hello(n):
        print("n =", n)
        return n

    autograph.to_graph(hello)(3)
    assert capsys.readouterr().out == "n = 3\n"


def test_assert_on_a_tensor_fails_at_run_time_with_its_message():
    def checked_sqrt(x):
        assert x >= 0.0, "x must be non-negative"
        return df.sqrt(x)

    x = _scalar(df.float32)
    result = autograph.to_graph(checked_sqrt)(x)
    assert _run(result, {x: 4.0}) == pytest.approx(2.0)
    with pytest.raises(df.errors.InvalidArgumentError, match="x must be non-negative"):
        _run(result, {x: -1.0})


def test_assert_on_a_python_value_is_pythons_assert():
    def checked(x):
        assert x > 0, "positive please"
        return x

    with pytest.raises(AssertionError, match="positive please"):
        autograph.to_graph(checked)(-1)


def test_list_appended_in_a_staged_loop_becomes_a_tensor_array():
    def squares(n):
        values = []
        for i in range(n):
            values.append(i * i)
        return autograph.stack(values)

    n = _scalar()
    result = autograph.to_graph(squares)(n)
    np.testing.assert_array_equal(_run(result, {n: 4}), [0, 1, 4, 9])
    np.testing.assert_array_equal(autograph.to_graph(squares)(3).shape, [3])


def test_a_list_of_the_enclosing_function_is_appended_to_in_place():
    log = []

    def scaled(x):
        log.append("traced")
        return x * 2

    x = _scalar()
    result = autograph.to_graph(scaled)(x)
    assert log == ["traced"]
    assert _run(result, {x: 3}) == 6


_MODULE_LOG: list = []


def test_a_module_level_list_is_appended_to_in_place():
    def noted(x):
        _MODULE_LOG.append(1)
        return x + 1

    autograph.to_graph(noted)(_scalar())
    assert _MODULE_LOG == [1]


def test_list_with_first_elements_appended_in_a_staged_while():
    def doubling(n):
        values = [1.0]
        i = 0
        while i < n:
            values.append(values_last(i))
            i += 1
        return autograph.stack(values)

    n = _scalar()
    result = autograph.to_graph(doubling)(n)
    np.testing.assert_array_equal(_run(result, {n: 3}), [1.0, 1.0, 2.0, 4.0])


def values_last(i):
    return df.pow(2.0, df.cast(i, df.float32))


# -- calls -----------------------------------------------------------------------------------------
def clipped(x):
    if x > 10:
        x = 10
    return x


def test_user_functions_called_are_converted_recursively(fresh_graph):
    def twice_clipped(x):
        return clipped(x) + clipped(x * 2)

    x = _scalar()
    result = autograph.to_graph(twice_clipped)(x)
    assert _run(result, {x: 7}) == 17
    assert "Merge" in _op_types(fresh_graph)


def test_without_recursive_called_functions_stay_unconverted():
    def calls_clipped(x):
        return clipped(x)

    with pytest.raises(TypeError, match="as a Python bool is not allowed"):
        autograph.to_graph(calls_clipped, recursive=False)(_scalar())


def test_library_functions_are_called_as_they_are():
    def uses_library(x):
        return df.maximum(x, 0) + int(np.int64(1)) + len([1, 2])

    x = _scalar()
    assert _run(autograph.to_graph(uses_library)(x), {x: -4}) == 3


def test_closures_defaults_methods_and_lambdas():
    offset = 100

    def with_closure(x, bonus=5):
        if x > 0:
            x = x + offset
        return x + bonus

    class Scaler:
        factor = 3

        def scale(self, x):
            if x > 0:
                x = x * self.factor
            return x

    halve = lambda x: x // 2 if x > 0 else x  # noqa: E731

    x = _scalar()
    results = [
        autograph.to_graph(with_closure)(x),
        autograph.to_graph(Scaler().scale)(x),
        autograph.to_graph(halve)(x),
    ]
    assert _run(results, {x: 4}) == [109, 12, 2]
    offset = 1000
    assert autograph.to_graph(with_closure)(1) == 1006


def test_decorators_are_stripped():
    def tag(function):
        tag.calls += 1
        return function

    tag.calls = 0

    @tag
    def decorated(x):
        if x > 0:
            x = -x
        return x

    assert autograph.to_graph(decorated)(3) == -3
    assert tag.calls == 1


class _Base:
    def shift(self, x):
        return x + 1


class _Derived(_Base):
    def shift(self, x):
        if x > 0:
            x = super().shift(x) * 10
        return x


def test_zero_argument_super_inside_a_converted_branch_of_a_method():
    converted = autograph.to_graph(_Derived().shift)
    assert (converted(3), converted(-1)) == (40, -1)
    x = _scalar()
    assert _run(converted(x), {x: 2}) == 30
