"""Which calls of a df.function share a trace: trace types, dispatch and reduce_retracing.

The trace counts are TF 2.21's for the same calls (``experimental_get_tracing_count``)."""

import numpy as np
import pytest

import dataflow as df

TraceType = df.types.experimental.TraceType


def _counts(function, shapes, dtype=np.float32) -> list:
    counts = []
    for shape in shapes:
        function(np.zeros(shape, dtype))
        counts.append(function.experimental_get_tracing_count())
    return counts


SHAPES = [[1], [2], [3], [1], [4], [2], [2, 2], [3, 3], [3, 4]]


# -- dispatch and reduce_retracing -----------------------------------------------------------------
def test_each_new_shape_traces_without_reduce_retracing(eager):
    @df.function
    def add_one(x):
        return x + 1

    with pytest.warns(UserWarning) as warned:
        assert _counts(add_one, SHAPES) == [1, 2, 3, 3, 4, 4, 5, 6, 7]
    assert "traced 5 times" in str(warned[0].message)
    assert "set reduce_retracing=True" in str(warned[0].message)


@pytest.mark.parametrize("option", ["reduce_retracing", "experimental_relax_shapes"])
def test_reduce_retracing_relaxes_a_changed_shape_once(eager, option):
    @df.function(**{option: True})
    def add_one(x):
        return x + 1

    # [1] traces (1,); [2] traces (None,), which serves [3], [4]; rank 2 traces <unknown>.
    assert _counts(add_one, SHAPES) == [1, 2, 2, 2, 2, 2, 3, 3, 3]
    add_one(np.zeros([], np.int32))  # no common supertype with a float32 spec
    assert add_one.experimental_get_tracing_count() == 4
    printed = add_one.pretty_printed_concrete_signatures().split("\n\n")
    assert [trace.splitlines()[1] for trace in printed] == [
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(1,), dtype=df.float32, name=None)",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(?,), dtype=df.float32, name=None)",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=df.float32, name=None)",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=df.int32, name=None)",
    ]


def test_a_python_value_that_changes_keeps_shapes_exact_under_reduce_retracing(eager):
    @df.function(reduce_retracing=True)
    def scale(x, n):
        return x * n

    counts = []
    for n in [1, 2, 3]:
        scale(np.zeros([n], np.float32), n)
        counts.append(scale.experimental_get_tracing_count())
    assert counts == [1, 2, 3]
    assert "TensorSpec(shape=(3,)" in scale.pretty_printed_concrete_signatures()


def test_a_trace_for_a_wider_spec_serves_narrower_calls_without_reduce_retracing(eager):
    @df.function
    def add_one(x):
        return x + 1

    add_one.get_concrete_function(df.TensorSpec([None]))
    add_one(np.zeros([3], np.float32))
    assert add_one.experimental_get_tracing_count() == 1
    assert add_one.get_concrete_function(df.TensorSpec([2])) is add_one.get_concrete_function(
        df.TensorSpec([None])
    )
    assert add_one.experimental_get_tracing_count() == 1


def test_the_most_specific_trace_that_fits_serves_a_call(eager):
    @df.function
    def rank(x):
        return df.constant(-1 if x.shape.ndims is None else x.shape.ndims)

    unknown_rank = rank.get_concrete_function(df.TensorSpec(None))
    matrix = rank.get_concrete_function(df.TensorSpec([None, None]))
    assert rank.experimental_get_tracing_count() == 1  # [None, None] fits <unknown>'s trace
    assert matrix is unknown_rank
    assert int(rank(np.zeros([2, 2], np.float32))) == -1


# -- the trace types of Python values --------------------------------------------------------------
def test_equal_python_values_of_other_types_trace_apart(eager):
    # TF 2.21 gives 1, 1.0 and True one trace (they are equal and hash alike), so a call with 1
    # would get the result traced for 1.0; here each type has its own.
    @df.function
    def kind(x):
        return df.constant(type(x).__name__)

    assert [kind(v).numpy() for v in (1.0, 1, True)] == [b"float", b"int", b"bool"]
    assert kind.experimental_get_tracing_count() == 3


def test_nan_is_one_literal(eager):
    @df.function
    def same(x):
        return df.constant(0)

    same(float("nan"))
    same(float("nan"))
    assert same.experimental_get_tracing_count() == 1


def test_an_object_is_keyed_by_identity_not_by_equality(eager):
    class Value:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return isinstance(other, Value) and other.v == self.v

        def __hash__(self):
            return hash(self.v)

    @df.function
    def read(value):
        return df.constant(value.v)

    first = Value(1)
    read(first)
    read(first)
    assert read.experimental_get_tracing_count() == 1
    read(Value(1))  # equal, but another object: TF 2.21 traces again too
    assert read.experimental_get_tracing_count() == 2
    assert "Weakref[<weakref at" in read.pretty_printed_concrete_signatures()


def test_an_unhashable_value_that_cannot_be_weakly_referenced_is_an_error(eager):
    @df.function
    def same(x):
        return df.constant(0)

    with pytest.raises(TypeError, match="Could not generate a generic TraceType for bytearray"):
        same(bytearray(b"x"))


# -- TensorSpec and TensorShape as trace types -----------------------------------------------------
def test_tensor_spec_subtypes_and_supertypes():
    spec = df.TensorSpec
    assert spec([2]).is_subtype_of(spec([None])) and not spec([None]).is_subtype_of(spec([2]))
    assert spec([2]).is_subtype_of(spec(None))
    assert not spec([2], name="a").is_subtype_of(spec([None]))
    assert not spec([2]).is_subtype_of(spec([2], df.int32))
    assert spec([2]).most_specific_common_supertype([spec([3])]) == spec([None])
    assert spec([2]).most_specific_common_supertype([spec([3, 1])]) == spec(None)
    assert spec([2]).most_specific_common_supertype([spec([2], df.int32)]) is None
    assert spec([2], name="a").most_specific_common_supertype([spec([3], name="a")]) == spec(
        [None], name="a"
    )
    assert spec([2], name="a").most_specific_common_supertype([spec([3], name="b")]) is None
    assert spec([2]).most_specific_common_supertype([]) == spec([2])
    assert isinstance(spec([2]), TraceType) and isinstance(df.SparseTensorSpec([2]), TraceType)
    assert spec([2]).flatten() == [spec([2])]


def test_tensor_shape_subtypes_and_supertypes():
    shape = df.TensorShape
    assert shape([2]).is_subtype_of(shape([None])) and shape([None]).is_subtype_of(shape(None))
    assert not shape(None).is_subtype_of(shape([None]))
    assert shape([2]).most_specific_common_supertype([shape([3]), shape([2])]) == shape([None])
    assert shape([2]).most_specific_common_supertype([]) == shape([2])
    assert shape([1, 2]).most_specific_common_supertype([shape([1])]).ndims is None


def test_composite_specs_relax_their_dense_shapes():
    assert df.SparseTensorSpec([3, None]).is_subtype_of(df.SparseTensorSpec([None, None]))
    ragged = df.RaggedTensorSpec([2, None], df.float32, 1)
    assert ragged.most_specific_common_supertype(
        [df.RaggedTensorSpec([3, None], df.float32, 1)]
    ) == df.RaggedTensorSpec([None, None], df.float32, 1)
    assert repr(ragged) == "RaggedTensorSpec(TensorShape([2, None]), df.float32, 1, df.int64)"
    assert repr(df.SparseTensorSpec([3, 4])) == "SparseTensorSpec(TensorShape([3, 4]), df.float32)"


# -- custom trace types: __tf_tracing_type__ -------------------------------------------------------
class FruitTraceType(TraceType):
    """TensorFlow's documented example of the tracing protocol."""

    def __init__(self, fruit):
        self.fruit_type = type(fruit)
        self.fruit_value = fruit

    def is_subtype_of(self, other):
        return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

    def most_specific_common_supertype(self, others):
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.fruit_value

    def __eq__(self, other):
        return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

    def __hash__(self):
        return hash(self.fruit_type)

    def __repr__(self):
        return f"FruitTraceType({self.fruit_type.__name__})"


class Fruit:
    def __init__(self, flavor):
        self.flavor = df.constant([flavor])

    def __tf_tracing_type__(self, context):
        return FruitTraceType(self)


class Apple(Fruit):
    pass


class Mango(Fruit):
    pass


def test_a_custom_trace_type_decides_which_calls_share_a_trace(eager):
    @df.function
    def mixed_flavor(fruit_a, fruit_b):
        return fruit_a.flavor + fruit_b.flavor

    first_apple, second_apple, mango = Apple(1.0), Apple(2.0), Mango(3.0)
    assert mixed_flavor(first_apple, mango).numpy().tolist() == [4.0]
    # Both apples have one trace type, so the second call runs the first trace, which
    # reads the apple it was traced with (its placeholder value): 4, as in TF 2.21.
    assert mixed_flavor(second_apple, mango).numpy().tolist() == [4.0]
    assert mixed_flavor(mango, first_apple).numpy().tolist() == [4.0]
    assert mixed_flavor.experimental_get_tracing_count() == 2
    assert mixed_flavor.pretty_printed_concrete_signatures().splitlines()[:3] == [
        "Input Parameters:",
        "  fruit_a (POSITIONAL_OR_KEYWORD): FruitTraceType(Apple)",
        "  fruit_b (POSITIONAL_OR_KEYWORD): FruitTraceType(Mango)",
    ]


def test_supports_tracing_protocol_is_checked_at_run_time():
    assert isinstance(Apple(1.0), df.types.experimental.SupportsTracingProtocol)
    assert not isinstance(object(), df.types.experimental.SupportsTracingProtocol)


def test_a_trace_type_must_implement_the_abstract_methods():
    class Incomplete(TraceType):
        def is_subtype_of(self, other):
            return True

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


def test_tracing_type_that_is_not_a_trace_type_is_an_error(eager):
    class Bad:
        def __tf_tracing_type__(self, context):
            return 3

    @df.function
    def same(x):
        return df.constant(0)

    with pytest.raises(TypeError, match="must return a df.types.experimental.TraceType"):
        same(Bad())


class Scaled:
    """A tensor and a Python scale: its trace type feeds the tensor and bakes in the scale."""

    def __init__(self, values, scale):
        self.values, self.scale = values, scale

    def __tf_tracing_type__(self, context):
        return ScaledType(self.scale, df.TensorSpec.from_tensor(self.values))


class ScaledType(TraceType):
    def __init__(self, scale, spec):
        self.scale, self.spec = scale, spec

    def is_subtype_of(self, other):
        return (
            type(other) is ScaledType
            and other.scale == self.scale
            and self.spec.is_subtype_of(other.spec)
        )

    def most_specific_common_supertype(self, others):
        if any(type(o) is not ScaledType or o.scale != self.scale for o in others):
            return None
        spec = self.spec.most_specific_common_supertype([o.spec for o in others])
        return None if spec is None else ScaledType(self.scale, spec)

    def placeholder_value(self, placeholder_context):
        return Scaled(self.spec.placeholder_value(placeholder_context), self.scale)

    def to_tensors(self, value):
        return [value.values]

    def from_tensors(self, tensors):
        return Scaled(next(tensors), self.scale)

    def flatten(self):
        return [self.spec]

    def __eq__(self, other):
        return type(other) is ScaledType and (other.scale, other.spec) == (self.scale, self.spec)

    def __hash__(self):
        return hash((self.scale, self.spec))


def test_a_custom_type_holding_tensors_feeds_them_to_its_trace(eager):
    # TF 2.21 fails these calls ("Signature specifies 0 arguments"): its tracing keeps only
    # tensors and composites as inputs.  Here the type's to_tensors are the trace's inputs.
    @df.function(reduce_retracing=True)
    def scaled(value):
        return value.values * value.scale

    assert scaled(Scaled(df.constant([1.0, 2.0]), 3)).numpy().tolist() == [3.0, 6.0]
    assert scaled(Scaled(df.constant([1.0, 2.0, 4.0]), 3)).numpy().tolist() == [3.0, 6.0, 12.0]
    assert scaled(Scaled(df.constant([1.0, 2.0, 4.0, 5.0]), 3)).numpy().tolist()[-1] == 15.0
    assert scaled(Scaled(df.constant([1.0]), 2)).numpy().tolist() == [2.0]
    assert scaled.experimental_get_tracing_count() == 3
    concrete = scaled.get_concrete_function(Scaled(df.constant([5.0]), 3))
    assert [t.name for t in concrete.inputs] == ["value:0"]
    assert concrete.inputs[0].shape.as_list() == [None]
    with df.GradientTape() as tape:
        x = df.constant([1.0, 2.0])
        tape.watch(x)
        total = df.reduce_sum(scaled(Scaled(x, 3)))
    assert tape.gradient(total, x).numpy().tolist() == [3.0, 3.0]


# -- composite tensors as arguments ----------------------------------------------------------------
def test_a_sparse_tensor_is_keyed_by_its_dense_shape_not_its_values(eager):
    @df.function
    def total(st):
        return df.sparse.reduce_sum(st)

    assert float(total(df.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4]))) == 3.0
    assert float(total(df.SparseTensor([[0, 0]], [5.0], [3, 4]))) == 5.0
    assert total.experimental_get_tracing_count() == 1
    total(df.SparseTensor([[0, 0]], [5.0], [3, 5]))
    assert total.experimental_get_tracing_count() == 2
    concrete = total.get_concrete_function(df.SparseTensor([[0, 0]], [5.0], [3, 4]))
    assert [(t.shape.as_list(), t.dtype) for t in concrete.inputs] == [
        ([None, 2], df.int64),
        ([None], df.float32),
        ([2], df.int64),
    ]
    assert concrete.structured_input_signature == ((df.SparseTensorSpec([3, 4], df.float32),), {})


def test_reduce_retracing_relaxes_a_sparse_dense_shape(eager):
    @df.function(reduce_retracing=True)
    def same(st):
        return st

    same(df.SparseTensor([[0, 0]], [1.0], [3, 4]))
    same(df.SparseTensor([[0, 0]], [5.0], [3, 5]))
    same(df.SparseTensor([[0, 0]], [5.0], [2, 5]))
    assert same.experimental_get_tracing_count() == 3
    printed = same.pretty_printed_concrete_signatures().split("\n\n")
    assert [trace.splitlines()[1] for trace in printed] == [
        "  st (POSITIONAL_OR_KEYWORD): SparseTensorSpec(TensorShape([3, 4]), df.float32)",
        "  st (POSITIONAL_OR_KEYWORD): SparseTensorSpec(TensorShape([3, None]), df.float32)",
        "  st (POSITIONAL_OR_KEYWORD): SparseTensorSpec(TensorShape([None, None]), df.float32)",
    ]


def test_a_ragged_tensor_is_keyed_by_its_spec(eager):
    @df.function
    def total(rt):
        return df.reduce_sum(rt, axis=1)

    assert total(df.ragged.constant([[1.0, 2.0], [3.0]])).numpy().tolist() == [3.0, 3.0]
    assert total(df.ragged.constant([[1.0], [2.0, 3.0, 4.0]])).numpy().tolist() == [1.0, 9.0]
    assert total.experimental_get_tracing_count() == 1
    total(df.ragged.constant([[1.0], [2.0], [3.0]]))  # three rows: another shape
    assert total.experimental_get_tracing_count() == 2
    concrete = total.get_concrete_function(df.ragged.constant([[1.0], [2.0], [3.0]]))
    assert [t.shape.as_list() for t in concrete.inputs] == [[None], [4]]


def test_an_input_signature_of_a_sparse_spec(eager):
    @df.function(input_signature=[df.SparseTensorSpec([None, 4], df.float32)])
    def dense(st):
        return df.sparse.to_dense(st)

    result = dense(df.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4]))
    assert result.numpy().tolist()[1] == [0.0, 0.0, 2.0, 0.0]
    assert "st (POSITIONAL_OR_KEYWORD): SparseTensorSpec(TensorShape([None, 4]), df.float32)" in (
        dense.pretty_printed_concrete_signatures()
    )
    with pytest.raises(TypeError, match="does not match its input_signature"):
        dense(df.SparseTensor([[0, 0]], [1], [3, 4]))  # int32 values


def test_an_input_signature_holds_specs_only():
    with pytest.raises(TypeError, match="must hold df.TensorSpec objects"):
        df.function(lambda x: x, input_signature=[3])


def test_indexed_slices_are_arguments_too(eager):
    @df.function
    def doubled(slices):
        return slices.values * 2, slices.indices

    values, indices = doubled(
        df.IndexedSlices(df.ones([1, 2]), df.constant([0]), df.constant([3, 2]))
    )
    assert values.numpy().tolist() == [[2.0, 2.0]] and indices.numpy().tolist() == [0]
