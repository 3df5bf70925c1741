"""``df.function(experimental_autograph_options=...)``: AutoGraph's optional conversions.

What each ``df.autograph.experimental.Feature`` changes is what it changes in TF 2.21's
``tf.function``: ``ASSERT_STATEMENTS`` (assert), ``LISTS`` (list appends in staged loops),
``BUILTIN_FUNCTIONS`` (print) and ``NAME_SCOPES`` (a name scope per function) change the trace;
``EQUALITY_OPERATORS`` and ``AUTO_CONTROL_DEPS`` change nothing a program sees.  Without a choice
(None) this AutoGraph converts assert, appends and print (TF's None converts none of them)."""

import pytest

import dataflow as df

Feature = df.autograph.experimental.Feature


def checked(x):
    assert x > 0, "x must be positive"
    return x + 1


def shown(x):
    print("value", x)
    return x


def doubled(x):
    return x * 2


def collected(x):
    items = []
    for i in df.range(x):
        items.append(i)
    return items


def _ops(function, argument) -> list:
    graph = function.get_concrete_function(argument).graph
    return [op.name for op in graph.get_operations() if op.type != "Identity"]


def test_feature_is_tensorflows_enum():
    assert [f.name for f in Feature] == [
        "ALL",
        "AUTO_CONTROL_DEPS",
        "ASSERT_STATEMENTS",
        "BUILTIN_FUNCTIONS",
        "EQUALITY_OPERATORS",
        "LISTS",
        "NAME_SCOPES",
    ]
    assert Feature.LISTS.value == "LISTS" and Feature.all() == tuple(Feature)
    assert set(Feature.all_but(Feature.LISTS)) == set(Feature) - {Feature.ALL, Feature.LISTS}


# -- ASSERT_STATEMENTS -----------------------------------------------------------------------------
def test_assert_statements_become_graph_assertions(eager):
    function = df.function(checked, experimental_autograph_options=Feature.ASSERT_STATEMENTS)
    assert int(function(df.constant(1))) == 2
    assert "Assert/Assert" in _ops(function, df.constant(1))
    with pytest.raises(df.errors.InvalidArgumentError, match="x must be positive"):
        function(df.constant(-1))


def test_without_assert_statements_an_assert_on_a_tensor_is_a_type_error(eager):
    # TF 2.21: OperatorNotAllowedInGraphError, a TypeError, for `assert` on a symbolic tensor.
    function = df.function(checked, experimental_autograph_options=(Feature.LISTS,))
    with pytest.raises(TypeError, match="as a Python bool is not allowed"):
        function(df.constant(1))


# -- BUILTIN_FUNCTIONS -----------------------------------------------------------------------------
def test_builtin_functions_make_print_run_with_the_function(eager, capfd):
    function = df.function(shown, experimental_autograph_options=Feature.BUILTIN_FUNCTIONS)
    function(df.constant(3))
    function(df.constant(4))
    printed = capfd.readouterr()
    assert "value 3" in printed.out + printed.err and "value 4" in printed.out + printed.err
    assert [op for op in _ops(function, df.constant(3)) if op != "x"] == ["PrintV2"]


def test_without_builtin_functions_print_runs_once_while_tracing(eager, capsys):
    function = df.function(shown, experimental_autograph_options=())
    function(df.constant(3))
    function(df.constant(4))
    printed = capsys.readouterr().out
    assert printed == 'value Tensor("x:0", shape=(), dtype=int32)\n'
    assert _ops(function, df.constant(3)) == ["x"]


# -- NAME_SCOPES -----------------------------------------------------------------------------------
def test_name_scopes_put_each_function_in_a_scope_of_its_name(eager):
    scoped = df.function(doubled, experimental_autograph_options=Feature.NAME_SCOPES)
    assert _ops(scoped, df.constant(1)) == ["x", "doubled/mul/y", "doubled/mul"]
    plain = df.function(doubled, experimental_autograph_options=Feature.ASSERT_STATEMENTS)
    assert _ops(plain, df.constant(1)) == ["x", "mul/y", "mul"]


def test_name_scopes_reach_the_functions_a_function_calls(eager):
    def _helper(x):
        return x + 1

    def outer(x):
        return _helper(x) * 2

    scoped = df.function(outer, experimental_autograph_options=Feature.NAME_SCOPES)
    # A leading underscore is not a valid scope start: TensorFlow puts "fn" before it.
    assert _ops(scoped, df.constant(1)) == [
        "x",
        "outer/fn_helper/add/y",
        "outer/fn_helper/add",
        "outer/mul/y",
        "outer/mul",
    ]


# -- LISTS -----------------------------------------------------------------------------------------
def test_without_lists_an_append_in_a_staged_loop_is_an_error(eager):
    # TF 2.21: InaccessibleTensorError, a ValueError, for the same program.
    function = df.function(collected, experimental_autograph_options=())
    with pytest.raises(ValueError, match="inside the while loop"):
        function(df.constant(3))


def test_lists_make_an_appended_list_a_loop_variable(eager):
    # TF 2.21 fails this program ("Trying to push to list with wrong element dtype": its
    # TensorList has no element type); here the list becomes a TensorArray, which stacks.
    def stacked(x):
        items = []
        for i in df.range(x):
            items.append(i * 2)
        return df.autograph.stack(items)

    function = df.function(stacked, experimental_autograph_options=Feature.LISTS)
    assert function(df.constant(3)).numpy().tolist() == [0, 2, 4]


# -- features that change nothing ------------------------------------------------------------------
@pytest.mark.parametrize("feature", [Feature.EQUALITY_OPERATORS, Feature.AUTO_CONTROL_DEPS])
def test_equality_operators_and_auto_control_deps_change_nothing(eager, feature):
    def branch(x):
        if x == 1:
            return x + 1
        return x - 1

    chosen = df.function(branch, experimental_autograph_options=feature)
    neither = df.function(branch, experimental_autograph_options=())
    assert int(chosen(df.constant(1))) == 2 and int(chosen(df.constant(5))) == 4
    assert _ops(chosen, df.constant(1)) == _ops(neither, df.constant(1))


def test_all_chooses_every_feature(eager, capfd):
    function = df.function(shown, experimental_autograph_options=Feature.ALL)
    function(df.constant(7))
    assert "value 7" in "".join(capfd.readouterr())
    assert _ops(function, df.constant(7)) == ["x", "shown/PrintV2"]


def test_no_choice_keeps_this_autographs_default(eager, capfd):
    function = df.function(checked)
    assert int(function(df.constant(1))) == 2
    assert "Assert/Assert" in _ops(function, df.constant(1))
    # Without a choice print stays Python's, as in TensorFlow 2: it runs while tracing only.
    printer = df.function(shown, experimental_autograph_options=None)
    printer(df.constant(5))
    printer(df.constant(6))
    assert capfd.readouterr().out == 'value Tensor("x:0", shape=(), dtype=int32)\n'


@pytest.mark.parametrize("options", ["LISTS", 3, [Feature.ALL, "y"]])
def test_anything_but_features_is_a_type_error(options):
    with pytest.raises(TypeError, match=r"df.function\(experimental_autograph_options=\)"):
        df.function(doubled, experimental_autograph_options=options)
