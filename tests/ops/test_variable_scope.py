"""variable_scope and get_variable: names, reuse, scope defaults and errors as tf.compat.v1.

The expected names and messages are those of TensorFlow 2.21's ``tf.compat.v1`` in graph mode
(``disable_v2_behavior()``, ``disable_control_flow_v2()``) running the same program.
"""

import threading

import numpy as np
import pytest
from autodiff.gradient_checking import numeric_gradient

import dataflow as df

HERE = __file__


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def ones(shape, dtype=None, partition_info=None):
    return df.ones(shape, dtype, name="ones")


def fill(value):
    def initializer(shape, dtype=None, partition_info=None):
        return df.fill(shape, df.constant(value, dtype), name="fill")

    return initializer


def test_variable_names_follow_variable_scopes_and_op_names_follow_name_scopes():
    with df.variable_scope("a"):
        w = df.get_variable("w", [2, 3], initializer=ones)
        c = df.constant(1.0, name="c")
    assert (w.name, w.op.name, w.initializer.name) == ("a/w:0", "a/w", "a/w/Assign")
    assert w.initial_value.name == "a/w/Initializer/ones:0"
    assert c.name == "a/c:0"
    with df.name_scope("ns"), df.variable_scope("vs") as scope:
        v = df.get_variable("v", [], initializer=ones)
        with df.name_scope("inner"):
            u = df.get_variable("u", [], initializer=ones)
        c = df.constant(2.0, name="c")
    # TF: vs/v:0 vs/u:0 ns/vs/c:0, original_name_scope 'ns/vs/'
    assert (v.name, u.name, c.name) == ("vs/v:0", "vs/u:0", "ns/vs/c:0")
    assert scope.original_name_scope == "ns/vs/"


def test_entering_a_scope_name_again_makes_a_new_name_scope_but_keeps_variable_names():
    with df.variable_scope("a"):
        df.get_variable("w", [1], initializer=ones)
    with df.variable_scope("a", reuse=True) as scope:
        c = df.constant(1.0, name="c")
        w = df.get_variable("w", [1])
    assert (scope.name, scope.original_name_scope) == ("a", "a_1/")
    assert (c.name, w.name) == ("a_1/c:0", "a/w:0")


def test_entering_a_scope_object_again_keeps_its_name_and_original_name_scope():
    with df.variable_scope("s") as s:
        w = df.get_variable("w", [1], initializer=ones)
    with df.variable_scope("x"):
        with df.variable_scope(s, reuse=True) as again:
            c = df.constant(0.0, name="c")
            assert df.get_variable("w", [1]) is w
    # TF: scope 's', ops under 'x/s/', original_name_scope 's/'
    assert (again.name, again.original_name_scope, c.name) == ("s", "s/", "x/s/c:0")


def test_a_scope_object_entered_again_has_its_own_reuse_not_the_enclosing_one():
    with df.variable_scope("s") as s:
        pass
    with df.variable_scope("outer", reuse=True):
        with df.variable_scope(s):
            assert df.get_variable_scope().reuse is False
        with df.variable_scope(s, reuse=df.AUTO_REUSE):
            assert df.get_variable_scope().reuse is df.AUTO_REUSE


def test_creating_an_existing_variable_without_reuse_names_both_lines():
    with df.variable_scope("a"):
        df.get_variable("w", [2, 3], initializer=ones)
    with df.variable_scope("a"):
        with pytest.raises(ValueError) as error:
            df.get_variable("w", [2, 3])
    message = str(error.value)
    assert message.startswith(
        "Variable a/w already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope?"
    )
    assert message.count(f"{HERE}:") == 2


def test_reusing_a_missing_variable_or_another_shape_or_dtype_is_an_error():
    with df.variable_scope("a"):
        df.get_variable("w", [2, 3], initializer=ones)
    with df.variable_scope("a", reuse=True):
        with pytest.raises(ValueError, match="Variable a/zz does not exist, or was not created"):
            df.get_variable("zz", [2, 3])
        with pytest.raises(
            ValueError,
            match=r"Trying to share variable a/w, but specified shape \(3, 3\) and found shape "
            r"\(2, 3\)",
        ):
            df.get_variable("w", [3, 3])
        with pytest.raises(
            ValueError, match="specified dtype int32 and found dtype float32 .*test_variable_scope"
        ):
            df.get_variable("w", [2, 3], dtype=df.int32)
        assert df.get_variable("w", [None, 3]).name == "a/w:0"


def test_reuse_is_inherited_and_cannot_be_turned_off_inside():
    with df.variable_scope("a", reuse=True):
        with df.variable_scope("sub"):
            assert df.get_variable_scope().reuse is True
        with df.variable_scope("off", reuse=False):
            assert df.get_variable_scope().reuse is True
    with df.variable_scope("b") as b:
        assert b.reuse is False
        b.reuse_variables()
        assert df.get_variable_scope().reuse is True
    with df.variable_scope("b"):
        assert df.get_variable_scope().reuse is False


def test_auto_reuse_creates_once_and_then_returns_the_same_variable():
    def layer():
        with df.variable_scope("layer", reuse=df.AUTO_REUSE):
            return df.get_variable("w", [2], initializer=ones)

    assert layer() is layer()
    assert [v.name for v in df.global_variables()] == ["layer/w:0"]


def test_default_names_are_made_unique_per_enclosing_scope():
    names = []
    with df.variable_scope("top"):
        for _ in range(2):
            with df.variable_scope(None, default_name="d"):
                names.append(df.get_variable_scope().name)
    with df.variable_scope("top"):
        with df.variable_scope(None, default_name="d"):
            names.append(df.get_variable_scope().name)
            names.append(df.constant(0, name="c").name)
    with df.variable_scope(None, default_name="top"):
        names.append(df.get_variable_scope().name)
    # TF: top/d, top/d_1, then top/d again (ops under top_1/d/), then top_1
    assert names == ["top/d", "top/d_1", "top/d", "top_1/d/c:0", "top_1"]


def test_auxiliary_name_scope_false_leaves_op_names_alone():
    with df.variable_scope("e", auxiliary_name_scope=False) as scope:
        v = df.get_variable("q", [], initializer=ones)
        c = df.constant(1, name="c")
    assert (v.name, c.name, scope.original_name_scope) == ("e/q:0", "c:0", "")


def test_bad_scope_arguments_are_errors_as_in_tensorflow():
    with pytest.raises(TypeError, match="name_or_scope must be a string or VariableScope"):
        df.variable_scope(3)
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        df.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        df.variable_scope(None, default_name="z", reuse=True)
    with pytest.raises(NotImplementedError, match="Partitioned variables"):
        df.get_variable("p", [4], partitioner=lambda shape, dtype: [2])


def test_initializers_may_be_functions_classes_tensors_or_values():
    class Ones:
        def __call__(self, shape, dtype=None):
            return df.ones(shape, dtype, name="ones")

    from_class = df.get_variable("from_class", [2], initializer=Ones)
    no_arguments = df.get_variable("no_arguments", initializer=lambda: df.ones([2]))
    tensor = df.constant([1, 2])
    from_tensor = df.get_variable("from_tensor", initializer=tensor)
    from_list = df.get_variable("from_list", initializer=[1.0, 2.0])
    from_numpy = df.get_variable("from_numpy", initializer=np.ones((2, 2)))
    assert from_class.initial_value.name == "from_class/Initializer/ones:0"
    assert no_arguments.initial_value.name == "no_arguments/Initializer/ones:0"
    assert from_tensor.initial_value is tensor and from_tensor.dtype is df.int32
    assert from_list.initial_value.name == "from_list/initial_value:0"
    assert (from_list.dtype, from_numpy.dtype, from_numpy.shape) == (df.float32, df.float64, (2, 2))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run(from_tensor).tolist() == [1, 2]
        assert sess.run(from_class).tolist() == [1.0, 1.0]


def test_bad_initializer_arguments_are_errors_naming_the_line():
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        df.get_variable("k", [2], initializer=df.constant([1, 2]))
    with pytest.raises(ValueError, match="Initializer type 'int32' and explicit dtype 'float32'"):
        df.get_variable("k", initializer=df.constant([1, 2]), dtype=df.float32)
    with pytest.raises(ValueError, match=rf"initializer passed is not valid.*\(\?, 2\).*{HERE}"):
        df.get_variable("k", [None, 2], initializer=ones)
    with pytest.raises(ValueError, match="An initializer for variable s of resource is required"):
        df.get_variable("s", [2], dtype=df.resource)


def test_scope_defaults_apply_to_get_variable_inside_and_nested_scopes():
    with df.variable_scope("k", initializer=fill(3.0), dtype=df.float64):
        k = df.get_variable("k", [2])
        with df.variable_scope("inner"):
            inner = df.get_variable("j", [1])
        own = df.get_variable("own", [1], dtype=df.float32, initializer=ones)
    assert (k.dtype, inner.dtype, own.dtype) == (df.float64, df.float64, df.float32)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run(k).tolist() == [3.0, 3.0] and sess.run(inner).tolist() == [3.0]


def test_a_regularizer_adds_its_loss_built_under_the_variable_name():
    def half_sum(w):
        return df.reduce_sum(w) * 0.5

    with df.variable_scope("r", regularizer=half_sum):
        w = df.get_variable("w", [2], initializer=ones)
        df.get_variable("free", [2], initializer=ones, regularizer=df.no_regularizer)
    (loss,) = df.get_collection(df.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.name.startswith("r/w/Regularizer/")
    with df.Session() as sess:
        sess.run(w.initializer)
        assert sess.run(loss) == 1.0


def test_custom_getters_see_every_argument_and_nest_outer_first():
    calls = []

    def rename(getter, name, *args, **kwargs):
        calls.append(("rename", name, sorted(kwargs)))
        return getter(name + "_x", *args, **kwargs)

    def trace(getter, name, *args, **kwargs):
        calls.append(("trace", name))
        return getter(name, *args, **kwargs)

    with df.variable_scope("cg", custom_getter=rename):
        with df.variable_scope("in", custom_getter=trace):
            v = df.get_variable("w", [1], initializer=ones)
    assert v.name == "cg/in/w_x:0"
    keywords = ["aggregation", "caching_device", "collections", "constraint", "dtype"]
    keywords += ["initializer", "partitioner", "regularizer", "reuse", "shape"]
    keywords += ["synchronization", "trainable", "use_resource", "validate_shape"]
    assert calls == [("trace", "cg/in/w"), ("rename", "cg/in/w", keywords)]


def test_get_variable_in_a_loop_body_and_a_branch_makes_one_variable_outside_them():
    x = df.placeholder(df.float32, [])

    def body(i):
        with df.variable_scope("loop", reuse=df.AUTO_REUSE):
            v = df.get_variable("v", [], initializer=ones)
            c = df.constant(1.0, name="c")
        assert (v.initializer.name, c.name) == ("loop/v/Assign", "while/loop/c:0")
        return i + v * c

    def taken():
        with df.variable_scope("branch"):
            return df.get_variable("v", [], initializer=fill(2.0)) + 1.0

    out = df.while_loop(lambda i: i < 5, body, [x])
    chosen = df.cond(x > 0, taken, lambda: x)
    assert [v.name for v in df.global_variables()] == ["loop/v:0", "branch/v:0"]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run([out, chosen], {x: 1.0}) == [5.0, 3.0]


def test_the_gradient_reaches_a_shared_variable_through_each_use():
    x = df.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))

    def layer(inputs):
        with df.variable_scope("dense", reuse=df.AUTO_REUSE):
            w = df.get_variable("w", [3, 3], dtype=df.float64, initializer=fill(0.1))
            return df.tanh(df.matmul(inputs, w) + x)

    loss = df.reduce_sum(layer(layer(x)) * np.arange(6.0).reshape(2, 3))
    (w,) = df.trainable_variables()
    (grad,) = df.gradients(loss, [w])
    with df.Session() as sess:
        start = np.linspace(-0.5, 0.5, 9).reshape(3, 3)

        def run_loss(values):
            w.load(values[0], sess)
            return sess.run(loss)

        (expected,) = numeric_gradient(run_loss, [start])
        w.load(start, sess)
        np.testing.assert_allclose(sess.run(grad), expected, rtol=1e-6, atol=1e-8)


def test_local_variables_and_collections_of_get_variable():
    with df.variable_scope("m"):
        trained = df.get_variable("w", [1], initializer=ones)
        frozen = df.get_variable("f", [1], initializer=ones, trainable=False)
        local = df.get_local_variable("count", [], dtype=df.int32, initializer=fill(0))
        custom = df.get_variable("c", [1], initializer=ones, collections=["mine"])
    # As TF: a trainable variable is added to TRAINABLE_VARIABLES whatever its collections.
    assert df.trainable_variables() == [trained, custom]
    assert df.global_variables() == [trained, frozen]
    assert df.local_variables() == [local] and not local.trainable
    assert df.get_collection("mine") == [custom]
    with df.variable_scope("m") as scope:
        assert scope.global_variables() == [trained, frozen]
        assert scope.trainable_variables() == [trained, custom]
        assert scope.local_variables() == [local]


def test_each_thread_starts_at_the_root_scope_and_shares_the_variables(fresh_graph):
    seen = []

    def worker():
        with fresh_graph.as_default():
            seen.append(df.get_variable_scope().name)
            with df.variable_scope("a", reuse=True):
                seen.append(df.get_variable("w").name)

    with df.variable_scope("a"):
        df.get_variable("w", [1], initializer=ones)
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen == ["", "a/w:0"]


def test_scoped_variables_save_load_and_render(fresh_graph, tmp_path):
    with df.variable_scope("layer", regularizer=lambda w: df.reduce_sum(w * w)):
        w = df.get_variable("w", [2], initializer=fill(2.0))
    path = tmp_path / "scoped.dfg"
    df.io.save_graph(fresh_graph, path)
    loaded = df.io.load_graph(path)
    with loaded.as_default():
        (variable,) = df.global_variables()
        (loss,) = df.get_collection(df.GraphKeys.REGULARIZATION_LOSSES)
        assert variable.name == w.name == "layer/w:0"
        with df.Session() as sess:
            sess.run(variable.initializer)
            assert sess.run(loss) == 8.0
    dot = df.render(w, str(tmp_path / "scoped"), format="dot").source
    assert "layer" in dot


def test_default_initializers_are_glorot_uniform_for_floats_and_zeros_otherwise():
    with df.variable_scope("a"):
        w = df.get_variable("w", [2, 3])
        i = df.get_variable("i", [2], dtype=df.int32)
        b = df.get_variable("b", [2], dtype=df.bool)
    # TF: the same initial value names, and these ops for a/w, in this order
    assert (w.initial_value.name, i.initial_value.name, b.initial_value.name) == (
        "a/w/Initializer/random_uniform:0",
        "a/i/Initializer/zeros:0",
        "a/b/Initializer/zeros:0",
    )
    made = [op.name for op in df.get_default_graph().get_operations() if op.name.startswith("a/w")]
    uniform = "a/w/Initializer/random_uniform"
    assert made == [
        f"{uniform}/{n}" for n in ("shape", "min", "max", "RandomUniform", "sub", "mul")
    ] + [
        uniform,
        "a/w",
        "a/w/Assign",
        "a/w/read",
    ]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        weights, ints, bools = sess.run([w, i, b])
    limit = np.sqrt(6.0 / (2 + 3))
    assert np.all(np.abs(weights) <= limit) and len(np.unique(weights)) == 6
    assert ints.tolist() == [0, 0] and bools.tolist() == [False, False]
