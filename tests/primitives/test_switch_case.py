"""`df.switch_case` as TF1 builds it (an integer-indexed choice of one branch function), and the
build-time error when a switch_case branch, or a cond branch in a df.function, uses a tensor made
in another branch (TensorFlow's functional branches cannot see each other)."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def constant_branches(*values):
    return [lambda v=v: df.constant(v) for v in values]


def run(fetches, feed=None):
    with df.Session() as sess:
        return sess.run(fetches, feed)


def test_the_branch_of_the_index_runs_and_only_it():
    index = df.placeholder(df.int32, [])
    counter = df.Variable(0)

    def counted(k):
        def branch():
            with df.control_dependencies([df.assign_add(counter, 1)]):
                return df.constant(10 * k)

        return branch

    r = df.switch_case(index, [counted(k) for k in range(4)])
    with df.Session() as sess:
        sess.run(counter.initializer)
        assert [sess.run(r, {index: k}) for k in range(4)] == [0, 10, 20, 30]
        assert sess.run(counter) == 4


def test_an_index_that_is_no_key_selects_default_or_the_largest_key():
    index = df.placeholder(df.int32, [])
    with_default = df.switch_case(index, constant_branches(17, 31), default=lambda: -1)
    without = df.switch_case(index, constant_branches(17, 31))
    assert [run(with_default, {index: k}) for k in (0, 1, 2, -5)] == [17, 31, -1, -1]
    assert [run(without, {index: k}) for k in (0, 1, 7, -5)] == [17, 31, 31, 31]


def test_branches_given_as_a_dict_or_pairs_are_ordered_by_key():
    index = df.constant(1, df.int64)
    as_dict = df.switch_case(index, {1: lambda: df.constant(31), 0: lambda: df.constant(17)})
    as_pairs = df.switch_case(index, [(1, lambda: df.constant(31)), (0, lambda: df.constant(17))])
    assert run([as_dict, as_pairs]) == [31, 31]


def test_the_result_keeps_the_branches_structure():
    r = df.switch_case(df.constant(0), [lambda: [df.constant(1.0)], lambda: [df.constant(2.0)]])
    assert isinstance(r, list) and run(r) == [1.0]


def test_gradients_flow_through_the_branch_taken():
    x = df.constant(3.0)
    index = df.placeholder(df.int32, [])
    r = df.switch_case(index, [lambda: x * x, lambda: x * 5.0, lambda: df.constant(1.0)])
    (grad,) = df.gradients(r, [x])
    assert [run(grad, {index: k}) for k in range(3)] == [6.0, 5.0, 0.0]


def test_malformed_branches_are_refused_as_tensorflow_refuses_them():
    index = df.constant(0)
    with pytest.raises(ValueError, match="contiguous range of \\[0 to 2\\) but found \\{0,2\\}"):
        df.switch_case(index, {0: lambda: df.constant(1), 2: lambda: df.constant(2)})
    with pytest.raises(TypeError, match="key must be a Python `int`"):
        df.switch_case(index, [("a", lambda: df.constant(1))])
    with pytest.raises(TypeError, match="must be an integer Tensor"):
        df.switch_case(df.constant(0.0), constant_branches(1, 2))


def test_switch_case_runs_eagerly_as_python():
    with df.eager_mode():
        r = df.switch_case(df.constant(5), constant_branches(1, 2), default=lambda: df.constant(3))
        assert r.numpy() == 3


def test_in_a_function_a_cond_branch_may_not_use_a_tensor_made_in_the_other_branch():
    made = {}

    def true_fn():
        made["t"] = df.identity(df.constant(1.0), name="true_branch")
        return made["t"]

    @df.function
    def f():
        return df.cond(df.constant(True), true_fn, lambda: df.identity(made["t"]))

    with pytest.raises(ValueError, match=r"^Tensor true_branch:0 in true_fn is accessed from "):
        f.get_concrete_function()


def test_in_a_function_a_nested_cond_may_not_use_a_tensor_of_the_other_branch_either():
    made = {}

    def true_fn():
        made["t"] = df.constant(1.0, name="inside")
        return made["t"]

    def false_fn():
        return df.cond(df.constant(False), lambda: made["t"] + 1.0, lambda: df.constant(0.0))

    @df.function
    def f():
        return df.cond(df.constant(True), true_fn, false_fn)

    with pytest.raises(ValueError, match="Tensor inside:0 in true_fn is accessed from false_fn"):
        f.get_concrete_function()


def test_in_a_tf1_graph_a_cond_branch_may_use_the_other_branchs_tensor_as_tf1_allows():
    made = []

    def branch():
        if not made:
            made.append(df.constant(1))
        return made[0]

    r = df.cond(df.constant(True), branch, branch)
    assert run(r) == 1


def test_a_tensor_of_a_finished_cond_branch_may_still_be_used_after_the_cond():
    made = {}

    def true_fn():
        made["t"] = df.constant(2.0, name="inside")
        return made["t"]

    df.cond(df.constant(True), true_fn, lambda: df.constant(0.0))
    r = df.cond(df.constant(True), lambda: made["t"] * 3.0, lambda: df.constant(0.0))
    assert run(r) == 6.0


def test_a_switch_case_branch_may_not_use_a_tensor_made_in_another_branch():
    c = df.constant(1.0)
    made = {}

    def branch1():
        made["t"] = df.identity(c, name="br1_identity")
        return made["t"]

    def other():
        return df.identity(c)

    with pytest.raises(
        ValueError, match="Tensor br1_identity:0 in branch 1 is accessed from branch 4"
    ):
        df.switch_case(
            df.constant(2), [other, branch1, other, other, lambda: df.identity(made["t"])]
        )


def test_switch_case_values_match_numpy_indexing():
    rng = np.random.default_rng(0)
    table = rng.normal(size=5).astype(np.float32)
    index = df.placeholder(df.int32, [])
    r = df.switch_case(index, [lambda v=v: df.constant(v) for v in table])
    for k in range(5):
        assert run(r, {index: k}) == table[k]


def test_a_function_called_in_a_tf1_graph_builds_isolated_branches_too():
    made = {}

    def true_fn():
        made["t"] = df.identity(df.constant(1.0), name="true_branch")
        return made["t"]

    @df.function
    def f():
        return df.cond(df.constant(True), true_fn, lambda: df.identity(made["t"]))

    with pytest.raises(ValueError, match=r"^Tensor true_branch:0 in true_fn is accessed from "):
        f()
    assert not df.get_default_graph().building_function
