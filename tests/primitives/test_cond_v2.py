"""Control flow v2: ``cond`` as a functional ``If`` op, lowered to Switch/Merge by a Session or
run as one call by the single-threaded executor."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_control_flow_properties import NAMES, Overflow, build, evaluate, programs

import dataflow as df
from dataflow.eager.tracing import FuncGraph

SINGLE_THREADED = df.ConfigProto(experimental={"executor_type": "SINGLE_THREADED_EXECUTOR"})
CONFIGS = {"lowered": None, "single_threaded": SINGLE_THREADED}


@pytest.fixture(autouse=True)
def control_flow_v2():
    df.enable_control_flow_v2()
    try:
        with df.Graph().as_default():
            yield
    finally:
        df.disable_control_flow_v2()


def run(fetch, feed=None, config=None, run_metadata=None):
    with df.Session(config=config) as sess:
        sess.run(df.global_variables_initializer())
        return sess.run(fetch, feed, run_metadata=run_metadata)


def run_both_ways(fetch, feed=None):
    """The values of ``fetch`` with the Ifs lowered and with the Ifs called; they must agree."""
    lowered, called = (run(fetch, feed, config) for config in CONFIGS.values())
    np.testing.assert_equal(lowered, called)
    return lowered


def op_types(graph=None):
    return [op.type for op in (graph or df.get_default_graph()).get_operations()]


# -- the switch --------------------------------------------------------------------------------
def test_v1_is_the_default_and_v2_is_switched_on_and_off():
    df.disable_control_flow_v2()
    assert not df.control_flow_v2_enabled()
    df.cond(df.constant(True), lambda: 1.0, lambda: 2.0)
    assert "If" not in op_types() and "Switch" in op_types()
    df.compat.v1.enable_control_flow_v2()
    assert df.compat.v1.control_flow_v2_enabled()
    with df.Graph().as_default():
        df.cond(df.constant(True), lambda: 1.0, lambda: 2.0)
        assert "If" in op_types() and "Switch" not in op_types()


# -- the If op ---------------------------------------------------------------------------------
def test_cond_builds_one_if_op_whose_branches_are_traced_functions():
    x = df.placeholder(df.float32, [None, 3], name="x")
    y = df.constant(2, name="y")
    pred = df.placeholder(df.bool, [], name="pred")
    result = df.cond(pred, lambda: x * 2.0, lambda: df.zeros([4, 3]) + df.cast(y, df.float32))
    (if_op,) = [op for op in df.get_default_graph().get_operations() if op.type == "If"]
    assert if_op.name == "cond" and result.name == "cond/Identity:0"
    assert list(if_op.inputs) == [pred, x, y]
    assert if_op.attrs["Tcond"] is df.bool
    assert if_op.attrs["Tin"] == [df.float32, df.int32]
    assert if_op.attrs["Tout"] == [df.float32]
    assert result.shape.as_list() == [None, 3]
    then_branch, else_branch = if_op.attrs["then_branch"], if_op.attrs["else_branch"]
    assert isinstance(then_branch, FuncGraph) and isinstance(else_branch, FuncGraph)
    assert [t.dtype for t in then_branch.inputs] == [df.float32, df.int32]
    assert [t.dtype for t in else_branch.inputs] == [df.float32, df.int32]
    assert "Mul" in op_types(then_branch) and "Mul" not in op_types(else_branch)


def test_results_keep_the_structure_the_branches_return():
    x = df.placeholder(df.float32, [])
    pred = df.placeholder(df.bool, [])
    result = df.cond(
        pred,
        lambda: {"a": x, "b": (x * 2.0, df.constant(1))},
        lambda: {"a": -x, "b": (x, df.constant(2))},
    )
    values = run_both_ways(result, {pred: False, x: 3.0})
    assert values == {"a": -3.0, "b": (3.0, 2)}


def test_a_branch_may_return_an_operation_as_v1_does():
    v = df.Variable(0.0)
    pred = df.placeholder(df.bool, [])
    done = df.cond(pred, lambda: v.assign_add(1.0).op, lambda: df.no_op())
    for config in CONFIGS.values():
        with df.Session(config=config) as sess:
            sess.run(v.initializer)
            assert sess.run(done, {pred: True}) == np.True_
            assert sess.run(v) == 1.0


# -- running it --------------------------------------------------------------------------------
def test_a_session_lowers_if_to_switch_and_merge():
    pred = df.placeholder_with_default(True, [])
    result = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0))
    metadata = df.RunMetadata()
    assert run(result, run_metadata=metadata) == 1.0
    types = {s.op_type for s in metadata.step_stats}
    assert {"Switch", "Merge"} <= types and "If" not in types


def test_the_single_threaded_executor_runs_if_as_one_call():
    pred = df.placeholder_with_default(True, [])
    result = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0))
    metadata = df.RunMetadata()
    assert run(result, config=SINGLE_THREADED, run_metadata=metadata) == 1.0
    types = {s.op_type for s in metadata.step_stats}
    assert "If" in types and not {"Switch", "Merge"} & types


def test_lowering_is_not_a_rewrite_option():
    pred = df.placeholder_with_default(True, [])
    result = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0))
    no_passes = df.ConfigProto(
        graph_options=df.GraphOptions(
            rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
        )
    )
    metadata = df.RunMetadata()
    assert run(result, config=no_passes, run_metadata=metadata) == 1.0
    assert "Switch" in {s.op_type for s in metadata.step_stats}


def test_an_unknown_executor_type_is_an_error():
    config = df.ConfigProto()
    config.experimental.executor_type = "PARALLEL"
    with pytest.raises(ValueError, match="No executor of type 'PARALLEL'.*test_cond_v2.py"):
        df.Session(config=config)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("taken", [True, False])
def test_untaken_branch_runs_no_kernel(config, taken):
    v = df.Variable(0.0)
    pred = df.placeholder(df.bool, [])

    def assigning(amount):
        return lambda: v.assign_add(amount)

    result = df.cond(pred, assigning(1.0), assigning(10.0))
    with df.Session(config=config) as sess:
        sess.run(v.initializer)
        assert sess.run(result, {pred: taken}) == (1.0 if taken else 10.0)
        assert sess.run(v) == (1.0 if taken else 10.0)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_a_failing_branch_names_the_users_line_and_leaves_variables_intact(config):
    v = df.Variable(5.0)
    x = df.placeholder(df.float32, [None])
    pred = df.placeholder(df.bool, [])

    def failing():
        v.assign(0.0)
        return df.reshape(x, [2, 2])  # the failing line

    result = df.cond(pred, failing, lambda: df.zeros([2, 2]))
    with df.Session(config=config) as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError) as raised:
            sess.run(result, {pred: True, x: [1.0, 2.0, 3.0]})
        assert "Reshape" in str(raised.value)
        assert f"test_cond_v2.py:{failing.__code__.co_firstlineno + 2}" in str(raised.value)
        assert sess.run(v) == 5.0
        assert sess.run(result, {pred: False, x: [1.0]}).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_nested_conds():
    x = df.placeholder(df.float32, [])
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: df.cond(x > 0.0, lambda: x * 2.0, lambda: -x), lambda: x + 100.0)
    assert run_both_ways(result, {pred: True, x: -3.0}) == 3.0
    assert run_both_ways(result, {pred: True, x: 3.0}) == 6.0
    assert run_both_ways(result, {pred: False, x: 1.0}) == 101.0


def test_cond_in_a_loop_and_loop_in_a_cond():
    i0, a0 = df.constant(0), df.constant(1.0)
    _, alternating = df.while_loop(
        lambda i, a: i < 5,
        lambda i, a: (i + 1, df.cond(df.equal(i % 2, 0), lambda: a + 1.0, lambda: a * 2.0)),
        [i0, a0],
    )
    assert run_both_ways(alternating) == 11.0
    x = df.placeholder(df.float32, [])
    pred = df.placeholder(df.bool, [])
    counted = df.cond(
        pred, lambda: df.while_loop(lambda k: k < 10.0, lambda k: k + x, [x]), lambda: x
    )
    assert run_both_ways(counted, {pred: True, x: 3.0}) == 12.0
    assert run_both_ways(counted, {pred: False, x: 3.0}) == 3.0


# -- errors at build time ----------------------------------------------------------------------
def test_branches_of_different_dtypes_are_an_error_naming_the_users_line():
    pred = df.placeholder(df.bool, [])
    with pytest.raises(
        ValueError, match=r"same type.*test_cond_v2.py:\d+.*int32 from .true_fn. and float32"
    ):
        df.cond(pred, lambda: df.constant(1), lambda: df.constant(1.0))


def test_branches_of_different_structures_are_an_error():
    pred = df.placeholder(df.bool, [])
    with pytest.raises(ValueError, match="Incompatible return values.*test_cond_v2.py"):
        df.cond(pred, lambda: (1.0, 2.0), lambda: 1.0)


def test_a_branch_returning_none_is_an_error():
    pred = df.placeholder(df.bool, [])
    with pytest.raises(ValueError, match="'false_fn' must have a return value"):
        df.cond(pred, lambda: 1.0, lambda: None)


# -- gradients ---------------------------------------------------------------------------------
def test_the_gradient_is_an_if_of_the_branches_gradients():
    x = df.placeholder(df.float32, [])
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: x * x, lambda: 3.0 * x)
    (grad,) = df.gradients(result, x)
    assert op_types().count("If") == 2
    assert run_both_ways(grad, {pred: True, x: 5.0}) == 10.0
    assert run_both_ways(grad, {pred: False, x: 5.0}) == 3.0


def test_gradients_equal_v1s():
    def program():
        x = df.placeholder(df.float32, [2], name="x")
        w = df.Variable([1.5, -2.0], name="w")
        pred = df.placeholder(df.bool, [], name="pred")
        inner = df.cond(pred, lambda: df.reduce_sum(df.sin(x) * w), lambda: df.reduce_sum(w * w))
        outer = df.cond(df.less(inner, 0.0), lambda: inner * x, lambda: df.tanh(x))
        return x, pred, df.gradients(outer, [x, w])

    feeds = [([0.3, -1.0], True), ([0.3, -1.0], False), ([2.0, 1.0], True)]
    with df.Graph().as_default():
        df.disable_control_flow_v2()
        x, pred, grads = program()
        v1 = [run(grads, {x: xs, pred: p}) for xs, p in feeds]
    df.enable_control_flow_v2()
    x, pred, grads = program()
    for (xs, p), expected in zip(feeds, v1):
        np.testing.assert_allclose(run_both_ways(grads, {x: xs, pred: p}), expected, rtol=1e-6)


def test_an_input_only_one_branch_reads_gets_a_zero_gradient_from_the_other():
    x = df.placeholder(df.float32, [3])
    y = df.placeholder(df.float32, [3])
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: x * 2.0, lambda: y * 3.0)
    grads = df.gradients(df.reduce_sum(result), [x, y])
    values = run_both_ways(grads, {x: [1, 2, 3], y: [4, 5, 6], pred: False})
    assert [g.tolist() for g in values] == [[0, 0, 0], [3, 3, 3]]


def test_a_variable_read_in_one_branch_gets_its_gradient_there_and_zero_from_the_other():
    v = df.Variable([2.0, 3.0])
    x = df.placeholder(df.float32, [2])
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: v * x, lambda: x)
    (grad,) = df.gradients(df.reduce_sum(result), [v])
    assert run_both_ways(grad, {pred: True, x: [4.0, 5.0]}).tolist() == [4.0, 5.0]
    assert run_both_ways(grad, {pred: False, x: [4.0, 5.0]}).tolist() == [0.0, 0.0]


# -- random programs ---------------------------------------------------------------------------
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    program=programs,
    x=st.floats(-4.0, 4.0, allow_nan=False),
    n=st.integers(-3, 5),
    f1=st.sampled_from([0.0, 1.0, -2.5]),
)
def test_random_programs_give_v1s_values(program, x, n, f1):
    start = {"f0": x, "f1": f1, "i0": n, "i1": 1}
    try:
        expected = evaluate(program, start, {"x": x, "n": n})
    except Overflow:
        assume(False)
    with df.Graph().as_default():
        xp = df.placeholder(df.float64, shape=[], name="x")
        np_ = df.placeholder(df.int32, shape=[], name="n")
        env = {"f0": xp, "f1": df.constant(f1, df.float64), "i0": np_, "i1": df.constant(1)}
        final = build(program, env, {"x": xp, "n": np_}, parallel=10)
        result = run_both_ways({k: final[k] for k in NAMES}, {xp: x, np_: n})
    for name in NAMES:
        assert result[name] == expected[name], (name, result, expected, program)


# -- saving and drawing ------------------------------------------------------------------------
def test_saving_a_graph_with_an_if_is_a_clear_error(tmp_path):
    pred = df.placeholder(df.bool, [])
    df.cond(pred, lambda: 1.0, lambda: 2.0)
    with pytest.raises(df.io.GraphNotSerializableError, match="'then_branch' of If op 'cond'"):
        df.io.save_graph(df.get_default_graph(), tmp_path / "cond.dfg")


def test_render_draws_an_if_as_one_box():
    pred = df.placeholder(df.bool, [])
    result = df.cond(pred, lambda: 1.0, lambda: 2.0)
    (line,) = [line for line in df.render(result).source.splitlines() if "If</font>" in line]
    assert line.strip().startswith("cond ") and "shape=box" in line
