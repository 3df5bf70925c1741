"""The graph IR: names, scopes, control dependencies, lookups, shapes, finalize."""

import sys
import types

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_tensor_names_are_op_name_and_output_index():
    x = df.constant(1.0, name="x")
    assert x.name == "x:0"
    assert x.op.name == "x"
    assert x.op.outputs == [x]
    assert x.graph is df.get_default_graph()


def test_duplicate_names_are_made_unique_like_tensorflow():
    a = df.constant(1.0, name="c")
    b = df.constant(2.0, name="c")
    c = df.constant(3.0, name="c")
    assert [a.op.name, b.op.name, c.op.name] == ["c", "c_1", "c_2"]


def test_name_scopes_prefix_and_nest():
    with df.name_scope("layer"):
        a = df.constant(1.0, name="w")
        with df.name_scope("inner"):
            b = df.constant(1.0, name="w")
    with df.name_scope("layer"):
        c = df.constant(1.0, name="w")
    assert a.op.name == "layer/w"
    assert b.op.name == "layer/inner/w"
    assert c.op.name == "layer_1/w"


def test_name_scope_with_trailing_slash_reenters_the_same_scope():
    with df.name_scope("s") as scope:
        pass
    with df.name_scope(scope):
        a = df.constant(1.0, name="a")
    assert a.op.name == "s/a"


def test_lookup_by_name(fresh_graph):
    x = df.placeholder(df.float32, shape=[None, 3], name="x")
    assert fresh_graph.get_tensor_by_name("x:0") is x
    assert fresh_graph.get_operation_by_name("x") is x.op
    assert x in fresh_graph.get_operations()[0].outputs


@pytest.mark.parametrize(
    "lookup, name, error",
    [
        ("get_tensor_by_name", "nope:0", KeyError),
        ("get_tensor_by_name", "x", ValueError),
        ("get_tensor_by_name", "x:1", KeyError),
        ("get_operation_by_name", "nope", KeyError),
        ("get_operation_by_name", "x:0", ValueError),
    ],
)
def test_lookup_of_unknown_or_malformed_names_raises(fresh_graph, lookup, name, error):
    df.placeholder(df.float32, name="x")
    with pytest.raises(error):
        getattr(fresh_graph, lookup)(name)


def test_partial_shapes_print_question_marks():
    x = df.placeholder(df.float32, shape=[None, 3])
    assert x.shape.as_list() == [None, 3]
    assert x.get_shape()[1] == 3
    assert str(x.shape) == "(?, 3)"
    unknown = df.placeholder(df.float32)
    assert unknown.shape.ndims is None


def test_control_dependencies_apply_to_ops_created_inside():
    a = df.constant(1.0, name="a")
    with df.control_dependencies([a]):
        b = df.constant(2.0, name="b")
        with df.control_dependencies(None):
            c = df.constant(3.0, name="c")
    assert b.op.control_inputs == [a.op]
    assert c.op.control_inputs == []


def test_tensor_in_python_bool_context_points_to_cond():
    x = df.constant(True)
    with pytest.raises(TypeError, match="df.cond"):
        if x:
            pass


def test_tensors_hash_and_compare_by_identity():
    a = df.constant(1.0)
    b = df.constant(1.0)
    assert a != b
    assert {a: 1, b: 2}[a] == 1


def test_finalized_graph_refuses_new_ops(fresh_graph):
    df.constant(1.0)
    fresh_graph.finalize()
    with pytest.raises(RuntimeError, match="finalized") as info:
        df.constant(2.0, name="late")
    assert "'late'" in str(info.value) and "test_graph.py:" in str(info.value)


def test_ops_remember_the_users_file_and_line():
    x = df.constant(1.0)
    assert x.op.location.filename == __file__
    assert "test_graph.py:" in str(x.op.location)


def test_ops_built_in_a_notebook_cell_name_the_cell_as_ipython_does(monkeypatch):
    class Compiler:  # IPython's CachingCompiler knows which cell each made-up file holds
        @staticmethod
        def format_code_name(filename):
            return ("Cell", "In[7]") if filename == __file__ else None

    class Shell:
        compile = Compiler()

    fake_ipython = types.SimpleNamespace(get_ipython=lambda: Shell())
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython)
    x = df.constant(1.0)
    line = x.op.location.lineno
    assert str(x.op.location) == f"Cell In[7], line {line}"
    assert x.op.location.filename == __file__  # saved graphs keep the real file


def test_inputs_from_another_graph_are_rejected():
    x = df.constant(1.0)
    with df.Graph().as_default():
        y = df.constant(2.0)
        with pytest.raises(ValueError, match="same graph"):
            df.add(x, y)


def test_constant_dtype_follows_tensorflow():
    assert df.constant(1.0).dtype is df.float32
    assert df.constant(1).dtype is df.int32
    assert df.constant(True).dtype is df.bool
    assert df.constant(np.float64(1.0)).dtype is df.float64
    assert df.constant(np.arange(3)).dtype is df.int64
    assert df.constant(2, dtype=df.float64).dtype is df.float64
    assert df.constant(0.0, shape=[2, 3]).shape.as_list() == [2, 3]
    with pytest.raises(TypeError):
        df.constant(1.5, dtype=df.int32)


def test_graph_prints_as_text_one_op_per_line():
    x = df.placeholder(df.float32, shape=[2], name="x")
    df.add(x, x, name="y")
    text = str(df.get_default_graph())
    assert "x -> float32(2,) = Placeholder" in text
    assert "y -> float32(2,) = Add(x:0, x:0)" in text


def test_reset_default_graph_gives_an_empty_graph():
    outer = df.get_default_graph()
    assert outer is not None
    # reset only applies to the global default graph, outside any as_default block
    with pytest.raises(AssertionError):
        df.reset_default_graph()


def test_control_dependency_on_a_data_input_is_dropped():
    a = df.constant([1.0], name="a")
    with df.control_dependencies([a]):
        b = df.identity(a)
        c = a + 1.0
    assert b.op.control_inputs == [] and c.op.control_inputs == []


def test_an_input_created_in_the_same_block_makes_the_control_edge_redundant():
    x = df.placeholder(df.float32, [], name="x")
    first = df.identity(x, name="first")
    with df.control_dependencies([first]):
        inner = df.identity(x, name="inner")  # waits for first
        after = df.identity(inner, name="after")  # inner already waits: no edge of its own
    assert inner.op.control_inputs == [first.op]
    assert after.op.control_inputs == []
    with df.control_dependencies([first]):
        outside_input = df.identity(after)  # `after` came from another block
    assert outside_input.op.control_inputs == [first.op]


def test_malformed_tensor_name_is_a_value_error():
    df.constant(1.0, name="b")
    graph = df.get_default_graph()
    with pytest.raises(ValueError):
        graph.get_tensor_by_name("b:0:0")
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("nope:0")


def test_a_list_mixing_tensors_and_numbers_is_packed_into_one_tensor():
    a = df.placeholder(df.float32, shape=[])
    packed = df.convert_to_tensor([[a, 1.0], [2 * a, 3]])
    assert packed.op.type == "Pack" and packed.dtype == df.float32
    assert packed.shape.as_list() == [2, 2]
    softmax = df.nn.softmax([a, df.constant(0.0)])  # as ops take lists of tensors in TF
    with df.Session() as sess:
        value, probabilities = sess.run([packed, softmax], {a: 2.0})
    np.testing.assert_array_equal(value, np.array([[2, 1], [4, 3]], np.float32))
    np.testing.assert_allclose(probabilities, [1 / (1 + np.exp(-2)), 1 / (1 + np.exp(2))], 1e-6)


def test_packing_a_list_whose_tensors_disagree_on_dtype_names_both_and_the_line():
    with pytest.raises(ValueError) as info:
        df.convert_to_tensor([df.constant(1), [df.constant(1.0)]])
    message = str(info.value)
    assert "int32" in message and "float32" in message
    assert message.startswith("Pack op 'packed' at ") and "test_graph.py" in message


def test_packing_a_list_of_tensors_into_another_dtype_casts_them_as_tensorflow_does():
    i = df.constant(2)
    packed = df.convert_to_tensor([[i], [i + 1]], dtype=df.int64)
    assert packed.dtype == df.int64 and packed.shape.as_list() == [2, 1]
    joined = df.concat([df.constant([[0], [3]], df.int64), [[i], [i]]], axis=1)
    with df.Session() as sess:
        assert sess.run(packed).tolist() == [[2], [3]]
        assert sess.run(joined).tolist() == [[0, 2], [3, 2]]


@pytest.mark.parametrize("bad", ["x:y", "a b", "_hidden", "ü", "a\n"])
def test_an_invalid_scope_name_is_refused_with_the_line(bad):
    with pytest.raises(ValueError) as info:
        with df.name_scope(bad):
            pass
    assert "not a valid scope name" in str(info.value)
    assert "test_graph.py" in str(info.value)


@pytest.mark.parametrize("bad", ["a\n", "a\n/", "a\nb", "a b"])
def test_an_op_name_with_a_newline_even_at_its_end_is_refused(bad):
    """A name check that ends in ``$`` lets a final newline through: the checks end in ``\\Z``."""
    with pytest.raises(ValueError, match="is not a valid op name"):
        df.constant(1.0, name=bad)


def test_inside_a_scope_a_name_may_start_with_an_underscore():
    with df.name_scope("outer"):
        with df.name_scope("_inner") as scope:
            assert scope == "outer/_inner/"


def test_tensor_shapes_concatenate_and_check_ranks_like_tensorflow():
    shape = df.TensorShape([2, None])
    assert shape.concatenate([3]) == df.TensorShape([2, None, 3])
    assert shape + df.TensorShape(None) == df.TensorShape(None)
    assert [1] + shape == df.TensorShape([1, 2, None])
    assert df.TensorShape(None).with_rank(2) == df.TensorShape([None, None])
    assert shape.with_rank(2) is not None and shape.with_rank_at_least(1) == shape
    with pytest.raises(ValueError, match="must have rank 3"):
        shape.with_rank(3)
    with pytest.raises(ValueError, match="at most 1"):
        shape.with_rank_at_most(1)
    with pytest.raises(ValueError, match="incompatible"):
        shape.assert_is_compatible_with([3, 4])
    with pytest.raises(ValueError, match="not fully defined"):
        shape.assert_is_fully_defined()
    shape.assert_same_rank([7, 7])
    assert df.dimension_value(shape[0]) == 2 and df.dimension_value(shape[1]) is None


def test_get_attr_derives_tensorflows_type_attributes():
    a = df.placeholder(df.float32, [2, 2], name="a")
    flag = df.placeholder(df.bool, [2, 2], name="flag")
    assert (a + a).op.get_attr("T") == df.float32
    assert df.where(flag, a, a).op.get_attr("T") == df.float32  # not the bool condition
    assert df.logical_not(flag).op.get_attr("T") == df.bool
    cast = df.cast(a, df.int32)
    assert cast.op.get_attr("SrcT") == df.float32 and cast.op.get_attr("DstT") == df.int32
    assert df.add_n([a, a, a]).op.get_attr("N") == 3
    assert df.reduce_sum(a, 1, keepdims=True).op.get_attr("keep_dims") is True
    assert df.matmul(a, a, transpose_a=True).op.get_attr("transpose_a") is True
    with pytest.raises(ValueError, match="has no attr named 'T'"):
        df.constant(1.0, name="c").op.get_attr("T")
    with pytest.raises(ValueError, match="has no attr named 'T'"):
        cast.op.get_attr("T")
