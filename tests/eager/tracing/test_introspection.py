"""What a df.function and its traces say about themselves, as TensorFlow 2.21's do.

Every expected text below is what TF 2.21 prints for the same program, with ``df.`` where TF
prints ``tf.``.  Shapes print as the shape switch says: ``(?,)`` by default (TF 2.21 prints so
too after ``tf.compat.v1.disable_v2_tensorshape()``), ``(None,)`` after
``df.enable_v2_tensorshape()`` (TF 2's default).
"""

import inspect
import re

import numpy as np
import pytest

import dataflow as df


@pytest.fixture
def v2_shapes():
    """Shapes print as TensorFlow 2 prints them, ``(None,)``."""
    df.enable_v2_tensorshape()
    yield
    df.disable_v2_tensorshape()


def _without_ids(text: str) -> str:
    """``text`` with the object ids of captures replaced by ``ID``."""
    return re.sub(r"^  \d+: ", "  ID: ", text, flags=re.M)


# -- ConcreteFunction.pretty_printed_signature -----------------------------------------------------
def test_signature_of_a_function_with_an_input_signature(eager, v2_shapes):
    @df.function(input_signature=[df.TensorSpec([None], df.float32)])
    def double(x):
        return x * 2

    concrete = double.get_concrete_function()
    assert concrete.pretty_printed_signature() == (
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=df.float32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(None,), dtype=df.float32, name=None)\n"
        "Captures:\n"
        "  None"
    )
    assert concrete.pretty_printed_signature(verbose=False) == (
        "(x: TensorSpec(shape=(None,), dtype=df.float32, name=None)) -> "
        "TensorSpec(shape=(None,), dtype=df.float32, name=None)"
    )
    assert repr(concrete).startswith("<ConcreteFunction (x: TensorSpec(shape=(None,), ")
    assert re.search(r"\) at 0x[0-9A-F]+>$", repr(concrete))


def test_unknown_dimensions_print_as_tf1_by_default(eager):
    @df.function(input_signature=[df.TensorSpec([None, 3], df.float32)])
    def identity(x):
        return x

    assert "TensorSpec(shape=(?, 3), dtype=df.float32, name=None)" in (
        identity.get_concrete_function().pretty_printed_signature()
    )


def test_python_values_are_literals_and_nests_are_typed(eager, v2_shapes):
    @df.function
    def affine(x, y=1, *, z=2):
        return {"a": x + y, "b": (x, None)}

    concrete = affine.get_concrete_function(df.constant([1.0]))
    assert concrete.pretty_printed_signature() == (
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(1,), dtype=df.float32, name=None)\n"
        "  y (POSITIONAL_OR_KEYWORD): Literal[1]\n"
        "  z (KEYWORD_ONLY): Literal[2]\n"
        "Output Type:\n"
        "  Dict[['a', TensorSpec(shape=(1,), dtype=df.float32, name=None)], "
        "['b', Tuple[TensorSpec(shape=(1,), dtype=df.float32, name=None), Literal[None]]]]\n"
        "Captures:\n"
        "  None"
    )
    assert str(concrete.function_type) == (
        "(x: TensorSpec(shape=(1,), dtype=df.float32, name=None), y: Literal[1], *, "
        "z: Literal[2]) -> Dict[['a', TensorSpec(shape=(1,), dtype=df.float32, name=None)], "
        "['b', Tuple[TensorSpec(shape=(1,), dtype=df.float32, name=None), Literal[None]]]]"
    )


def test_nested_arguments_print_as_tuples_lists_and_dicts(eager, v2_shapes):
    @df.function
    def first(x, y):
        return x[0]

    concrete = first.get_concrete_function(
        (df.constant(1), [df.constant(2.0), 3]), {"k": df.constant([1])}
    )
    int_scalar = "TensorSpec(shape=(), dtype=df.int32, name=None)"
    float_scalar = "TensorSpec(shape=(), dtype=df.float32, name=None)"
    assert concrete.pretty_printed_signature().splitlines()[1:3] == [
        f"  x (POSITIONAL_OR_KEYWORD): Tuple[{int_scalar}, List[{float_scalar}, Literal[3]]]",
        "  y (POSITIONAL_OR_KEYWORD): Dict[['k', "
        "TensorSpec(shape=(1,), dtype=df.int32, name=None)]]",
    ]
    # The placeholders are named after the parameter (the graph makes the names unique).
    assert [t.name for t in concrete.inputs] == ["x:0", "x_1:0", "y:0"]


def test_varargs_and_keywords_become_parameters_of_their_own(eager):
    @df.function
    def first(a, *args, b=3, **kw):
        return a

    first(df.constant(1), 2, df.constant([1.0]), b=4, c=df.constant(2.0), d="s")
    assert first.pretty_printed_concrete_signatures().splitlines()[:7] == [
        "Input Parameters:",
        "  a (POSITIONAL_ONLY): TensorSpec(shape=(), dtype=df.int32, name=None)",
        "  args_0 (POSITIONAL_ONLY): Literal[2]",
        "  args_1 (POSITIONAL_ONLY): TensorSpec(shape=(1,), dtype=df.float32, name=None)",
        "  b (KEYWORD_ONLY): Literal[4]",
        "  c (KEYWORD_ONLY): TensorSpec(shape=(), dtype=df.float32, name=None)",
        "  d (KEYWORD_ONLY): Literal['s']",
    ]


def test_a_spec_named_by_the_caller_keeps_its_name(eager, v2_shapes):
    @df.function
    def pair(a, b):
        return [a, a]

    concrete = pair.get_concrete_function(df.TensorSpec([None, 3], df.int64, name="foo"), "s")
    assert concrete.pretty_printed_signature().splitlines()[1:3] == [
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 3), dtype=df.int64, name='foo')",
        "  b (POSITIONAL_OR_KEYWORD): Literal['s']",
    ]
    assert [t.name for t in concrete.inputs] == ["foo:0"]


def test_no_output_is_literal_none(eager):
    variable = df.Variable([1.0, 2.0])

    @df.function
    def assign(x):
        variable.assign(x)

    concrete = assign.get_concrete_function(df.TensorSpec([2]))
    assert "Output Type:\n  Literal[None]\n" in concrete.pretty_printed_signature()
    assert concrete.outputs == []
    assert concrete.output_shapes == df.TensorShape(None) and concrete.output_dtypes is None


def test_captures_list_each_outer_value_with_its_id_and_type(eager):
    weights = df.Variable([1.0, 2.0], name="v")
    frozen = df.Variable(3.0, trainable=False)
    offset = df.constant(5.0)

    @df.function
    def affine(x):
        return x * weights + frozen + offset

    concrete = affine.get_concrete_function(df.TensorSpec([2]))
    printed = concrete.pretty_printed_signature()
    assert _without_ids(printed).endswith(
        "Captures:\n"
        "  ID: TensorSpec(shape=(), dtype=df.resource, name=None)\n"
        "  ID: TensorSpec(shape=(), dtype=df.resource, name=None)\n"
        "  ID: TensorSpec(shape=(), dtype=df.float32, name=None)"
    )
    captured_ids = [int(i) for i in re.findall(r"^  (\d+): ", printed, flags=re.M)]
    assert captured_ids == [id(weights.handle), id(frozen.handle), id(offset)]
    assert [id(t) for t in concrete.captured_inputs] == captured_ids
    assert concrete.variables == (weights, frozen)
    assert concrete.trainable_variables == (weights,)


# -- outputs ---------------------------------------------------------------------------------------
def test_output_shapes_and_dtypes_follow_the_outputs_nesting(eager):
    @df.function
    def parts(x):
        return {"a": x + 1.0, "b": (x, None)}

    concrete = parts.get_concrete_function(df.constant([1.0]))
    assert concrete.output_shapes == {"a": df.TensorShape([1]), "b": (df.TensorShape([1]), None)}
    assert concrete.output_dtypes == {"a": df.float32, "b": (df.float32, None)}


def test_a_composite_output_shows_the_shapes_of_its_parts(eager):
    @df.function
    def pair(st):
        return st

    concrete = pair.get_concrete_function(df.SparseTensor([[0, 0]], [1.0], [3, 4]))
    assert concrete.output_shapes == [
        df.TensorShape([None, 2]),
        df.TensorShape([None]),
        df.TensorShape([2]),
    ]
    assert concrete.output_dtypes == [df.int64, df.float32, df.int64]


def test_the_graph_holds_the_function_ops_and_no_output_identity(eager):
    # TF 2.21 has 4 nodes here (x, mul/y, mul, Identity): its FunctionDef names each output by
    # an op of its own.  A call here fetches the returned tensors themselves.
    @df.function(input_signature=[df.TensorSpec([None], df.float32)])
    def double(x):
        return x * 2

    graph_def = double.get_concrete_function().graph.as_graph_def()
    assert [(n.name, n.op, list(n.input)) for n in graph_def.node] == [
        ("x", "Placeholder", []),
        ("mul/y", "Const", []),
        ("mul", "Mul", ["x", "mul/y"]),
    ]


# -- Function --------------------------------------------------------------------------------------
def test_pretty_printed_concrete_signatures_lists_every_trace_in_order(eager, v2_shapes):
    @df.function
    def add(x, y=1):
        return x + y

    add(df.constant([1.0]))
    add(df.constant([1.0, 2.0]), 3)
    add(df.constant([1.0]))
    assert add.experimental_get_tracing_count() == 2
    first = add.get_concrete_function(df.constant([1.0]))
    second = add.get_concrete_function(df.constant([1.0, 2.0]), 3)
    assert "y (POSITIONAL_OR_KEYWORD): Literal[1]" in first.pretty_printed_signature()
    assert "y (POSITIONAL_OR_KEYWORD): Literal[3]" in second.pretty_printed_signature()
    assert add.pretty_printed_concrete_signatures() == (
        first.pretty_printed_signature() + "\n\n" + second.pretty_printed_signature()
    )
    assert add.pretty_printed_concrete_signatures(verbose=False) == (
        first.pretty_printed_signature(verbose=False)
        + "\n"
        + second.pretty_printed_signature(verbose=False)
    )


def test_an_input_signature_or_no_parameters_is_traced_to_be_printed(eager):
    @df.function(input_signature=[df.TensorSpec([1])])
    def same(x):
        return x

    @df.function
    def constant():
        return df.constant(1)

    assert same.experimental_get_tracing_count() == 0
    assert "x (POSITIONAL_OR_KEYWORD)" in same.pretty_printed_concrete_signatures()
    assert same.experimental_get_tracing_count() == 1
    assert constant.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=df.int32, name=None)\n"
        "Captures:\n"
        "  None"
    )


def test_a_function_never_called_has_no_signatures_to_print(eager):
    @df.function
    def double(x):
        return x * 2

    assert double.pretty_printed_concrete_signatures() == ""


def test_function_spec_describes_the_python_signature(eager):
    @df.function(jit_compile=True)
    def affine(x, y=1, *, z=2):
        return x * y + z

    spec = affine.function_spec
    assert spec.fullargspec == inspect.FullArgSpec(
        args=["x", "y"],
        varargs=None,
        varkw=None,
        defaults=(1,),
        kwonlyargs=["z"],
        kwonlydefaults={"z": 2},
        annotations={},
    )
    assert spec.arg_names == ["x", "y"]
    assert spec.default_values == {"y": 1, "z": 2}
    assert spec.input_signature is None and spec.flat_input_signature == (None,)
    assert spec.is_pure is False and spec.jit_compile is True
    assert not hasattr(spec, "is_method")  # TF 2.21's FunctionSpec has none either
    assert spec.signature_summary() == (
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): None\n"
        "  y (POSITIONAL_OR_KEYWORD): None\n"
        "  z (KEYWORD_ONLY): None\n"
        "Output Type:\n"
        "  None\n"
        "Captures:\n"
        "  None"
    )
    assert spec.signature_summary(True).endswith("\nDefaults:\n  y: 1\n  z: 2")
    assert str(affine.function_type) == (
        "(x, y=<captured_default_value>, *, z=<captured_default_value>)"
    )


def test_function_spec_with_an_input_signature(eager):
    signature = [
        df.TensorSpec([None], df.float32, name="q"),
        (df.TensorSpec([2]), df.TensorSpec([])),
    ]

    @df.function(input_signature=signature)
    def first(x, y):
        return x

    assert first.input_signature == (signature[0], signature[1])
    spec = first.function_spec
    assert spec.flat_input_signature == (signature[0], *signature[1])
    assert spec.default_values == {} and spec.arg_names == ["x", "y"]
    assert [str(p.type_constraint) for p in first.function_type.parameters.values()] == [
        "TensorSpec(shape=(?,), dtype=df.float32, name='q')",
        "Tuple[TensorSpec(shape=(2,), dtype=df.float32, name=None), "
        "TensorSpec(shape=(), dtype=df.float32, name=None)]",
    ]
    assert "name='q'" in first.get_concrete_function().pretty_printed_signature()


def test_function_attributes_users_read(eager):
    def python_double(x):
        return x * 2

    double = df.function(python_double)
    assert double.python_function is python_double
    assert double.name == "python_double" and double.input_signature is None
    assert double.experimental_get_tracing_count() == 0
    double(df.constant(1.0))
    double(df.constant(2.0))
    assert double.experimental_get_tracing_count() == 1


# -- methods ---------------------------------------------------------------------------------------
def test_a_method_is_described_without_self(eager):
    class Model:
        @df.function
        def call(self, x):
            return x

    model = Model()
    model.call(df.constant(1.0))
    assert model.call.pretty_printed_concrete_signatures().splitlines()[:2] == [
        "Input Parameters:",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=df.float32, name=None)",
    ]
    assert model.call.function_spec.fullargspec.args == ["x"]
    assert Model.call.function_spec.fullargspec.args == ["self", "x"]
    assert model.call.python_function.__self__ is model
    assert model.call.get_concrete_function(df.constant(2.0)).structured_input_signature[0][1] == (
        df.TensorSpec([], df.float32, name="x")
    )


def test_each_instance_lists_its_own_traces(eager):
    class Model:
        @df.function
        def call(self, x):
            return x

    first, second = Model(), Model()
    first.call(df.constant(1.0))
    second.call(df.constant([1.0]))
    assert "shape=()" in first.call.pretty_printed_concrete_signatures()
    assert "shape=(1,)" not in first.call.pretty_printed_concrete_signatures()
    assert "shape=(1,)" in second.call.pretty_printed_concrete_signatures()


# -- structured signatures -------------------------------------------------------------------------
def test_structured_input_signature_names_specs_after_parameters(eager):
    @df.function
    def first(x, *a, **k):
        return x

    concrete = first.get_concrete_function(
        (df.constant(1), [df.constant(2.0), 3]), df.constant(1), q=df.constant(2)
    )
    args, kwargs = concrete.structured_input_signature
    assert args == (
        (df.TensorSpec([], df.int32, "x_0"), [df.TensorSpec([], df.float32, "x_1_0"), 3]),
        df.TensorSpec([], df.int32, "a_0"),
    )
    assert kwargs == {"q": df.TensorSpec([], df.int32, "q")}
    assert [t.name for t in concrete.inputs] == ["x:0", "x_1:0", "a_0:0", "q:0"]


def test_a_relaxed_trace_shows_its_relaxed_shapes(eager):
    @df.function(reduce_retracing=True)
    def add_one(x):
        return x + 1

    add_one(np.zeros([1], np.float32))
    add_one(np.zeros([2], np.float32))
    relaxed = add_one.get_concrete_function(np.zeros([3], np.float32))
    assert add_one.experimental_get_tracing_count() == 2
    assert relaxed.structured_input_signature == ((df.TensorSpec([None], df.float32, "x"),), {})
    assert relaxed.output_shapes.as_list() == [None]
