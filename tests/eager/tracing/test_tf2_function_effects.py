"""What a df.function's side effects do, as TensorFlow 2 documents for tf.function.

- Stateful ops (variable writes and reads, ``df.print``, asserts) run in the order the program
  made them, and run even when nothing uses their results; a function that returns nothing
  returns None.  This holds inside the branches of a cond and the body of a loop too: an
  effect there runs when its branch is taken, once per iteration.
- Python side effects (``print``, appending to a Python list) run while the function is
  traced, once per trace, and see symbolic tensors; later calls reuse the graph and run none.

Every expected value and printed line here is what TensorFlow 2.21 gives for the same program.
"""

import sys

import pytest

import dataflow as df


def printed(capsys) -> list:
    """The lines df.print wrote (to stderr, as TensorFlow's tf.print does by default)."""
    return capsys.readouterr().err.splitlines()


# -- effects run, in program order ---------------------------------------------------------------
def test_a_print_in_a_function_without_a_return_runs_and_the_call_returns_none(eager, capsys):
    @df.function
    def say():
        df.print("side effect")

    assert say() is None
    assert say() is None
    assert printed(capsys) == ["side effect", "side effect"]


def test_writes_run_in_program_order_even_when_nothing_reads_them(eager):
    v = df.Variable(1.0)

    @df.function
    def bump():
        v.assign_add(1.0)
        v.assign(v * 10.0)
        v.assign_sub(5.0)
        return 0

    assert bump().numpy() == 0
    assert v.numpy() == 15.0  # ((1 + 1) * 10) - 5: each step saw the one before
    bump()
    assert v.numpy() == 155.0


def test_a_read_after_a_write_sees_the_write(eager):
    v = df.Variable(1.0)

    @df.function
    def set_then_double(x):
        v.assign(x)
        return v.read_value() * 2

    assert set_then_double(df.constant(5.0)).numpy() == 10.0
    assert set_then_double(df.constant(7.0)).numpy() == 14.0


def test_prints_come_out_in_program_order_with_values_formatted_as_tensorflow_does(eager, capsys):
    @df.function
    def show(x):
        df.print("first", x)
        df.print("second", x * 2.0, [1.0, 2.5])
        df.print("third", df.constant([[1.0, 2.0], [3.0, 4.0]]))

    show(df.constant(1.0))
    assert printed(capsys) == [
        "first 1",
        "second 2 [1.0, 2.5]",  # a Python list prints as Python shows it
        "third [[1 2]",
        " [3 4]]",
    ]


def test_an_effect_whose_result_is_unused_still_runs_when_the_function_returns_a_value(
    eager, capsys
):
    @df.function
    def f(x):
        df.print("x is", x)
        return x + 1

    assert f(df.constant(1)).numpy() == 2
    assert f(df.constant(2)).numpy() == 3
    assert printed(capsys) == ["x is 1", "x is 2"]


def test_a_failing_assert_stops_the_call_and_earlier_writes_are_not_kept(eager):
    v = df.Variable(0.0)

    @df.function
    def checked(x):
        v.assign_add(1.0)
        df.debugging.assert_positive(x, message="x must be positive")
        return x

    assert checked(df.constant(1.0)).numpy() == 1.0
    with pytest.raises(df.errors.InvalidArgumentError, match="x must be positive"):
        checked(df.constant(-1.0))
    assert v.numpy() == 1.0


# -- effects inside cond and loops ---------------------------------------------------------------
def test_effects_in_an_if_run_only_in_the_branch_taken(eager, capsys):
    v = df.Variable(0.0)

    @df.function
    def branch(x):
        if x > 0:
            df.print("pos", x)
            v.assign_add(10.0)
        else:
            df.print("neg", x)
        return 1

    branch(df.constant(1.0))
    branch(df.constant(-1.0))
    assert printed(capsys) == ["pos 1", "neg -1"]
    assert v.numpy() == 10.0


def test_effects_in_explicit_cond_branches_run_without_autograph(eager, capsys):
    v = df.Variable(0)

    @df.function(autograph=False)
    def choose(flag):
        def yes():
            v.assign_add(1)
            df.print("yes")
            return df.constant(1)

        def no():
            v.assign_sub(1)
            df.print("no")
            return df.constant(0)

        return df.cond(flag, yes, no)

    assert choose(df.constant(True)).numpy() == 1
    assert choose(df.constant(False)).numpy() == 0
    assert choose(df.constant(True)).numpy() == 1
    assert v.numpy() == 1
    assert printed(capsys) == ["yes", "no", "yes"]


def test_effects_in_a_loop_body_run_once_per_iteration(eager, capsys):
    v = df.Variable(0.0)

    @df.function
    def count(n):
        i = 0
        while i < n:
            v.assign_add(1.0)
            df.print("step", i)
            i += 1
        return i

    assert count(df.constant(3)).numpy() == 3
    assert v.numpy() == 3.0
    assert printed(capsys) == ["step 0", "step 1", "step 2"]


def test_a_zero_trip_loop_runs_none_of_its_effects(eager, capsys):
    v = df.Variable(5.0)

    @df.function
    def count(n):
        for _ in df.range(n):
            v.assign_add(1.0)
            df.print("never")

    assert count(df.constant(0)) is None
    assert v.numpy() == 5.0
    assert printed(capsys) == []


def test_a_loop_whose_results_nothing_reads_still_runs(eager):
    v = df.Variable(0)

    @df.function(autograph=False)
    def run(n):
        def body(i):
            v.assign_add(i)
            return i + 1

        df.while_loop(lambda i: i < n, body, [df.constant(0)])

    assert run(df.constant(4)) is None
    assert v.numpy() == 0 + 1 + 2 + 3


def test_effects_of_a_cond_nested_in_a_loop_follow_each_iteration(eager, capsys):
    evens = df.Variable(0)

    @df.function
    def tally(n):
        for i in df.range(n):
            if i % 2 == 0:
                evens.assign_add(1)
                df.print("even", i)
            else:
                df.print("odd", i)

    tally(df.constant(4))
    assert evens.numpy() == 2
    assert printed(capsys) == ["even 0", "odd 1", "even 2", "odd 3"]


def test_effects_of_a_loop_nested_in_a_cond_run_when_its_branch_is_taken(eager):
    v = df.Variable(0)

    @df.function
    def maybe_count(flag, n):
        if flag:
            for _ in df.range(n):
                v.assign_add(1)

    maybe_count(df.constant(False), df.constant(3))
    assert v.numpy() == 0
    maybe_count(df.constant(True), df.constant(3))
    assert v.numpy() == 3


def test_a_nested_function_without_a_return_runs_its_effects_inside_the_outer_one(eager, capsys):
    v = df.Variable(0.0)

    @df.function
    def inner(x):
        v.assign_add(x)
        df.print("inner", x)

    @df.function
    def outer(x):
        inner(x)
        inner(x * 2.0)
        return v.read_value()

    assert outer(df.constant(1.0)).numpy() == 3.0
    assert printed(capsys) == ["inner 1", "inner 2"]


def test_legacy_random_ops_are_not_ordered_as_tensorflow_leaves_them_out():
    g = df.Graph()
    with g.as_default():

        @df.function
        def noisy():
            a = df.random.uniform([2], seed=1)
            df.print("between")
            b = df.random.uniform([2], seed=2)
            return a + b

        noisy.get_concrete_function()
    graph = noisy.get_concrete_function().graph
    uniform = [op for op in graph.get_operations() if op.type == "RandomUniform"]
    assert len(uniform) == 2
    assert all(not op.control_inputs for op in uniform)
    (show,) = [op for op in graph.get_operations() if op.type == "PrintV2"]
    assert not show.control_inputs


# -- graph-mode callers --------------------------------------------------------------------------
def test_in_a_tf1_graph_the_effects_run_when_the_call_result_is_fetched(capsys):
    v = df.Variable(0.0)

    @df.function
    def step(x):
        v.assign_add(x)
        df.print("added", x)
        return x * 2.0

    y = step(df.constant(3.0))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run(y) == 6.0
        assert sess.run(v) == 3.0
    assert printed(capsys) == ["added 3"]


def test_in_a_tf1_graph_effects_inside_a_functions_cond_follow_the_branch(capsys):
    v = df.Variable(0.0)
    flag = df.placeholder(df.bool, [])

    @df.function
    def step(flag):
        if flag:
            v.assign_add(1.0)
            df.print("took it")
        return df.constant(0)

    out = step(flag)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(out, {flag: True})
        sess.run(out, {flag: False})
        sess.run(out, {flag: True})
        assert sess.run(v) == 2.0
    assert printed(capsys) == ["took it", "took it"]


# -- Python side effects run while tracing -------------------------------------------------------
def test_python_print_runs_once_per_trace_and_shows_the_symbolic_tensor(eager, capsys):
    @df.function
    def f(x):
        print("tracing with", x)
        return x + 1

    f(df.constant(1))
    f(df.constant(2))
    assert capsys.readouterr().out.splitlines() == [
        'tracing with Tensor("x:0", shape=(), dtype=int32)'
    ]
    f(df.constant([1, 2]))  # a new shape is a new trace
    assert capsys.readouterr().out.splitlines() == [
        'tracing with Tensor("x:0", shape=(2,), dtype=int32)'
    ]


def test_python_print_in_a_tensor_if_runs_for_both_branches_while_tracing(eager, capsys):
    @df.function
    def f(x):
        if x > 0:
            print("true branch traced")
        else:
            print("false branch traced")
        return x

    f(df.constant(1))
    f(df.constant(-1))
    assert capsys.readouterr().out.splitlines() == ["true branch traced", "false branch traced"]


def test_appending_to_a_python_list_happens_at_trace_time_only(eager):
    calls = []

    @df.function
    def f(x):
        calls.append(x)
        return x * 2

    f(df.constant(1.0))
    f(df.constant(2.0))
    assert len(calls) == 1
    assert str(calls[0]) == 'Tensor("x:0", shape=(), dtype=float32)'


def test_to_graph_still_converts_print_as_tensorflow_1_did(capsys):
    def show(x):
        print("value", x)
        return x + 1

    converted = df.autograph.to_graph(show)
    x = df.placeholder(df.int32, [])
    y = converted(x)
    with df.Session() as sess:
        assert sess.run(y, {x: 4}) == 5
        assert sess.run(y, {x: 6}) == 7
    assert printed(capsys) == ["value 4", "value 6"]


def test_print_conversion_is_the_builtin_functions_feature(capsys):
    def show(x):
        print("value", x)
        return x

    features = df.autograph.experimental.Feature
    x = df.placeholder(df.int32, [])
    kept = df.autograph.to_graph(show, experimental_optional_features=features.LISTS)
    kept(x)  # print stays Python's: it runs now, once
    assert capsys.readouterr().out.splitlines() == [
        'value Tensor("Placeholder:0", shape=(), dtype=int32)'
    ]
    staged = df.autograph.to_graph(show, experimental_optional_features=features.BUILTIN_FUNCTIONS)
    y = staged(x)
    assert capsys.readouterr().out == ""
    with df.Session() as sess:
        sess.run(y, {x: 3})
    assert printed(capsys) == ["value 3"]


# -- the names a trace gives its arguments ---------------------------------------------------------
def test_placeholders_are_named_after_the_parameters_as_tensorflow_names_them(eager):
    @df.function
    def f(a, b, *args, c=None, **extra):
        return a

    concrete = f.get_concrete_function(
        df.constant(1),
        [df.constant(2), df.constant(3)],
        df.constant(4),
        df.constant(5),
        c={"k": df.constant(1)},
        d=df.constant(2),
    )
    names = [t.name for t in concrete.inputs]
    assert names == ["a:0", "b:0", "b_1:0", "args_0:0", "args_1:0", "c:0", "d:0"]


def test_a_parameter_name_that_is_not_an_op_name_gives_the_default(eager):
    @df.function
    def f(_private, ok):
        return ok

    concrete = f.get_concrete_function(df.constant(1), df.constant(2))
    assert [t.name for t in concrete.inputs] == ["Placeholder:0", "ok:0"]


def test_an_input_signature_name_wins_over_the_parameter_name(eager):
    @df.function(
        input_signature=[df.TensorSpec([], df.int32, name="given"), df.TensorSpec([], df.int32)]
    )
    def f(x, y):
        return x + y

    assert [t.name for t in f.get_concrete_function().inputs] == ["given:0", "y:0"]


def test_a_graph_tensor_prints_as_tensorflow_shows_it():
    assert str(df.placeholder(df.int32, name="n")) == 'Tensor("n:0", dtype=int32)'
    assert str(df.placeholder(df.float32, [2, 3], name="m")) == (
        'Tensor("m:0", shape=(2, 3), dtype=float32)'
    )
    with df.device("/cpu:0"):
        c = df.constant(1.0, name="c")
    assert str(c) == 'Tensor("c:0", shape=(), dtype=float32, device=/device:CPU:0)'


def test_prints_go_where_output_stream_says(eager, capsys):
    @df.function
    def f():
        df.print("to stdout", output_stream=sys.stdout)

    f()
    assert capsys.readouterr().out == "to stdout\n"


# -- what a function returns, and the errors of programs that cannot be staged ------------------
def test_python_numbers_strings_and_arrays_returned_come_back_as_tensors(eager):
    import numpy as np

    v = df.Variable(1.5)

    @df.function
    def mixed():
        return 1, 2.0, True, None, "s", [3], {"k": 1.5}, np.ones(2), 2**40, v

    one, two, yes, none, text, listed, keyed, ones, big, read = mixed()
    assert (one.dtype, one.numpy()) == (df.int32, 1)
    assert (two.dtype, two.numpy()) == (df.float32, 2.0)
    assert (yes.dtype, yes.numpy()) == (df.bool, True)
    assert none is None
    assert (text.dtype, text.numpy()) == (df.string, b"s")
    assert listed[0].numpy() == 3 and keyed["k"].numpy() == 1.5
    assert ones.dtype == df.float64 and ones.numpy().tolist() == [1.0, 1.0]
    assert (big.dtype, big.numpy()) == (df.int64, 2**40)
    assert read.numpy() == 1.5 and not isinstance(read, df.Variable)


def test_an_empty_tuple_returned_stays_an_empty_tuple(eager):
    assert df.function(lambda: ())() == ()


@pytest.mark.parametrize(
    "returned, kind",
    [
        (lambda: df.no_op(), "Operation"),
        (lambda: object(), "object"),
        (lambda: df.float32, "DType"),
    ],
)
def test_returning_what_is_not_a_tensor_is_a_type_error(eager, returned, kind):
    with pytest.raises(TypeError, match=f"returned a value of type {kind}, which is not a Tensor"):
        df.function(returned)()


def test_recursion_on_tensors_is_a_staging_error_naming_the_call(eager):
    @df.function
    def countdown(n):
        if n > 0:
            return countdown(n - 1)
        return n

    with pytest.raises(df.autograph.StagingError, match="calls itself at .*test_tf2_function"):
        countdown(df.constant(3))


def test_recursion_on_python_values_traces_once_per_value(eager):
    @df.function
    def total(n):
        return n + total(n - 1) if n > 0 else df.constant(0)

    assert total(3).numpy() == 6


def test_a_tensor_leaked_out_of_a_trace_is_out_of_scope_in_eager_code(eager):
    leaked = []

    @df.function
    def keep(x):
        leaked.append(x * 2)
        return x

    keep(df.constant(1.0))
    with pytest.raises(TypeError, match="is out of scope and cannot be used here"):
        leaked[0] + 1


# -- a nested cond or loop is one link of the order ---------------------------------------------
def test_a_read_after_a_loop_sees_the_loops_writes_and_the_loop_sees_the_writes_before(eager):
    v = df.Variable(0.0)

    @df.function
    def run(n):
        v.assign(10.0)
        for _ in df.range(n):
            v.assign(v * 2.0)
        return v.read_value()

    assert run(df.constant(3)).numpy() == 80.0
    assert run(df.constant(0)).numpy() == 10.0


def test_a_read_after_a_cond_sees_the_branch_taken(eager):
    v = df.Variable(0.0)

    @df.function
    def run(x):
        v.assign(1.0)
        if x > 0:
            v.assign_add(x)
        else:
            v.assign_sub(1.0)
        return v.read_value() * 10.0

    assert run(df.constant(4.0)).numpy() == 50.0
    assert run(df.constant(-4.0)).numpy() == 0.0


def test_a_dataset_loop_updates_a_variable_a_later_read_sees(eager):
    w = df.Variable(0, dtype=df.int64)

    @df.function
    def total(ds):
        w.assign(100)
        for x in ds:
            w.assign_add(x)
        return w.read_value()

    assert total(df.data.Dataset.range(5)).numpy() == 110


def test_effects_are_ordered_per_variable_so_updates_of_different_variables_run_at_once():
    g = df.Graph()
    with g.as_default():
        v, w = df.Variable(1.0, name="v"), df.Variable(2.0, name="w")

        @df.function
        def update():
            v.assign_add(1.0, name="bump_v")
            w.assign_add(1.0, name="bump_w")
            v.assign(v * 2.0, name="double_v")
            df.print("done")
            df.print("twice")

        update.get_concrete_function()
    graph = update.get_concrete_function().graph
    op = {o.name: o for o in graph.get_operations()}
    waits = {name: {c.name for c in op[name].control_inputs} for name in op}
    assert waits["bump_w"] == set()  # another variable: free to run beside bump_v
    assert "bump_v" in waits["double_v"]  # the same variable: after the write before it
    read = op["double_v"].inputs[1].op.inputs[0].op  # the read of v that v * 2.0 makes
    assert read.type == "ReadVariableOp" and "bump_v" in {c.name for c in read.control_inputs}
    (first, second) = (o for o in graph.get_operations() if o.type == "PrintV2")
    assert first in second.control_inputs  # effects on no variable: in program order
