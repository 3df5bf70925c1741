"""cond, case and while_loop at run time: results, what runs, and what is dead."""

import collections
import threading

import numpy as np
import pytest

import dataflow as df

# Stops a stalled run instead of hanging the test suite.
_DEADLINE = df.RunOptions(timeout_in_ms=30_000)


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def _run(fetches, feed_dict=None, **config):
    with df.Session(config=df.ConfigProto(**config) if config else None) as sess:
        return sess.run(fetches, feed_dict, options=_DEADLINE)


class CallCounter:
    """A Python function for `df.py_func` that counts its calls (thread-safe)."""

    def __init__(self):
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, x):
        with self._lock:
            self.calls += 1
        return x


# -- cond ------------------------------------------------------------------------------------------
def test_cond_returns_the_taken_branch():
    x = df.placeholder(df.float32, shape=[])
    r = df.cond(x > 0.0, lambda: x * 2.0, lambda: -x)
    assert _run(r, {x: 3.0}) == 6.0
    assert _run(r, {x: -4.0}) == 4.0


def test_untaken_branch_runs_no_kernel():
    x = df.placeholder(df.float32, shape=[])
    p = df.placeholder(df.bool, shape=[])
    in_true, in_false = CallCounter(), CallCounter()
    r = df.cond(
        p,
        lambda: df.py_func(in_true, [x * 2.0], df.float32),
        lambda: df.py_func(in_false, [x], df.float32),
    )
    assert _run(r, {x: 1.5, p: True}) == 3.0
    assert (in_true.calls, in_false.calls) == (1, 0)
    assert _run(r, {x: 1.5, p: False}) == 1.5
    assert (in_true.calls, in_false.calls) == (1, 1)


@pytest.mark.parametrize("taken", [True, False])
def test_fetching_a_tensor_of_a_branch_is_refused_whichever_branch_runs(taken):
    p = df.placeholder(df.bool, shape=[])
    inside = []

    def true_fn():
        inside.append(df.constant(1.0, name="only_if_true") * 3.0)
        return inside[0]

    r = df.cond(p, true_fn, lambda: df.constant(0.0), name="pick")
    with df.Session() as sess:
        with pytest.raises(df.errors.InaccessibleTensorError) as info:
            sess.run(inside[0], {p: taken})
        message = str(info.value)
        assert f"Tensor '{inside[0].name}' (created at {inside[0].op.location})" in message
        assert "has been marked as not fetchable" in message  # TensorFlow 1.x's words
        assert "the true branch of cond 'pick'" in message
        assert sess.run(r, {p: True}) == 3.0  # the Session is usable


def test_cond_results_keep_their_structure():
    Point = collections.namedtuple("Point", "x y")
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(
        p,
        lambda: {"pt": Point(df.constant(1), df.constant(2.0)), "n": [df.constant(3)]},
        lambda: {"pt": Point(df.constant(4), df.constant(5.0)), "n": [df.constant(6)]},
    )
    out = _run(r, {p: False})
    assert out["pt"] == Point(4, 5.0) and out["n"] == [6]


def test_a_branch_returning_an_outside_tensor_or_an_op():
    p = df.placeholder(df.bool, shape=[])
    x = df.constant(10.0)
    r = df.cond(p, lambda: x, lambda: x + 1.0)
    assert _run(r, {p: True}) == 10.0 and _run(r, {p: False}) == 11.0
    done = df.cond(p, lambda: df.no_op(), lambda: df.no_op())
    assert _run(done, {p: True}) == np.bool_(True)
    assert _run(done, {p: False}) == np.bool_(False)


def test_nested_conds_capture_outside_tensors_level_by_level():
    x = df.placeholder(df.int32, shape=[])
    p, q = df.placeholder(df.bool, shape=[]), df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: df.cond(q, lambda: x + 1, lambda: x + 2), lambda: x + 3)
    results = {(a, b): _run(r, {x: 10, p: a, q: b}) for a in (True, False) for b in (True, False)}
    assert results == {(True, True): 11, (True, False): 12, (False, True): 13, (False, False): 13}


def test_a_control_dependency_inside_a_branch_runs_only_with_the_branch():
    p = df.placeholder(df.bool, shape=[])
    counter = CallCounter()

    def true_fn():
        side = df.py_func(counter, [df.constant(1)], df.int32)
        with df.control_dependencies([side]):
            return df.constant(1)

    r = df.cond(p, true_fn, lambda: df.constant(2))
    assert _run(r, {p: False}) == 2 and counter.calls == 0
    assert _run(r, {p: True}) == 1 and counter.calls == 1


# -- case ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("exclusive", [False, True])
def test_case_runs_the_first_true_predicate_or_the_default(exclusive):
    x = df.placeholder(df.int32, shape=[])
    r = df.case(
        [(x < 0, lambda: df.constant(-1)), (df.equal(x, 0), lambda: df.constant(0))],
        default=lambda: df.constant(1),
        exclusive=exclusive,
    )
    assert [_run(r, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]


def test_case_without_exclusive_takes_the_first_of_several_true_predicates():
    x = df.placeholder(df.int32, shape=[])
    r = df.case(
        [(x > 0, lambda: df.constant(1)), (x > 5, lambda: df.constant(2))],
        default=lambda: df.constant(0),
    )
    assert _run(r, {x: 9}) == 1


def test_case_exclusive_fails_when_two_predicates_hold():
    x = df.placeholder(df.int32, shape=[])
    r = df.case(
        [(x > 0, lambda: df.constant(1)), (x > 5, lambda: df.constant(2))],
        default=lambda: df.constant(0),
        exclusive=True,
    )
    assert _run(r, {x: 3}) == 1
    with pytest.raises(df.errors.InvalidArgumentError, match="exclusive"):
        _run(r, {x: 9})


def test_case_without_default_uses_the_last_pair_and_checks_its_predicate():
    x = df.placeholder(df.int32, shape=[])
    r = df.case([(x < 0, lambda: df.constant(-1)), (x >= 0, lambda: df.constant(1))])
    assert _run(r, {x: -3}) == -1 and _run(r, {x: 3}) == 1
    r = df.case([(x < 0, lambda: df.constant(-1)), (x > 0, lambda: df.constant(1))])
    with pytest.raises(df.errors.InvalidArgumentError, match="None of conditions"):
        _run(r, {x: 0})


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("with_default", [False, True])
def test_case_with_a_single_pair_builds_and_runs_as_in_tensorflow(with_default, exclusive):
    x = df.placeholder(df.int32, shape=[])
    r = df.case(
        [(x > 0, lambda: x * 10)],
        default=(lambda: -x) if with_default else None,
        exclusive=exclusive,
    )
    assert _run(r, {x: 3}) == 30
    if with_default:
        assert _run(r, {x: -3}) == 3
    else:  # the pair is the default, guarded by its predicate
        with pytest.raises(df.errors.InvalidArgumentError, match="None of conditions"):
            _run(r, {x: -3})


def test_case_accepts_a_dict_and_orders_it_by_predicate_name():
    x = df.placeholder(df.int32, shape=[])
    a = df.less(x, 0, name="a_negative")
    b = df.less(x, 10, name="b_small")
    r = df.case(
        {b: lambda: df.constant(2), a: lambda: df.constant(1)},
        default=lambda: df.constant(3),
        exclusive=False,
    )
    assert [_run(r, {x: v}) for v in (-1, 5, 50)] == [1, 2, 3]


def test_case_argument_errors():
    x = df.placeholder(df.int32, shape=[])
    with pytest.raises(TypeError, match="list, tuple, or dict"):
        df.case(x < 0)
    with pytest.raises(TypeError, match="2-tuple"):
        df.case([[x < 0, lambda: 1]])
    with pytest.raises(TypeError, match="type bool"):
        df.case([(x, lambda: 1)])
    with pytest.raises(TypeError, match="callable"):
        df.case([(x < 0, 1)])


# -- while_loop ------------------------------------------------------------------------------------
def test_while_loop_counts():
    n = df.placeholder(df.int32, shape=[])
    i, total = df.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + i), [0, 0])
    assert _run([i, total], {n: 10}) == [10, 45]


def test_zero_trip_loop_returns_the_initial_values_and_runs_no_body_kernel():
    n = df.placeholder(df.int32, shape=[])
    k = df.placeholder(df.float32, shape=[])
    counter = CallCounter()
    r = df.while_loop(
        lambda i, x: i < n,
        lambda i, x: (i + 1, df.py_func(counter, [x + k], df.float32)),
        [0, df.constant(1.0)],
        shape_invariants=[df.TensorShape([]), df.TensorShape(None)],
    )
    assert list(_run(r, {n: 0, k: 2.0})) == [0, 1.0]
    assert counter.calls == 0
    assert list(_run(r, {n: 3, k: 2.0})) == [3, 7.0]
    assert counter.calls == 3


def test_body_ops_reading_only_invariants_run_once_per_iteration():
    n = df.placeholder(df.int32, shape=[])
    k = df.placeholder(df.int32, shape=[])
    counter = CallCounter()

    def body(i, acc):
        step = df.py_func(counter, [k], df.int32)
        step.set_shape([])
        return i + 1, acc + step

    r = df.while_loop(lambda i, acc: i < n, body, [0, 0])
    assert list(_run(r, {n: 4, k: 5})) == [4, 20]
    assert counter.calls == 4
    assert list(_run(r, {n: 0, k: 5})) == [0, 0]
    assert counter.calls == 4


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_maximum_iterations_bounds_the_loop(limit):
    r = df.while_loop(lambda i: i < 10, lambda i: i + 1, [df.constant(0)], maximum_iterations=limit)
    assert _run(r) == limit


@pytest.mark.parametrize("bound", [2.0, 2.5], ids=["whole", "fractional"])
def test_a_float_maximum_iterations_counts_in_floats_as_in_tensorflow(bound):
    # The counter has the bound's dtype: 0.0, 1.0, 2.0 < 2.5 runs three iterations.
    r = df.while_loop(lambda i: i < 10, lambda i: i + 1, [df.constant(0)], maximum_iterations=bound)
    assert _run(r) == int(np.ceil(bound))


def test_a_bool_maximum_iterations_is_refused():
    with pytest.raises(TypeError, match="'maximum_iterations' must be a number, got bool"):
        df.while_loop(lambda i: i < 10, lambda i: i + 1, [0], maximum_iterations=True)


def test_maximum_iterations_with_several_variables_and_a_tensor_bound():
    m = df.placeholder(df.int32, shape=[])
    a, b = df.while_loop(
        lambda a, b: a < 100, lambda a, b: (a + 1, b * 2), [0, 1], maximum_iterations=m
    )
    assert _run([a, b], {m: 5}) == [5, 32]
    assert _run([a, b], {m: 0}) == [0, 1]


def test_structures_of_loop_variables():
    Pair = collections.namedtuple("Pair", "j k")
    loop_vars = (
        df.constant(0),
        Pair(df.constant(1), {"a": df.constant(2.0), "b": [df.constant(3), df.constant(4)]}),
    )

    def body(i, p):
        return i + 1, Pair(p.j * 2, {"a": p.k["a"] + 0.5, "b": [p.k["b"][1], p.k["b"][0]]})

    i, p = _run(df.while_loop(lambda i, p: i < 3, body, loop_vars))
    assert i == 3 and p.j == 8 and p.k["a"] == 3.5 and p.k["b"] == [4, 3]


def test_single_variable_results_and_return_same_structure():
    x = df.constant(1.0)
    assert _run(df.while_loop(lambda v: v < 100.0, lambda v: v * 3.0, [x])) == 243.0
    r = df.while_loop(lambda v: v < 100.0, lambda v: [v * 3.0], [x], return_same_structure=True)
    assert _run(r) == [243.0]
    d = df.while_loop(
        lambda d: d["n"] < 4,
        lambda d: {"n": d["n"] + 1, "s": d["s"] * 2},
        [{"n": df.constant(0), "s": df.constant(1)}],
    )
    assert _run(d) == [{"n": 4, "s": 16}]


def test_nested_loops():
    n = df.placeholder(df.int32, shape=[])

    def outer_body(i, total):
        _, inner_total = df.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), [0, total])
        return i + 1, inner_total

    r = df.while_loop(lambda i, t: i < n, outer_body, [0, 0])
    # sum over i < n of sum over j < i of j
    expected = sum(j for i in range(6) for j in range(i))
    assert list(_run(r, {n: 6})) == [6, expected]


def test_loop_invariant_captured_two_levels_deep():
    x = df.placeholder(df.float32, shape=[])

    def outer_body(i, acc):
        inner = df.while_loop(lambda j, a: j < 3, lambda j, a: (j + 1, a + x), [0, acc])
        return i + 1, inner[1]

    r = df.while_loop(lambda i, acc: i < 4, outer_body, [0, df.constant(0.0)])
    assert list(_run(r, {x: 0.5})) == [4, 6.0]


def test_cond_in_a_loop():
    n = df.placeholder(df.int32, shape=[])
    odd_calls = CallCounter()

    def body(i, acc):
        is_even = df.equal(i % 2, 0)
        step = df.cond(
            is_even,
            lambda: i,
            lambda: df.py_func(odd_calls, [-i], df.int32),
        )
        step.set_shape([])
        return i + 1, acc + step

    r = df.while_loop(lambda i, acc: i < n, body, [0, 0])
    assert list(_run(r, {n: 7})) == [7, 0 - 1 + 2 - 3 + 4 - 5 + 6]
    assert odd_calls.calls == 3


def test_cond_on_a_loop_invariant_predicate_inside_a_loop():
    p = df.placeholder(df.bool, shape=[])
    x = df.placeholder(df.int32, shape=[])
    calls = CallCounter()

    def body(i, acc):
        return i + 1, acc + df.cond(p, lambda: df.py_func(calls, [x], df.int32), lambda: x * 0)

    r = df.while_loop(
        lambda i, acc: i < 5,
        body,
        [0, 0],
        shape_invariants=[df.TensorShape([]), df.TensorShape(None)],
    )
    assert list(_run(r, {p: True, x: 2})) == [5, 10]
    assert calls.calls == 5
    assert list(_run(r, {p: False, x: 2})) == [5, 0]
    assert calls.calls == 5


def test_loop_in_an_untaken_branch_is_dead_downstream_without_stalling():
    p = df.placeholder(df.bool, shape=[])
    n = df.placeholder(df.int32, shape=[])
    calls = CallCounter()

    def loop():
        return df.while_loop(
            lambda i: i < n,
            lambda i: df.py_func(calls, [i + 1], df.int32),
            [0],
            shape_invariants=[df.TensorShape(None)],
        )

    r = df.cond(p, loop, lambda: df.constant(-1))
    assert _run(r, {p: False, n: 5}) == -1
    assert calls.calls == 0
    assert _run(r, {p: True, n: 5}) == 5
    assert calls.calls == 5


def test_a_loop_result_inside_a_branch_may_be_neither_fetched_nor_fed():
    p = df.placeholder(df.bool, shape=[])
    results = []

    def loop():
        results.append(df.while_loop(lambda i: i < 3, lambda i: i + 1, [0]))
        return results[0]

    r = df.cond(p, loop, lambda: df.constant(0))
    with df.Session() as sess:
        with pytest.raises(df.errors.InaccessibleTensorError, match="true branch of cond"):
            sess.run(results[0], {p: True})
        with pytest.raises(ValueError, match=rf"'{results[0].name}' may not be fed: it is the"):
            sess.run(r, {p: True, results[0]: 7})
        assert sess.run(r, {p: True}) == 3


@pytest.mark.parametrize("threads", [1, 4])
def test_parallel_iterations_does_not_change_results(threads):
    n = df.placeholder(df.int32, shape=[])
    x = df.placeholder(df.float64, shape=[3])
    outputs = []
    for parallel in (1, 32):

        def body(i, v, acc, parallel=parallel):
            w = v * 1.1 + df.cast(i, df.float64)
            inner = df.while_loop(
                lambda j, a: j < i,
                lambda j, a: (j + 1, a + 1.0),
                [0, df.constant(0.0, df.float64)],
                parallel_iterations=parallel,
            )
            return i + 1, w, acc + df.reduce_sum(w) + inner[1]

        outputs.append(
            df.while_loop(
                lambda i, v, acc: i < n,
                body,
                [0, x, df.constant(0.0, df.float64)],
                parallel_iterations=parallel,
            )
        )
    feed = {n: 12, x: np.array([1.0, -2.0, 0.5])}
    one, many = _run(outputs, feed, inter_op_parallelism_threads=threads)
    assert one[0] == many[0] == 12
    np.testing.assert_array_equal(one[1], many[1])
    assert one[2] == many[2]


def test_control_dependency_on_an_outside_op_is_kept_inside_a_loop():
    fail = df.placeholder(df.bool, shape=[])
    check = df.Assert(df.logical_not(fail), ["outside check"])

    def body(i):
        with df.control_dependencies([check]):
            return i + 1

    r = df.while_loop(lambda i: i < 3, body, [0])
    assert _run(r, {fail: False}) == 3
    with pytest.raises(df.errors.InvalidArgumentError, match="outside check"):
        _run(r, {fail: True})


def test_control_dependency_on_an_outside_op_runs_it_once_before_the_loop_uses_it():
    order = []
    lock = threading.Lock()

    def record(tag):
        def fn(x):
            with lock:
                order.append(tag)
            return x

        return fn

    init = df.py_func(record("init"), [df.constant(0)], df.int32)

    def body(i):
        with df.control_dependencies([init]):
            step = df.py_func(record("body"), [i], df.int32)
        step.set_shape([])
        return step + 1

    r = df.while_loop(lambda i: i < 3, body, [0])
    assert _run(r) == 3
    assert order == ["init", "body", "body", "body"]


def test_control_dependencies_around_a_loop_run_first():
    order = []
    first = df.py_func(lambda x: order.append("first") or x, [df.constant(0)], df.int32)

    def body(i):
        counted = df.py_func(lambda x: order.append("body") or x, [i], df.int32)
        counted.set_shape([])
        return counted + 1

    with df.control_dependencies([first]):
        r = df.while_loop(lambda i: i < 2, body, [0])
    assert _run(r) == 2
    assert order == ["first", "body", "body"]


def test_a_loop_over_a_variable_with_a_growing_shape():
    i, m = df.while_loop(
        lambda i, m: i < 3,
        lambda i, m: (i + 1, df.concat([m, m], axis=0)),
        [df.constant(0), df.ones([1, 2])],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None, 2])],
    )
    assert _run(m).shape == (8, 2)
