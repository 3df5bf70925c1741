"""``df.data.Dataset`` as TF2 programs read it in eager mode: ``for x in dataset``, ``iter`` and
``next``, ``as_numpy_iterator``, ``len``, ``reduce`` and ``from_generator``, with the values,
structures and errors TensorFlow 2.21 gives (each expected value below was read from it); and
TF1 graph mode, where Python iteration stays refused."""

import collections

import numpy as np
import pytest

import dataflow as df

Dataset = df.data.Dataset


@pytest.fixture
def eager():
    with df.eager_mode():
        yield


def values(dataset):
    """The elements of ``dataset`` read by a Python ``for``, as Python values."""

    def plain(tensor):
        value = tensor.numpy()
        return value.tolist() if hasattr(value, "tolist") else value

    return [df.nest.map_structure(plain, element) for element in dataset]


# -- a for loop over a dataset ---------------------------------------------------------------------
def test_a_for_loop_gives_eager_tensors_in_order(eager):
    got = list(Dataset.range(3))
    assert all(isinstance(x, df.Tensor) and x.dtype == df.int64 for x in got)
    assert [x.numpy() for x in got] == [0, 1, 2]
    assert got[0].shape == df.TensorShape([])


def test_elements_keep_their_tuple_dict_and_namedtuple_structure(eager):
    pairs = Dataset.from_tensor_slices({"a": [1, 2], "b": ([1.0, 2.0], [3, 4])})
    assert values(pairs) == [{"a": 1, "b": (1.0, 3)}, {"a": 2, "b": (2.0, 4)}]
    point = collections.namedtuple("Point", "x y")
    points = list(Dataset.from_tensor_slices(point([1, 2], [3.0, 4.0])))
    assert [type(p).__name__ for p in points] == ["Point", "Point"]
    assert points[1].y.numpy() == 4.0
    assert values(Dataset.from_tensors(([1, 2], "s"))) == [([1, 2], b"s")]


def test_each_transformation_gives_tensorflows_elements(eager):
    r = Dataset.range
    assert values(r(7).batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(r(7).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    ragged = Dataset.from_tensor_slices([1, 3, 2]).map(lambda n: df.range(n))
    assert values(ragged.padded_batch(2)) == [[[0, 0, 0], [0, 1, 2]], [[0, 1]]]
    assert values(
        ragged.padded_batch(2, padded_shapes=[4], padding_values=-1, drop_remainder=True)
    ) == [[[0, -1, -1, -1], [0, 1, 2, -1]]]
    assert values(Dataset.from_tensor_slices([10, 20]).enumerate(start=3)) == [(3, 10), (4, 20)]
    assert values(Dataset.zip((r(3), r(10, 15)))) == [(0, 10), (1, 11), (2, 12)]
    assert values(Dataset.zip({"a": r(2), "b": r(5)})) == [{"a": 0, "b": 0}, {"a": 1, "b": 1}]
    assert values(r(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert values(r(2).concatenate(r(5, 7))) == [0, 1, 5, 6]
    assert values(r(10).skip(3).take(4)) == [3, 4, 5, 6]
    assert values(r(3).take(-1)) == [0, 1, 2]
    assert values(r(3).skip(5)) == []
    assert values(r(2).repeat(3)) == [0, 1, 0, 1, 0, 1]
    assert values(r(3).cache().prefetch(2)) == [0, 1, 2]


def test_an_endless_repeat_is_read_as_far_as_take_goes(eager):
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    taken = list(Dataset.range(5).take(3))
    assert [x.numpy() for x in taken] == [0, 1, 2]


def test_an_empty_dataset_runs_no_iteration(eager):
    assert list(Dataset.range(0)) == []
    assert list(Dataset.range(5).filter(lambda x: x > 9)) == []
    assert list(Dataset.range(3).batch(4, drop_remainder=True)) == []


def test_each_for_loop_starts_the_dataset_again_but_an_iterator_is_read_once(eager):
    ds = Dataset.range(3)
    assert values(ds) == [0, 1, 2]
    assert values(ds) == [0, 1, 2]
    iterator = iter(ds)
    assert values(iterator) == [0, 1, 2]
    assert values(iterator) == []
    assert iter(iterator) is iterator


def test_next_raises_stop_iteration_and_get_next_out_of_range_past_the_end(eager):
    iterator = iter(Dataset.range(5, 7))
    assert iterator.element_spec == df.TensorSpec([], df.int64)
    assert next(iterator).numpy() == 5
    assert iterator.next().numpy() == 6
    with pytest.raises(StopIteration):
        next(iterator)
    one = iter(Dataset.range(1))
    assert one.get_next().numpy() == 0
    with pytest.raises(df.errors.OutOfRangeError, match="End of sequence"):
        one.get_next()


def test_get_next_as_optional_has_no_value_past_the_end(eager):
    iterator = iter(Dataset.range(1))
    first = iterator.get_next_as_optional()
    assert bool(first.has_value()) and first.get_value().numpy() == 0
    assert not bool(iterator.get_next_as_optional().has_value())


def test_as_numpy_iterator_gives_numpy_scalars_arrays_and_bytes(eager):
    ds = Dataset.from_tensor_slices({"a": [1, 2], "b": ["x", "y"]})
    got = list(ds.as_numpy_iterator())
    assert got == [{"a": 1, "b": b"x"}, {"a": 2, "b": b"y"}]
    assert isinstance(got[0]["a"], np.int32)
    batches = list(Dataset.range(5).batch(2).as_numpy_iterator())
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]


def test_a_map_function_is_traced_once_and_its_python_effects_happen_then(eager):
    calls = []

    def double(x):
        calls.append(x)
        return x * 2

    ds = Dataset.range(4).map(double)
    assert len(calls) == 1 and isinstance(calls[0], df.Tensor)
    assert values(ds) == [0, 2, 4, 6]
    assert values(ds) == [0, 2, 4, 6]
    assert len(calls) == 1
    ds.map(double)
    assert len(calls) == 2


def test_a_map_function_is_converted_by_autograph_and_reads_eager_tensors(eager):
    scale = df.constant(10, df.int64)

    def signed(x):
        if x > 1:
            return x * scale
        return -x

    assert values(Dataset.range(4).map(signed)) == [0, -1, 20, 30]


def test_a_map_function_may_not_read_an_eager_variable(eager):
    v = df.Variable(1, dtype=df.int64)
    with pytest.raises(TypeError, match="reads an eager variable"):
        Dataset.range(3).map(lambda x: x + v)


def test_a_dataset_function_must_be_callable(eager):
    with pytest.raises(ValueError, match=r"Argument `func` must be a callable. Received func=3"):
        Dataset.range(3).map(3)


# -- what a dataset says of itself -----------------------------------------------------------------
def test_element_spec_is_the_structure_of_tensor_specs(eager):
    pairs = Dataset.from_tensor_slices(([1, 2], [[1.0, 2.0], [3.0, 4.0]]))
    assert pairs.element_spec == (
        df.TensorSpec([], df.int32),
        df.TensorSpec([2], df.float32),
    )
    assert Dataset.range(7).batch(3).element_spec.shape.as_list() == [None]
    assert Dataset.range(7).batch(3, drop_remainder=True).element_spec.shape.as_list() == [3]


def test_len_is_the_number_of_elements_where_tensorflow_knows_it(eager):
    r = Dataset.range
    lengths = {
        r(10).batch(3): 4,
        r(10).batch(3, True): 3,
        r(3).repeat(2): 6,
        r(5).enumerate(): 5,
        Dataset.zip((r(3), r(5))): 3,
        r(3).concatenate(r(2)): 5,
        r(0): 0,
        r(3).cache(): 3,
        r(5).shuffle(2): 5,
        r(5).padded_batch(2): 3,
        r(5).map(lambda x: x + 1): 5,  # TF2's map keeps the count
    }
    assert [len(ds) for ds in lengths] == list(lengths.values())
    assert int(r(3).repeat().take(4).cardinality()) == 4
    assert int(r(3).repeat().skip(2).cardinality()) == -1


def test_len_of_an_endless_or_unknown_dataset_is_a_type_error(eager):
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(Dataset.range(3).filter(lambda x: x > 0))


def test_a_dataset_is_true_even_when_empty(eager):
    assert bool(Dataset.range(0)) is True


def test_tf1s_map_in_a_graph_does_not_keep_the_count():
    counts = [df.data.experimental.cardinality(Dataset.range(3).map(lambda x: x))]
    with df.Session() as sess:
        assert sess.run(counts) == [-2]


# -- reduce ----------------------------------------------------------------------------------------
def test_reduce_folds_the_elements_into_the_initial_states_structure(eager):
    total = Dataset.range(4).reduce(np.int64(0), lambda s, x: s + x)
    assert isinstance(total, df.Tensor) and total.numpy() == 6
    sum_and_product = Dataset.range(1, 5).reduce(
        (np.int64(0), np.int64(1)), lambda s, x: (s[0] + x, s[1] * x)
    )
    assert [t.numpy() for t in sum_and_product] == [10, 24]
    keyed = Dataset.from_tensor_slices({"a": [1, 2, 3]})
    assert keyed.reduce(np.int32(0), lambda s, e: s + e["a"]).numpy() == 6
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert pairs.reduce(0, lambda s, e: s + e[0] * e[1]).numpy() == 11


def test_reduce_of_an_empty_dataset_is_the_initial_state(eager):
    assert Dataset.range(0).reduce(np.int64(5), lambda s, x: s + x).numpy() == 5


def test_reduce_relaxes_a_state_shape_that_grows(eager):
    grown = Dataset.range(4).reduce(
        df.zeros([0], df.int64), lambda s, x: df.concat([s, df.reshape(x, [1])], 0)
    )
    assert grown.numpy().tolist() == [0, 1, 2, 3]


def test_reduce_refuses_a_state_of_another_dtype_or_number_of_components(eager):
    with pytest.raises(TypeError, match="new state must match the initial state. Expected"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: df.cast(s, df.float32))
    with pytest.raises(
        df.errors.InvalidArgumentError,
        match=r"number of components of the initial state and the reduce function output "
        r"does not match. \(initial_state=2, output=1\)",
    ):
        Dataset.range(3).reduce((np.int64(0), np.int64(0)), lambda s, x: s[0] + x)
    with pytest.raises(ValueError, match="Argument `func` must be a callable"):
        Dataset.range(3).reduce(np.int64(0), 3)


def test_reduce_runs_in_a_tf1_graph_too():
    total = Dataset.range(4).reduce(df.constant(0, df.int64), lambda s, x: s + x)
    assert total.op.name == "ReduceDataset"
    with df.Session() as sess:
        assert sess.run(total) == 6


def test_a_graph_that_reduces_a_dataset_cannot_be_saved(tmp_path):
    Dataset.range(3).reduce(np.int64(0), lambda s, x: s + x)
    with pytest.raises(df.io.GraphNotSerializableError, match="Dataset.reduce"):
        df.io.save_graph(df.get_default_graph(), str(tmp_path / "reduce.dfg"))


# -- shuffle ---------------------------------------------------------------------------------------
# TensorFlow's orders come from its own generator, so only their properties are TensorFlow's:
# a seed makes the orders deterministic, and each pass over a dataset reshuffles unless
# ``reshuffle_each_iteration=False``.
def test_a_seeded_shuffle_is_deterministic_and_each_pass_reshuffles(eager):
    first = Dataset.range(10).shuffle(10, seed=1)
    again = Dataset.range(10).shuffle(10, seed=1)
    one, two = values(first), values(first)
    assert sorted(one) == sorted(two) == list(range(10))
    assert one != two
    assert values(again) == one and values(again) == two


def test_a_shuffle_that_does_not_reshuffle_gives_one_order(eager):
    fixed = Dataset.range(10).shuffle(10, seed=3, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)


# -- from_generator --------------------------------------------------------------------------------
def pairs_of_growing_lists():
    for i in range(3):
        yield i, [float(i)] * i


def test_from_generator_with_types_and_shapes(eager):
    ds = Dataset.from_generator(
        pairs_of_growing_lists, output_types=(df.int64, df.float32), output_shapes=((), (None,))
    )
    assert ds.element_spec == (df.TensorSpec([], df.int64), df.TensorSpec([None], df.float32))
    assert values(ds) == [(0, []), (1, [1.0]), (2, [2.0, 2.0])]
    assert int(ds.cardinality()) == -2


def test_from_generator_with_an_output_signature(eager):
    signature = (df.TensorSpec([], df.int64), df.TensorSpec([None], df.float32))
    ds = Dataset.from_generator(pairs_of_growing_lists, output_signature=signature)
    assert ds.element_spec == signature
    assert values(ds) == [(0, []), (1, [1.0]), (2, [2.0, 2.0])]
    keyed = Dataset.from_generator(
        lambda: iter([{"a": 1, "b": 2.0}]), output_types={"a": df.int64, "b": df.float32}
    )
    assert values(keyed) == [{"a": 1, "b": 2.0}]


def test_from_generator_passes_its_args_as_numpy_values(eager):
    seen = []

    def numbered(n, prefix, scale):
        seen.append((type(n), type(prefix), type(scale)))
        for i in range(n):
            yield prefix + str(i).encode()

    ds = Dataset.from_generator(numbered, output_types=df.string, args=(3, "a", [1.0, 2.0]))
    assert ds.element_spec == df.TensorSpec(None, df.string)
    assert list(ds.as_numpy_iterator()) == [b"a0", b"a1", b"a2"]
    assert seen == [(np.int32, bytes, np.ndarray)]


def test_from_generator_calls_the_generator_again_for_each_pass(eager):
    calls = []

    def once():
        calls.append(1)
        yield 1

    ds = Dataset.from_generator(once, output_types=df.int64)
    assert values(ds) == [1] and values(ds) == [1]
    assert len(calls) == 2


def test_from_generator_converts_an_unknown_rank_element_as_a_tensor(eager):
    def make(gen, dtype):
        return Dataset.from_generator(gen, output_types=dtype)

    assert values(make(lambda: iter([1]), df.float32)) == [1.0]
    assert values(make(lambda: iter([np.int32(1)]), df.int64)) == [1]
    assert values(make(lambda: iter([[1, 2], [3]]), df.int64)) == [[1, 2], [3]]
    # With a shape given, numpy converts it: 1.5 becomes 1, as in TensorFlow.
    truncated = Dataset.from_generator(
        lambda: iter([1.5]), output_signature=df.TensorSpec([], df.int64)
    )
    assert values(truncated) == [1]


GENERATOR_ERRORS = {
    "a string for int64 without a shape": (
        lambda: iter(["x"]),
        {"output_types": df.int64},
        "TypeError: `generator` yielded an element that did not match the expected structure. "
        "The expected structure was TensorSpec(shape=<unknown>, dtype=df.int64, name=None), but "
        "the yielded element was x.",
    ),
    "a float for int64 without a shape": (
        lambda: iter([1.5]),
        {"output_types": df.int64},
        "did not match the expected structure. The expected structure was TensorSpec(shape="
        "<unknown>, dtype=df.int64, name=None), but the yielded element was 1.5.",
    ),
    "a string for int64 with a shape": (
        lambda: iter(["x"]),
        {"output_types": df.int64, "output_shapes": ()},
        "TypeError: `generator` yielded an element that could not be converted to the expected "
        "type. The expected type was int64, but the yielded element was x.",
    ),
    "a vector for a scalar": (
        lambda: iter([[1, 2]]),
        {"output_types": df.int64, "output_shapes": ()},
        "TypeError: `generator` yielded an element of shape (2,) where an element of shape () "
        "was expected.",
    ),
    "a vector for a scalar spec": (
        lambda: iter([[1, 2]]),
        {"output_signature": df.TensorSpec([], df.int64)},
        "yielded an element of shape (2,) where an element of shape () was expected.",
    ),
    "a scalar for a pair": (
        lambda: iter([1]),
        {"output_types": (df.int64, df.int64)},
        "TypeError: `generator` yielded an element that did not match the expected structure. "
        "The expected structure was (df.int64, df.int64), but the yielded element was 1.",
    ),
    "a list for a pair": (
        lambda: iter([[1, 2]]),
        {"output_types": (df.int64, df.int64)},
        "did not match the expected structure. The expected structure was (df.int64, df.int64), "
        "but the yielded element was [1, 2].",
    ),
    "a dict without a key": (
        lambda: iter([{"a": 1}]),
        {"output_types": {"a": df.int64, "b": df.int64}},
        "The expected structure was {'a': df.int64, 'b': df.int64}, but the yielded element was "
        "{'a': 1}.",
    ),
}


@pytest.mark.parametrize("case", GENERATOR_ERRORS.values(), ids=GENERATOR_ERRORS.keys())
def test_from_generator_fails_the_read_of_an_element_that_does_not_fit(eager, case):
    generator, arguments, message = case
    ds = Dataset.from_generator(generator, **arguments)
    with pytest.raises(df.errors.InvalidArgumentError) as raised:
        list(ds)
    assert message in str(raised.value)
    assert "test_eager_datasets.py" in str(raised.value)  # the line that read the element


def test_an_error_of_the_generator_fails_the_read_after_the_elements_before_it(eager):
    def fails():
        yield 1
        raise ValueError("boom")

    iterator = iter(Dataset.from_generator(fails, output_types=df.int64))
    assert next(iterator).numpy() == 1
    with pytest.raises(df.errors.InvalidArgumentError, match="ValueError: boom"):
        next(iterator)


def test_from_generator_refuses_arguments_as_tensorflow_does(eager):
    gen = pairs_of_growing_lists
    with pytest.raises(TypeError, match="`generator` must be a Python callable."):
        Dataset.from_generator(3, output_types=df.int64)
    with pytest.raises(TypeError, match="either the `output_signature` argument or the `output_t"):
        Dataset.from_generator(gen)
    with pytest.raises(TypeError, match="either the `output_signature` argument or the `output_t"):
        Dataset.from_generator(gen, output_shapes=())
    with pytest.raises(TypeError, match="`output_types` argument can not be used together"):
        Dataset.from_generator(gen, output_types=df.int64, output_signature=df.TensorSpec([]))
    with pytest.raises(TypeError, match="`output_shapes` argument can not be used together"):
        Dataset.from_generator(gen, output_shapes=(), output_signature=df.TensorSpec([]))
    with pytest.raises(TypeError, match="must contain objects that are subclass of `tf.TypeSpec`"):
        Dataset.from_generator(gen, output_signature=(df.int64,))


def test_from_generator_in_a_tf1_graph_reads_its_args_when_the_iterator_starts():
    def count_to(n):
        yield from range(n)

    n = df.placeholder(df.int64, [])
    ds = Dataset.from_generator(count_to, output_types=df.int64, args=(n,))
    iterator = ds.make_initializable_iterator()
    element = iterator.get_next()
    with df.Session() as sess:
        sess.run(iterator.initializer, {n: 3})
        assert [sess.run(element) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(element)
        sess.run(iterator.initializer, {n: 1})
        assert sess.run(element) == 0


def test_from_generator_in_a_tf1_graph_fails_the_run_of_an_element_that_does_not_fit():
    ds = Dataset.from_generator(lambda: iter([[1, 2]]), output_types=df.int64, output_shapes=())
    element = ds.make_one_shot_iterator().get_next()
    with (
        df.Session() as sess,
        pytest.raises(
            df.errors.InvalidArgumentError,
            match=r"TypeError: `generator` yielded an element of shape \(2,\) where an element of "
            r"shape \(\) was expected.",
        ),
    ):
        sess.run(element)


# -- TF1 graph mode --------------------------------------------------------------------------------
def test_python_iteration_len_and_numpy_are_refused_in_a_tf1_graph():
    ds = Dataset.range(3)
    message = (
        "`tf.data.Dataset` only supports Python-style iteration in eager mode or within "
        "tf.function."
    )
    with pytest.raises(RuntimeError, match=message):
        iter(ds)
    with pytest.raises(RuntimeError, match=message):
        for _ in ds:
            pass
    with pytest.raises(TypeError, match="only supports `len` in eager mode. Use `tf.data.Datase"):
        len(ds)
    with pytest.raises(RuntimeError, match=r"as_numpy_iterator\(\)` is only supported in eager"):
        ds.as_numpy_iterator()
    assert bool(ds) is True


def test_a_dataset_made_in_a_graph_cannot_be_read_eagerly():
    with df.Graph().as_default():
        ds = Dataset.from_tensor_slices(df.placeholder(df.int64, [None], name="rows"))
    with df.eager_mode(), pytest.raises(RuntimeError, match="uses the tensor 'rows:0' of a graph"):
        iter(ds)
