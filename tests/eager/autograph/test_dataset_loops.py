"""Datasets in ``df.function`` as TF2 programs use them: ``for x in dataset`` staged as a while
loop over the graph's iterator ops (with ``break``, ``continue``, nested loops, loops inside a
``while``), a dataset argument keyed by its element spec, ``iter``/``next``, ``reduce`` and
``len`` in a function.  Each expected value was read from TensorFlow 2.21."""

import numpy as np
import pytest

import dataflow as df
from dataflow.eager import autograph

Dataset = df.data.Dataset


def _op_types(graph):
    return {op.type for op in graph.get_operations()}


def total(ds):
    s = df.constant(0, df.int64)
    for x in ds:
        s += x
    return s


# -- a for loop over a dataset argument ------------------------------------------------------------
def test_a_loop_over_a_dataset_is_a_while_loop_over_the_graphs_iterator_ops(eager):
    function = df.function(total)
    graph = function.get_concrete_function(Dataset.range(3)).graph
    assert {"AnonymousIterator", "MakeIterator", "IteratorGetNextAsOptional"} <= _op_types(graph)
    assert {"Enter", "Exit", "LoopCond", "Switch", "Merge"} <= _op_types(graph)
    assert function(Dataset.range(5)).numpy() == 10


def test_datasets_of_one_element_spec_share_a_trace(eager):
    function = df.function(total)
    assert function(Dataset.range(5)).numpy() == 10
    assert function(Dataset.range(10)).numpy() == 45
    assert function(Dataset.from_tensor_slices(np.array([1, 2], np.int64))).numpy() == 3
    assert function(Dataset.range(3).map(lambda x: x * 2)).numpy() == 6
    assert function.experimental_get_tracing_count() == 1
    signature = function.get_concrete_function(Dataset.range(1)).structured_input_signature
    assert signature == ((df.data.DatasetSpec(df.TensorSpec([], df.int64)),), {})


def test_a_dataset_of_another_element_spec_is_traced_again(eager):
    @df.function
    def sum_all(ds):
        s = df.constant(0, df.int64)
        for x in ds:
            s += df.reduce_sum(x)
        return s

    assert sum_all(Dataset.range(3)).numpy() == 3
    assert sum_all(Dataset.range(3).batch(2)).numpy() == 3
    assert sum_all.experimental_get_tracing_count() == 2


def test_a_loop_over_an_empty_dataset_leaves_the_state_as_it_was(eager):
    @df.function
    def last_and_count(ds):
        last = df.constant(5, df.int64)
        count = 0
        for x in ds:
            last = x
            count += 1
        return last, count

    assert [t.numpy() for t in last_and_count(Dataset.range(0))] == [5, 0]
    last, count = last_and_count(Dataset.range(3))
    assert (last.numpy(), count.numpy(), count.dtype) == (2, 3, df.int32)


def test_break_and_continue_end_and_skip_iterations(eager):
    @df.function
    def until_above(ds, limit):
        s = df.constant(0, df.int64)
        for x in ds:
            if x > limit:
                break
            s += x
        return s

    @df.function
    def odd_sum(ds):
        s = df.constant(0, df.int64)
        for x in ds:
            if x % 2 == 0:
                continue
            s += x
        return s

    limit = df.constant(3, df.int64)
    assert until_above(Dataset.range(10), limit).numpy() == 6
    assert until_above(Dataset.range(2), limit).numpy() == 1
    assert until_above(Dataset.range(5, 9), limit).numpy() == 0
    assert odd_sum(Dataset.range(6)).numpy() == 9


def test_a_return_inside_the_loop_leaves_the_function(eager):
    # TensorFlow refuses a return in a staged loop; dataflow's AutoGraph allows it in every
    # staged loop, and so in a loop over a dataset.
    @df.function
    def first_above_two(ds):
        for x in ds:
            if x > 2:
                return x
        return df.constant(-1, df.int64)

    assert first_above_two(Dataset.range(10)).numpy() == 3
    assert first_above_two(Dataset.range(2)).numpy() == -1


def test_loops_unpack_tuple_and_read_dict_elements(eager):
    @df.function
    def weighted(ds):
        s = df.constant(0.0)
        for x, y in ds:
            s += df.cast(x, df.float32) * y
        return s

    @df.function
    def of_key(ds):
        s = df.constant(0, df.int32)
        for e in ds:
            s += e["a"]
        return s

    assert weighted(Dataset.from_tensor_slices(([1, 2], [3.0, 4.0]))).numpy() == 11.0
    assert of_key(Dataset.from_tensor_slices({"a": [1, 2, 3]})).numpy() == 6


def test_an_endless_dataset_is_read_as_far_as_take_or_break_goes(eager):
    @df.function
    def first_seven(ds):
        s = df.constant(0, df.int64)
        for x in ds.repeat().take(7):
            s += x
        return s

    @df.function
    def until_over_ten():
        s = df.constant(0, df.int64)
        for x in Dataset.range(3).repeat():
            if s > 10:
                break
            s += x
        return s

    assert first_seven(Dataset.range(3)).numpy() == 6
    assert until_over_ten().numpy() == 12


def test_each_loop_reads_the_dataset_from_its_start(eager):
    @df.function
    def twice(ds):
        s = df.constant(0, df.int64)
        for x in ds:
            s += x
        for x in ds:
            s += x
        return s

    assert twice(Dataset.range(3)).numpy() == 6
    assert twice(Dataset.range(3)).numpy() == 6  # and each call


# -- loops inside loops ----------------------------------------------------------------------------
def test_a_dataset_loop_inside_a_while_restarts_at_each_iteration(eager):
    @df.function
    def repeated(ds, n):
        s = df.constant(0, df.int64)
        i = df.constant(0)
        while i < n:
            for x in ds:
                s += x
            i += 1
        return s

    for n in range(5):
        assert repeated(Dataset.range(4), df.constant(n)).numpy() == 6 * n


def test_a_dataset_loop_inside_a_range_loop_has_an_iterator_per_iteration(eager):
    @df.function
    def repeated(ds, n):
        s = df.constant(0, df.int64)
        for _ in df.range(n):
            for x in ds:
                s += x
        return s

    for _ in range(4):  # enough calls for the compiled plan too
        assert repeated(Dataset.range(4), df.constant(3)).numpy() == 18


def test_nested_dataset_loops(eager):
    @df.function
    def products(ds):
        s = df.constant(0, df.int64)
        count = df.constant(0, df.int64)
        for x in ds:
            count += 1
            for y in ds:
                s += x * y
        return s, count

    @df.function
    def with_inner_made_here(ds):
        s = df.constant(0, df.int64)
        for x in ds:
            for y in Dataset.range(3):
                s += x * 10 + y
        return s

    assert [t.numpy() for t in products(Dataset.range(4))] == [36, 4]
    assert with_inner_made_here(Dataset.range(2)).numpy() == 36


# -- datasets made in the function -----------------------------------------------------------------
def test_a_dataset_made_in_the_function_reads_its_tensors(eager):
    @df.function
    def triangle(n):
        return total(Dataset.range(n))

    assert triangle(df.constant(4, df.int64)).numpy() == 6
    assert triangle(df.constant(5, df.int64)).numpy() == 10


def test_dataset_functions_in_a_function_read_its_arguments(eager):
    @df.function
    def scaled(ds, k):
        return total(ds.map(lambda v: v * k).filter(lambda v: v > k))

    assert scaled(Dataset.range(5), df.constant(2, df.int64)).numpy() == 18
    assert scaled(Dataset.range(5), df.constant(3, df.int64)).numpy() == 27
    assert scaled.experimental_get_tracing_count() == 1


def test_a_dataset_the_function_closes_over_is_read_at_each_call(eager):
    ds = Dataset.range(3)
    closure = df.function(lambda: total(ds))
    assert closure().numpy() == 3
    assert closure().numpy() == 3


# -- iter, next, reduce and len in a function ------------------------------------------------------
def test_iter_and_next_read_elements_in_the_function(eager):
    @df.function
    def first_two(ds):
        it = iter(ds)
        a = next(it)
        b = next(it)
        return a + b

    assert first_two(Dataset.range(5, 10)).numpy() == 11
    with pytest.raises(df.errors.OutOfRangeError, match="End of sequence"):
        first_two(Dataset.range(1))


def test_a_loop_over_an_iterator_goes_on_from_where_next_left_it(eager):
    @df.function
    def rest(ds):
        it = iter(ds)
        first = next(it)
        s = df.constant(0, df.int64)
        for x in it:
            s += x
        return first, s

    @df.function
    def next_after_break(ds):
        it = iter(ds)
        s = df.constant(0, df.int64)
        for x in it:
            if x > 1:
                break
            s += x
        return s, next(it)

    assert [t.numpy() for t in rest(Dataset.range(5))] == [0, 10]
    assert [t.numpy() for t in next_after_break(Dataset.range(5))] == [1, 3]


def test_reduce_in_a_function(eager):
    @df.function
    def weighted_sum(ds, k):
        return ds.reduce(df.constant(0, df.int64), lambda s, x: s + x * k)

    assert weighted_sum(Dataset.range(4), df.constant(2, df.int64)).numpy() == 12
    assert weighted_sum(Dataset.range(3), df.constant(3, df.int64)).numpy() == 9
    assert weighted_sum.experimental_get_tracing_count() == 1


def test_len_in_a_function_is_the_cardinality_checked_when_it_runs(eager):
    length = df.function(lambda ds: len(ds))
    assert length(Dataset.range(6)).numpy() == 6
    with pytest.raises(
        df.errors.InvalidArgumentError,
        match=r"len requires dataset with definitive cardinality, got -1",
    ):
        length(Dataset.range(3).repeat())
    with pytest.raises(
        df.errors.InvalidArgumentError,
        match=r"len requires dataset with definitive cardinality, got -2",
    ):
        length(Dataset.range(3).filter(lambda x: x > 0))


def test_a_python_for_without_autograph_stops_after_32_reads(eager):
    @df.function(autograph=False)
    def unconverted(ds):
        s = df.constant(0, df.int64)
        for x in ds:
            s += x
        return s

    with pytest.raises(ValueError, match="An unusually high number of `tf.data.Iterator.get_ne"):
        unconverted(Dataset.range(3))


# -- where the loop is not staged ------------------------------------------------------------------
def test_converted_code_run_eagerly_loops_in_python(eager):
    assert autograph.to_graph(total)(Dataset.range(4)).numpy() == 6


def test_a_converted_loop_in_a_tf1_graph_reads_the_dataset_at_each_run():
    s = autograph.to_graph(total)(Dataset.range(4))
    with df.Session() as sess:
        assert sess.run(s) == 6
        assert sess.run(s) == 6


def test_a_function_called_in_a_tf1_graph_builds_its_loop_there():
    s = df.function(total)(Dataset.range(5))
    with df.Session() as sess:
        assert sess.run(s) == 10


def test_a_dataset_argument_must_be_made_eagerly(eager):
    with df.Graph().as_default():
        ds = Dataset.from_tensor_slices(df.placeholder(df.int64, [None], name="rows"))
    with pytest.raises(RuntimeError, match="uses the tensor 'rows:0' of a graph"):
        df.function(total)(ds)


def test_a_concrete_function_is_had_for_a_dataset_spec(eager):
    concrete = df.function(total).get_concrete_function(
        df.data.DatasetSpec(df.TensorSpec([], df.int64))
    )
    assert concrete(Dataset.range(4)).numpy() == 6
    assert concrete(Dataset.range(5)).numpy() == 10


# -- shuffled datasets -----------------------------------------------------------------------------
def in_order(ds):
    out = df.TensorArray(df.int64, size=0, dynamic_size=True)
    i = 0
    for x in ds:
        out = out.write(i, x)
        i += 1
    return out.stack()


def test_a_shuffle_made_in_the_function_gives_each_call_one_order(eager):
    shuffled_here = df.function(lambda ds: in_order(ds.shuffle(10, seed=1)))
    first = shuffled_here(Dataset.range(10)).numpy().tolist()
    assert sorted(first) == list(range(10))
    assert shuffled_here(Dataset.range(10)).numpy().tolist() == first


def test_a_shuffled_dataset_passed_to_the_function_is_reshuffled_by_each_call(eager):
    shuffled = Dataset.range(10).shuffle(10, seed=1)
    read = df.function(in_order)
    first, second = read(shuffled).numpy().tolist(), read(shuffled).numpy().tolist()
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second
    assert read(Dataset.range(10).shuffle(10, seed=1)).numpy().tolist() == first


# -- an iterator made eagerly, read by a function --------------------------------------------------
def test_a_function_reads_an_eager_iterator_on_from_where_it_is(eager):
    iterator = iter(Dataset.range(10))
    step = df.function(lambda: next(iterator))
    assert [step().numpy() for _ in range(3)] == [0, 1, 2]
    assert next(iterator).numpy() == 3
    assert step().numpy() == 4
    times_ten = df.function(lambda it: next(it) * 10)
    other = iter(Dataset.range(2))
    assert [times_ten(other).numpy() for _ in range(2)] == [0, 10]
    with pytest.raises(df.errors.OutOfRangeError, match="End of sequence"):
        times_ten(other)


def test_a_loop_in_a_function_drains_an_eager_iterator(eager):
    iterator = iter(Dataset.range(6))
    assert next(iterator).numpy() == 0
    assert df.function(total)(iterator).numpy() == 15
    assert list(iterator) == []


def test_a_converted_loop_over_a_dataset_saves_and_loads(tmp_path):
    df.identity(autograph.to_graph(total)(Dataset.range(4)), name="total")
    path = str(tmp_path / "loop.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    assert {"AnonymousIterator", "MakeIterator", "IteratorGetNextAsOptional"} <= _op_types(loaded)
    with df.Session(graph=loaded) as sess:
        assert sess.run("total:0") == 6
        assert sess.run("total:0") == 6


def test_a_print_in_the_loop_body_runs_once_while_tracing(eager, capfd):
    # Python's print is not converted in a df.function (TensorFlow 2): it shows the symbolic
    # element once, when the loop body is traced, and nothing when the graph runs.
    @df.function
    def shout(ds):
        for x in ds:
            if x > 1:
                break
            print("element", x)
        return df.constant(0)

    shout(Dataset.range(5))
    shout(Dataset.range(5))
    captured = capfd.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if "element" in line]
    assert len(lines) == 1 and lines[0].startswith('element Tensor("')
    assert lines[0].endswith("shape=(), dtype=int64)")
