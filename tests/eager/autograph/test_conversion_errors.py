"""Errors in converted code name the user's variable and original line, never generated code;
and the failure mode conversion exists for: Python control flow on a graph tensor."""

import inspect
import traceback

import numpy as np
import pytest

import dataflow as df
from dataflow.eager import autograph

HERE = __file__


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def _line_of(function, text):
    """The file line number of the first line of ``function`` that contains ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _scalar(dtype=df.int32):
    return df.placeholder(dtype, [])


# -- names that have no value ----------------------------------------------------------------------
def defined_in_one_branch(x):
    if x > 0:
        y = x * 2
    return y + 1


def test_a_name_defined_in_one_branch_and_used_after_names_it_and_the_if_line():
    with pytest.raises(UnboundLocalError) as raised:
        autograph.to_graph(defined_in_one_branch)(_scalar())
    if_line = _line_of(defined_in_one_branch, "if x > 0")
    message = str(raised.value)
    assert "'y' is defined in only the true branch of the if" in message
    assert f"{HERE}:{if_line}" in message
    # The traceback's innermost user frame is the line that used it.
    user_frames = [f for f in traceback.extract_tb(raised.tb) if f.filename == HERE]
    assert user_frames[-1].lineno == _line_of(defined_in_one_branch, "return y + 1")
    assert user_frames[-1].line == "return y + 1"


def test_a_name_defined_in_one_branch_but_not_used_after_is_fine():
    def temporary_in_one_branch(x):
        if x > 0:
            t = x * 2
            x = t + 1
        return x

    x = _scalar()
    with df.Session() as sess:
        assert sess.run(autograph.to_graph(temporary_in_one_branch)(x), {x: 3}) == 7


def test_a_name_defined_in_one_branch_on_python_values_is_pythons_own_error():
    with pytest.raises(UnboundLocalError, match="'y'"):
        autograph.to_graph(defined_in_one_branch)(-1)
    assert autograph.to_graph(defined_in_one_branch)(2) == 5


def defined_only_in_loop(n):
    i = 0
    while i < n:
        last = i
        i += 1
    return last * 2


def test_a_name_assigned_only_inside_a_staged_loop_and_used_after_it():
    with pytest.raises(UnboundLocalError) as raised:
        autograph.to_graph(defined_only_in_loop)(_scalar())
    loop_line = _line_of(defined_only_in_loop, "while i < n")
    assert "'last' is assigned only inside the while loop" in str(raised.value)
    assert f"{HERE}:{loop_line}" in str(raised.value)


# -- loop variables that change type ---------------------------------------------------------------
def dtype_drift(n):
    x = 0
    i = 0
    while i < n:
        x = df.cast(x, df.float32) * 1.5
        i += 1
    return x


def test_a_loop_variable_whose_dtype_changes_names_it_and_the_loop_line():
    with pytest.raises(TypeError) as raised:
        autograph.to_graph(dtype_drift)(_scalar())
    loop_line = _line_of(dtype_drift, "while i < n")
    message = str(raised.value)
    assert "'x' changes dtype from int32 to float32 across iterations of the while loop" in message
    assert f"{HERE}:{loop_line}" in message


def test_a_loop_variable_whose_shape_changes_names_it():
    def growing(n):
        v = df.zeros([1])
        for _ in range(n):
            v = df.concat([v, v], 0)
        return v

    with pytest.raises(ValueError, match=r"'v' changes shape from \(1,\) to \(2,\)"):
        autograph.to_graph(growing)(_scalar())


# -- locations -------------------------------------------------------------------------------------
def builds_in_a_branch(x):
    if x > 0:
        y = df.identity(x, name="in_branch")
    else:
        y = x
    return y


def test_ops_built_by_converted_code_record_the_users_line(fresh_graph):
    autograph.to_graph(builds_in_a_branch)(_scalar())
    op = next(o for o in fresh_graph.get_operations() if o.name.endswith("in_branch"))
    assert op.location.filename == HERE
    assert op.location.lineno == _line_of(builds_in_a_branch, 'name="in_branch"')


def fails_at_run_time(x, p):
    if p > 0:
        y = df.reshape(x, [-1, 4])
    else:
        y = df.reshape(x, [-1, 2])
    return y


def test_a_run_time_op_error_names_the_users_line():
    x, p = df.placeholder(df.float32, [None]), _scalar()
    y = autograph.to_graph(fails_at_run_time)(x, p)
    with df.Session() as sess:
        assert sess.run(y, {x: np.ones(4, np.float32), p: 1}).shape == (1, 4)
        with pytest.raises(df.errors.InvalidArgumentError) as raised:
            sess.run(y, {x: np.ones(3, np.float32), p: 1})
    line = _line_of(fails_at_run_time, "[-1, 4]")
    assert f"{HERE}:{line}" in str(raised.value)


def raises_in_python(values):
    total = 0
    for v in values:
        if v == 0:
            total += 1 // v
        total += v
    return total


def test_a_python_exception_in_converted_code_shows_the_users_file_and_line():
    with pytest.raises(ZeroDivisionError) as raised:
        autograph.to_graph(raises_in_python)([1, 0])
    innermost = traceback.extract_tb(raised.tb)[-1]
    assert innermost.filename == HERE
    assert innermost.lineno == _line_of(raises_in_python, "1 // v")
    assert innermost.line == "total += 1 // v"


# -- the failure mode: Python control flow on a graph tensor ---------------------------------------
def relu_like(x):
    if x > 0:
        return x
    return 0 * x


def test_unconverted_python_if_on_a_placeholder_raises_a_clear_error():
    x = _scalar(df.float32)
    with pytest.raises(TypeError) as raised:
        relu_like(x)
    message = str(raised.value)
    assert "as a Python bool is not allowed" in message
    assert "df.cond" in message


def test_converted_python_if_on_a_placeholder_becomes_a_cond(fresh_graph):
    x = _scalar(df.float32)
    y = autograph.to_graph(relu_like)(x)
    assert {"Switch", "Merge"} <= {op.type for op in fresh_graph.get_operations()}
    with df.Session() as sess:
        assert sess.run(y, {x: 3.0}) == 3.0
        assert sess.run(y, {x: -3.0}) == 0.0


def test_a_function_without_source_gets_a_conversion_error():
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)
    with pytest.raises(autograph.ConversionError, match="source is not available"):
        autograph.to_graph(namespace["made"])


def test_shape_invariants_from_set_loop_options_let_a_loop_variable_grow():
    def doubling(n):
        v = df.ones([1])
        for _ in range(n):
            autograph.set_loop_options(shape_invariants=[(v, [None])])
            v = df.concat([v, v], 0)
        return v

    assert "set_loop_options" not in autograph.to_code(doubling).split("for_body")[1]
    n = _scalar()
    v = autograph.to_graph(doubling)(n)
    with df.Session() as sess:
        assert sess.run(v, {n: 3}).shape == (8,)
    assert autograph.to_graph(doubling)(2).shape.as_list() == [4]


COUNTER = 0


def test_a_global_assigned_in_a_converted_statement_is_refused_with_its_name():
    def bump(x):
        global COUNTER
        if x > 0:
            COUNTER = COUNTER + 1
        return x

    with pytest.raises(autograph.ConversionError, match="'COUNTER' is declared global"):
        autograph.to_graph(bump)
