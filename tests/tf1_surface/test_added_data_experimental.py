"""Behaviour of the ``data`` and ``data.experimental`` names added to close gaps of
``known_missing.txt``: options, the Iterator constructor, and TensorFlow's transformations,
sources and whole-dataset ops.

Expected values are what TensorFlow 2.21's ``tf.compat.v1`` (graph mode) gives for the same
program.
"""

import numpy as np
import pytest

import dataflow as df

D = df.data.Dataset
E = df.data.experimental


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def read(dataset, limit=100):
    """The elements (as lists where arrays) of a one-shot iterator over ``dataset``."""
    element = dataset.make_one_shot_iterator().get_next()
    out = []
    with df.Session() as sess:
        for _ in range(limit):
            try:
                value = sess.run(element)
            except df.errors.OutOfRangeError:
                break
            out.append(value.tolist() if isinstance(value, np.ndarray) else value)
    return out


def read_until_error(dataset, error):
    element = dataset.make_one_shot_iterator().get_next()
    out = []
    with df.Session() as sess:
        with pytest.raises(error) as raised:
            while True:
                out.append(sess.run(element))
    return out, str(raised.value)


# -- options ---------------------------------------------------------------------------------------
def test_options_do_start_unset_check_types_and_refuse_unknown_names():
    options = df.data.Options()
    assert options.deterministic is None
    assert options.threading.private_threadpool_size is None
    assert options.autotune.enabled is None
    assert options.experimental_distribute.auto_shard_policy == E.AutoShardPolicy.AUTO
    assert options.experimental_optimization.map_parallelization is None
    assert df.data.experimental.ThreadingOptions is df.data.ThreadingOptions
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options"):
        options.foo = 1
    with pytest.raises(TypeError, match='Property "deterministic" must be of type'):
        options.deterministic = 3
    with pytest.raises(AttributeError):
        options.optimization  # noqa: B018 - TF's name is experimental_optimization
    options.experimental_deterministic = False  # the deprecated name of deterministic
    assert options.deterministic is False
    assert options.experimental_threading is options.threading


def test_with_options_does_merge_and_options_cannot_be_changed():
    first = df.data.Options()
    first.deterministic = False
    second = df.data.Options()
    second.threading.private_threadpool_size = 3
    merged = first.merge(second)
    assert merged.deterministic is False and merged.threading.private_threadpool_size == 3
    assert df.data.Options() == df.data.Options() and first != second
    dataset = D.range(3).with_options(first).with_options(second).map(lambda x: x + 1)
    got = dataset.options()
    assert got.deterministic is False and got.threading.private_threadpool_size == 3
    with pytest.raises(ValueError, match="Mutating `tf.data.Options\\(\\)` returned by"):
        got.deterministic = True
    zipped = D.zip((D.range(2).with_options(first), D.range(2).with_options(second)))
    assert zipped.options() == merged
    assert D.range(2).options() == df.data.Options()
    assert read(dataset) == [1, 2, 3]
    with pytest.raises(TypeError, match="tf.data.Options"):
        D.range(2).with_options({"deterministic": False})


def test_option_enums_and_shard_hint_are_tensorflows():
    assert {m.name: m.value for m in E.AutoShardPolicy} == {
        "OFF": -1,
        "AUTO": 0,
        "FILE": 1,
        "DATA": 2,
        "HINT": 3,
    }
    assert [m.name for m in E.AutotuneAlgorithm] == [
        "DEFAULT",
        "HILL_CLIMB",
        "GRADIENT_DESCENT",
        "MAX_PARALLELISM",
        "STAGE_BASED",
    ]
    assert [(m.name, m.value) for m in E.ExternalStatePolicy] == [
        ("WARN", 0),
        ("IGNORE", 1),
        ("FAIL", 2),
    ]
    assert E.SHARD_HINT == -1
    assert E.ServiceOptions().pinned is None
    assert E.DistributeOptions().num_devices is None


# -- Iterator --------------------------------------------------------------------------------------
def test_iterator_constructor_does_take_tf1s_resource_initializer_and_structure():
    template = df.data.Iterator.from_structure((df.int64, df.float32), ([], [2]))
    init = template.make_initializer(D.from_tensor_slices((np.arange(3), np.ones((3, 2), "f4"))))
    iterator = df.data.Iterator(
        template._handle,
        init,
        template.output_types,
        template.output_shapes,
        template.output_classes,
    )
    assert iterator.initializer is init
    assert iterator.output_types == (df.int64, df.float32)
    assert iterator.output_shapes[1].as_list() == [2]
    assert iterator.output_classes == (df.Tensor, df.Tensor)
    first, second = iterator.get_next()
    with df.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run(first) == 0
        assert sess.run(second).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="same structure"):
        df.data.Iterator(template._handle, None, (df.int64,), ([], []), (df.Tensor,))
    with pytest.raises(TypeError, match="resource tensor"):
        df.data.Iterator(df.constant(1), None, df.int64, [], df.Tensor)


# -- transformations -------------------------------------------------------------------------------
def test_scan_does_carry_a_state_and_relax_its_shape():
    got = read(D.range(5).apply(E.scan(np.int64(0), lambda s, x: (s + x, s * 10))))
    assert got == [0, 0, 10, 30, 60]
    growing = D.range(3).apply(
        E.scan(
            df.constant([], df.int64),
            lambda s, x: (df.concat([s, df.reshape(x, [1])], 0), s),
        )
    )
    assert growing.output_shapes.as_list() == [None]
    assert read(growing) == [[], [0], [0, 1]]
    with pytest.raises(TypeError, match="types for the new state must match"):
        D.range(3).scan(np.int64(0), lambda s, x: (df.cast(s, df.float32), x))


def test_unique_does_keep_first_appearances_of_ints_and_strings():
    got = read(D.from_tensor_slices(np.array([1, 3, 1, 2, 3], np.int32)).apply(E.unique()))
    assert got == [1, 3, 2]
    assert read(D.from_tensor_slices([b"a", b"b", b"a"]).apply(E.unique())) == [b"a", b"b"]
    with pytest.raises(TypeError, match="does not support type"):
        D.from_tensor_slices(np.array([1.0])).apply(E.unique())


def test_ignore_errors_does_drop_failing_elements_and_read_on():
    dataset = D.from_tensor_slices([1.0, 0.0, 2.0]).map(
        lambda x: df.debugging.check_numerics(1.0 / x, "bad")
    )
    assert read(dataset.apply(E.ignore_errors())) == [1.0, 0.5]
    assert read(dataset.apply(E.ignore_errors(log_warning=True))) == [1.0, 0.5]
    _, message = read_until_error(dataset, df.errors.InvalidArgumentError)
    assert "bad" in message


def test_group_by_window_does_flush_full_windows_then_the_rest_by_key():
    windows = D.range(10).apply(
        E.group_by_window(lambda x: x % 2, lambda key, w: w.batch(3), window_size=3)
    )
    assert read(windows) == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    sized = D.range(10).apply(
        E.group_by_window(
            lambda x: x % 3, lambda k, w: w.batch(10), window_size_func=lambda k: k + 1
        )
    )
    assert read(sized) == [[0], [3], [1, 4], [6], [2, 5, 8], [9], [7]]
    with pytest.raises(ValueError, match="Either the `window_size` argument"):
        D.range(3).group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(ValueError, match="tf.int64 scalar"):
        D.range(3).group_by_window(lambda x: df.cast(x, df.int32), lambda k, w: w, 2)


def test_group_by_reducer_does_give_one_state_per_key_in_key_order():
    reducer = E.Reducer(lambda key: np.int64(0), lambda state, x: state + x, lambda state: state)
    assert read(D.range(10).apply(E.group_by_reducer(lambda x: x % 3, reducer))) == [18, 12, 15]
    keys = D.from_tensor_slices(np.array([9, 3, 100, -1, 3, 50, -7], np.int64))
    assert read(keys.apply(E.group_by_reducer(lambda x: x, reducer))) == [-7, -1, 6, 9, 50, 100]
    counting = E.Reducer(
        lambda key: (np.int64(0), np.int64(0)),
        lambda state, x: (state[0] + 1, state[1] + x),
        lambda count, total: {"count": count, "total": total},  # a tuple state comes unpacked
    )
    got = read(D.range(5).apply(E.group_by_reducer(lambda x: x % 2, counting)))
    assert got == [{"count": 3, "total": 6}, {"count": 2, "total": 4}]


def test_padded_batch_does_pad_to_the_longest_or_the_given_shape():
    ragged = D.range(1, 5).map(lambda x: df.fill([x], x))
    assert read(ragged.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    padded = ragged.padded_batch(2, [5], np.int64(-1))
    assert padded.output_shapes.as_list() == [None, 5]
    assert read(padded) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]],
        [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]],
    ]
    got, message = read_until_error(ragged.padded_batch(2, [2]), df.errors.OpError)
    assert "Attempted to pad to a smaller size than the input element." in message
    assert len(got) == 1


def test_bucket_by_sequence_length_does_batch_by_length_bucket():
    ragged = D.range(1, 8).map(lambda x: df.fill([x], x))
    buckets = ragged.apply(E.bucket_by_sequence_length(lambda x: df.shape(x)[0], [3, 5], [2, 2, 2]))
    assert buckets.output_shapes.as_list() == [None, None]
    assert read(buckets) == [
        [[1, 0], [2, 2]],
        [[3, 3, 3, 0], [4, 4, 4, 4]],
        [[5, 5, 5, 5, 5, 0], [6, 6, 6, 6, 6, 6]],
        [[7, 7, 7, 7, 7, 7, 7]],
    ]
    to_boundary = D.range(1, 5).map(lambda x: df.fill([x], x))
    got = read(
        to_boundary.apply(
            E.bucket_by_sequence_length(
                lambda x: df.shape(x)[0], [3, 5], [2, 2, 2], pad_to_bucket_boundary=True
            )
        )
    )
    assert got == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    unpadded = D.range(1, 5).map(lambda x: df.fill([2], x))
    got = read(
        unpadded.apply(
            E.bucket_by_sequence_length(
                lambda x: df.cast(x[0], df.int32), [3], [2, 3], no_padding=True
            )
        )
    )
    assert got == [[[1, 1], [2, 2]], [[3, 3], [4, 4]]]
    with pytest.raises(ValueError, match="len\\(bucket_batch_sizes\\) must equal"):
        ragged.apply(E.bucket_by_sequence_length(lambda x: df.shape(x)[0], [3], [2]))


def test_parallel_interleave_and_interleave_do_cycle_in_tensorflows_order():
    def repeated(x):
        return D.from_tensors(x).repeat(6 - x)

    want = [1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 1, 4, 4, 5]
    assert read(D.range(1, 6).interleave(repeated, cycle_length=3, block_length=2)) == want
    parallel = D.range(1, 6).apply(E.parallel_interleave(repeated, 3, block_length=2, sloppy=True))
    assert read(parallel) == want
    growing = D.range(1, 4).apply(E.parallel_interleave(lambda x: D.from_tensors(x).repeat(x), 2))
    assert read(growing) == [1, 2, 2, 3, 3, 3]
    assert read(D.range(1, 4).flat_map(lambda x: D.range(x))) == [0, 0, 1, 0, 1, 2]
    with pytest.raises(TypeError, match="must return a Dataset"):
        D.range(3).flat_map(lambda x: x)


def test_choose_from_datasets_does_follow_the_choices_and_pass_over_empty_inputs():
    choices = D.from_tensor_slices(np.array([0, 0, 1, 0, 1], np.int64))
    inputs = [D.range(1), D.range(10, 13)]
    assert read(E.choose_from_datasets(inputs, choices)) == [0, 10, 11]
    stopping = E.choose_from_datasets(inputs, choices, stop_on_empty_dataset=True)
    assert read(stopping) == [0]
    wrong = D.from_tensor_slices(np.array([0, 1, 1, 5, 0], np.int64))
    got, message = read_until_error(
        E.choose_from_datasets([D.range(3), D.range(10, 13)], wrong),
        df.errors.InvalidArgumentError,
    )
    assert [int(x) for x in got] == [0, 10, 11]
    assert "Selector index out of range: 5 >= 2" in message
    with pytest.raises(TypeError, match="scalar `tf.int64`"):
        E.choose_from_datasets(inputs, D.range(2).map(lambda x: df.cast(x, df.int32)))


def test_sample_from_datasets_does_draw_by_weight_until_all_are_read():
    got = read(E.sample_from_datasets([D.range(3), D.range(10, 13)], seed=5))
    assert sorted(got) == [0, 1, 2, 10, 11, 12]
    assert [x for x in got if x < 10] == [0, 1, 2]  # each input keeps its order
    only_second = E.sample_from_datasets([D.range(3), D.range(10, 13)], [0.0, 1.0])
    assert read(only_second) == [10, 11, 12]
    stopping = E.sample_from_datasets(
        [D.range(0), D.range(10, 100)], [0.5, 0.5], seed=1, stop_on_empty_dataset=True
    )
    got = read(stopping)
    assert got == list(range(10, 10 + len(got))) and len(got) < 90
    weighted = E.sample_from_datasets(
        [D.range(1).repeat(), D.range(1, 2).repeat()], [0.8, 0.2], seed=3
    )
    draws = read(weighted.take(2000), limit=2000)
    assert 0.75 < draws.count(0) / 2000 < 0.85
    by_dataset = E.sample_from_datasets(
        [D.range(3), D.range(10, 13)], D.from_tensors([1.0, 0.0]).repeat()
    )
    assert read(by_dataset) == [0, 1, 2]


def test_random_dataset_does_give_int64_scalars_below_2_to_the_32():
    dataset = E.RandomDataset(seed=3)
    assert dataset.output_types == df.int64 and dataset.output_shapes.as_list() == []
    first = read(dataset.take(50))
    assert all(0 <= x < 2**32 for x in first) and len(set(first)) == 50
    assert read(E.RandomDataset(seed=3).take(50)) == first
    again = read(E.RandomDataset(seed=3).take(3).repeat(2))
    assert again[:3] == again[3:]
    fresh = read(E.RandomDataset(seed=3, rerandomize_each_iteration=True).take(3).repeat(2))
    assert fresh[:3] != fresh[3:]


# -- whole-dataset ops -----------------------------------------------------------------------------
def test_get_single_element_does_give_the_one_element_or_fail():
    with df.Session() as sess:
        assert sess.run(E.get_single_element(D.range(1))) == 0
        pair = E.get_single_element(D.from_tensors((1, "a")))
        assert sess.run(pair) == (1, b"a")
        with pytest.raises(df.errors.InvalidArgumentError, match="Dataset was empty."):
            sess.run(E.get_single_element(D.range(0)))
        with pytest.raises(df.errors.InvalidArgumentError, match="more than one element"):
            sess.run(E.get_single_element(D.range(2)))
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        E.get_single_element([1])


def test_cardinality_of_list_files_does_count_the_matches(tmp_path):
    for name in ("a.csv", "b.csv", "c.txt"):
        (tmp_path / name).write_text("")
    files = D.list_files(str(tmp_path / "*.csv"), shuffle=False)
    with df.Session() as sess:
        assert sess.run(E.cardinality(files)) == 2
    assert read(files) == [str(tmp_path / "a.csv").encode(), str(tmp_path / "b.csv").encode()]
    shuffled = read(D.list_files(str(tmp_path / "*"), seed=3))
    assert sorted(shuffled) == sorted(
        str(tmp_path / n).encode() for n in ("a.csv", "b.csv", "c.txt")
    )


def test_cardinality_does_count_as_tensorflow_without_reading():
    few = D.range(5).filter(lambda x: x > 1)
    cases = {
        D.range(5): 5,
        D.range(5).repeat(): -1,
        few: -2,
        D.range(5).batch(2): 3,
        D.range(5).batch(2, drop_remainder=True): 2,
        D.range(10).take(3): 3,
        D.range(10).skip(3): 7,
        D.range(3).repeat(2): 6,
        D.range(4).shuffle(3): 4,
        D.range(3).map(lambda x: x): -2,  # TF1's map does not keep the count
        D.zip((D.range(3), D.range(5))): 3,
        D.range(3).concatenate(D.range(2)): 5,
        D.range(0).repeat(): 0,
        D.range(10).shard(3, 0): 4,
        D.range(10).shard(3, 2): 3,
        D.range(5).padded_batch(2): 3,
        few.take(2): -2,
        D.range(3).repeat().take(4): 4,
        D.range(3).skip(-1): 0,
        D.range(3).repeat().skip(2): -1,
        E.RandomDataset(1): -1,
        few.repeat(): -1,
        few.repeat(2): -2,
        D.zip((few, D.range(0))): -2,
        D.range(1).repeat().concatenate(few): -1,
        few.apply(E.assert_cardinality(4)): 4,
        D.range(5, 1): 0,
        D.range(0, 10, 3): 4,
        D.from_tensors(1): 1,
        D.range(3).apply(E.scan(np.int64(0), lambda s, x: (s, x))): 5 - 2,
        D.range(3).apply(E.unique()): -2,
        D.range(5).apply(E.dense_to_sparse_batch(2, [5])): 3,
        D.range(5).apply(E.dense_to_ragged_batch(2)): -2,
        D.range(3).interleave(lambda x: D.range(2), cycle_length=1): -2,
        E.from_list([1, 2, 3]): 3,
        D.range(3).apply(E.copy_to_device("/cpu:0")): -2,
        D.range(3).with_options(df.data.Options()): 3,
        E.RandomDataset(1).take(3): 3,
    }
    counts = [E.cardinality(d) for d in cases]
    with df.Session() as sess:
        assert [int(c) for c in sess.run(counts)] == list(cases.values())


def test_assert_cardinality_does_fail_on_too_few_or_too_many_elements():
    got, message = read_until_error(
        D.range(3).apply(E.assert_cardinality(5)), df.errors.FailedPreconditionError
    )
    assert got == [0, 1, 2]
    assert "expected to contain 5 elements but contained only 3 elements." in message
    got, message = read_until_error(
        D.range(3).apply(E.assert_cardinality(2)), df.errors.FailedPreconditionError
    )
    assert got == [0, 1]
    assert "expected to contain 2 elements but contained at least 3 elements." in message
    assert read(D.range(3).apply(E.assert_cardinality(3))) == [0, 1, 2]


def test_from_list_and_pad_to_cardinality_do_make_tensorflows_elements():
    assert read(E.from_list([(1, "a"), (2, "b")])) == [(1, b"a"), (2, b"b")]
    rows = E.from_list([[1, 2], [3]])
    assert rows.output_shapes.as_list() == [None]
    assert read(rows) == [[1, 2], [3]]
    with pytest.raises(TypeError, match="same structure and dtypes"):
        E.from_list([1, "a"])
    padded = D.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(4))
    assert read(padded) == [
        {"a": 1, "valid": True},
        {"a": 2, "valid": True},
        {"a": 0, "valid": False},
        {"a": 0, "valid": False},
    ]
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary"):
        D.range(2).apply(E.pad_to_cardinality(4))


def test_device_transformations_do_keep_elements_on_cpu_devices():
    assert read(D.range(3).apply(E.copy_to_device("/cpu:0"))) == [0, 1, 2]
    assert read(D.range(3).apply(E.prefetch_to_device("/device:CPU:0", 2))) == [0, 1, 2]
    with pytest.raises(ValueError, match="CPU only"):
        E.prefetch_to_device("/gpu:0")
    with pytest.raises(ValueError, match="CPU only"):
        E.copy_to_device("/job:w/device:GPU:1")


def test_get_structure_does_give_tensor_specs_of_datasets_and_iterators():
    dataset = D.from_tensor_slices({"x": np.zeros((4, 2), "f4"), "y": np.arange(4)})
    spec = E.get_structure(dataset)
    assert spec["x"] == df.TensorSpec([2], df.float32)
    assert spec["y"] == df.TensorSpec([], df.int64)
    assert E.get_structure(dataset.make_one_shot_iterator()) == spec
    with pytest.raises(TypeError, match="must be a `tf.data.Dataset`"):
        E.get_structure(3)


def test_enable_debug_mode_is_refused_in_graph_mode():
    with pytest.raises(ValueError, match="only supported in eager mode"):
        E.enable_debug_mode()


# -- file and database sources ---------------------------------------------------------------------
def test_csv_dataset_does_parse_typed_columns_and_fail_as_tensorflow(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text('h1,h2,h3\n1,2.5,x\n,3.5,"y,z"\n4,,w\n')
    defaults = [df.constant([0], df.int32), df.constant([], df.float32), df.string]
    dataset = E.CsvDataset(str(path), defaults, header=True)
    assert dataset.output_types == (df.int32, df.float32, df.string)
    got, message = read_until_error(dataset, df.errors.InvalidArgumentError)
    assert got == [(1, 2.5, b"x"), (0, 3.5, b"y,z")]
    assert "Field 1 is required but missing in record!" in message
    two = [df.constant([0], df.int64), df.string]
    want = [(1, b"x"), (0, b"y,z"), (4, b"w")]
    assert read(E.CsvDataset(str(path), two, header=True, select_cols=[0, 2])) == want
    assert read(E.CsvDataset(str(path), two, header=True, exclude_cols=[1])) == want
    with pytest.raises(ValueError, match="Either select_cols or exclude_cols"):
        E.CsvDataset(str(path), two, select_cols=[0, 2], exclude_cols=[1])
    unquoted = E.CsvDataset(str(path), [df.string] * 3, header=True, use_quote_delim=False)
    got, message = read_until_error(unquoted, df.errors.InvalidArgumentError)
    assert got == [(b"1", b"2.5", b"x")] and "Field 0 is required" in message


def test_csv_dataset_does_read_on_past_bad_records_with_ignore_errors(tmp_path):
    short = tmp_path / "b.csv"
    short.write_text("1,2\n3\n5,6\n")
    pairs = E.CsvDataset(str(short), [df.constant([0], df.int32)] * 2)
    got, message = read_until_error(pairs, df.errors.InvalidArgumentError)
    assert got == [(1, 2)] and "Expect 2 fields but have 1 in record" in message
    assert read(pairs.apply(E.ignore_errors())) == [(1, 2), (5, 6)]
    bad = tmp_path / "c.csv"
    bad.write_text("1,abc\n")
    _, message = read_until_error(
        E.CsvDataset(str(bad), [df.constant([0], df.int32)] * 2), df.errors.InvalidArgumentError
    )
    assert "Field 1 in record is not a valid int32: abc" in message
    gz = tmp_path / "d.csv.gz"
    import gzip

    gz.write_bytes(gzip.compress(b"7,8\n"))
    zipped = E.CsvDataset(str(gz), [df.constant([0], df.int32)] * 2, compression_type="GZIP")
    assert read(zipped) == [(7, 8)]


def test_make_csv_dataset_does_infer_names_and_types_and_batch_dicts(tmp_path):
    (tmp_path / "m1.csv").write_text('a,b,c,d\n1,2.5,x,7\n2,,y,8\n3,4.5,"p,q",9\n')
    (tmp_path / "m2.csv").write_text("a,b,c,d\n4,1e40,z,10\n")
    pattern = str(tmp_path / "m*.csv")
    dataset = E.make_csv_dataset(pattern, 3, shuffle=False, num_epochs=1)
    assert dataset.output_types == {"a": df.int32, "b": df.float64, "c": df.string, "d": df.int32}
    assert dataset.output_shapes["a"].as_list() == [None]
    got = read(dataset)
    assert got[0]["a"].tolist() == [1, 2, 3] and got[0]["b"].tolist() == [2.5, 0.0, 4.5]
    assert got[0]["c"].tolist() == [b"x", b"y", b"p,q"] and got[1]["b"].tolist() == [1e40]
    labelled = E.make_csv_dataset(
        str(tmp_path / "m1.csv"), 2, shuffle=False, num_epochs=1, label_name="d",
        select_columns=["a", "d"],
    )  # fmt: skip
    assert labelled.output_types == ({"a": df.int32}, df.int32)
    pairs = read(labelled)
    assert [(f["a"].tolist(), label.tolist()) for f, label in pairs] == [
        ([1, 2], [7, 8]),
        ([3], [9]),
    ]
    typed = E.make_csv_dataset(
        str(tmp_path / "m1.csv"), 2, shuffle=False, label_name="d",
        column_defaults=[df.int64, 0.0, "", 0],
    )  # fmt: skip
    assert typed.output_types == ({"a": df.int64, "b": df.float32, "c": df.string}, df.int32)
    assert typed.output_shapes[1].as_list() == [2]  # without end, every batch is full
    batches = read(typed, limit=3)
    assert [label.tolist() for _, label in batches] == [[7, 8], [9, 7], [8, 9]]
    with pytest.raises(ValueError, match="No files match"):
        E.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    with pytest.raises(ValueError, match="`label_name` provided must be one of the columns"):
        E.make_csv_dataset(pattern, 2, label_name="z")


def test_sql_dataset_does_read_sqlite_rows_as_tensorflow(tmp_path):
    import sqlite3

    db = str(tmp_path / "t.db")
    with sqlite3.connect(db) as connection:
        connection.execute("create table t(a int, b text, c real, d int)")
        connection.executemany(
            "insert into t values(?,?,?,?)",
            [(1, "x", 1.5, 1), (2, "y", 2.5, 0), (3, None, None, None)],
        )
    types = (df.int32, df.string, df.float64, df.bool)
    rows = read(E.SqlDataset("sqlite", db, "select a, b, c, d from t", types))
    assert rows == [(1, b"x", 1.5, True), (2, b"y", 2.5, False), (3, b"", 0.0, False)]
    single = E.SqlDataset("sqlite", db, "select a from t", df.int32)
    assert single.output_types == df.int32 and read(single) == [1, 2, 3]
    cases = [
        ("sqlite", "select a, b from t", (df.int64, df.string, df.int8),
         df.errors.InvalidArgumentError, "The number of columns in query (2) must match"),
        ("sqlite", "select a, c from t", (df.string, df.float32),
         df.errors.InvalidArgumentError, "must be one of: DT_STRING"),
        ("mysql", "select a from t", (df.int32,),
         df.errors.InvalidArgumentError, "The database type, mysql, is not supported"),
        ("sqlite", "select nope from t", (df.int32,),
         df.errors.UnknownError, "no such column: nope"),
    ]  # fmt: skip
    for driver, query, out_types, error, message in cases:
        _, got = read_until_error(E.SqlDataset(driver, db, query, out_types), error)
        assert message in got


def test_tfrecord_writer_does_write_a_dataset_as_tensorflow(tmp_path):
    path = str(tmp_path / "out.tfr")
    op = E.TFRecordWriter(path).write(D.from_tensor_slices([b"a", b"bc"]))
    with df.Session() as sess:
        assert sess.run(op) is None
    want = "01000000000000000175de4161786ee428020000000000000078270b3462633433dba7"
    assert open(path, "rb").read().hex() == want
    zipped = str(tmp_path / "out.tfr.gz")
    op = E.TFRecordWriter(zipped, "GZIP").write(D.from_tensor_slices([b"a", b"bc"]))
    with df.Session() as sess:
        sess.run(op)
    assert read(df.data.TFRecordDataset(zipped, "GZIP")) == [b"a", b"bc"]
    with pytest.raises(TypeError, match="scalar `tf.string` elements"):
        E.TFRecordWriter(path).write(D.range(3))


# -- specs, Optional, NumpyIterator ----------------------------------------------------------------
def test_get_next_as_optional_does_say_when_the_iterator_has_ended():
    iterator = df.data.make_initializable_iterator(D.range(2))
    optional = E.get_next_as_optional(iterator)
    assert isinstance(optional, E.Optional)
    assert optional.element_spec == df.TensorSpec([], df.int64)
    has_value, value = optional.has_value(), optional.get_value()
    with df.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run([has_value, value]) == [True, 0]
        assert sess.run([has_value, value]) == [True, 1]
        assert not sess.run(has_value)
        with pytest.raises(df.errors.InvalidArgumentError, match="does not have a value"):
            sess.run(value)
    one_shot = D.range(1).make_one_shot_iterator().get_next_as_optional()
    with df.Session() as sess:
        assert sess.run([one_shot.has_value(), one_shot.get_value()]) == [True, 0]
        assert not sess.run(one_shot.has_value())


def test_optional_from_value_and_empty_do_hold_a_value_or_none():
    empty = E.Optional.empty(df.TensorSpec([2], df.float32))
    full = E.Optional.from_value((1, "a"))
    assert full.element_spec == (df.TensorSpec([], df.int32), df.TensorSpec([], df.string))
    with df.Session() as sess:
        assert sess.run([empty.has_value(), full.has_value(), full.get_value()]) == [
            False,
            True,
            (1, b"a"),
        ]
        with pytest.raises(df.errors.InvalidArgumentError):
            sess.run(empty.get_value())
    spec = E.OptionalStructure(df.TensorSpec([], df.int64))
    assert repr(spec) == "OptionalSpec(TensorSpec(shape=(), dtype=df.int64, name=None),)"
    assert spec == E.OptionalStructure(df.TensorSpec([], df.int64))
    assert spec.is_compatible_with(E.Optional.from_value(np.int64(3)))
    assert not spec.is_compatible_with(full)


def test_dataset_spec_and_structures_are_tensorflows_specs():
    dataset = D.from_tensor_slices(np.zeros((3, 2), np.float32))
    spec = df.data.DatasetSpec.from_value(dataset)
    assert spec == df.data.DatasetSpec(df.TensorSpec([2], df.float32))
    assert spec.element_spec == df.TensorSpec([2], df.float32) and spec.value_type is D
    assert spec.is_compatible_with(df.data.DatasetSpec(df.TensorSpec([None], df.float32)))
    assert not spec.is_compatible_with(df.data.DatasetSpec(df.TensorSpec([3], df.float32)))
    assert repr(E.DatasetStructure(df.TensorSpec([2], df.float32), [4])) == (
        "DatasetSpec(TensorSpec(shape=(2,), dtype=df.float32, name=None), TensorShape([4]))"
    )
    assert E.TensorStructure(df.int32, [2]) == df.TensorSpec([2], df.int32)
    assert E.SparseTensorStructure(df.int32, [2]) == df.SparseTensorSpec([2], df.int32)
    ragged = E.RaggedTensorStructure(df.int32, [2, None], 1)
    assert ragged.ragged_rank == 1 and ragged.dtype == df.int32
    with pytest.raises(TypeError, match="structure of TensorSpecs"):
        df.data.DatasetSpec(3)


def test_numpy_iterator_does_give_numpy_elements_in_eager_mode_only():
    from dataflow.eager.context import eager_mode

    with pytest.raises(RuntimeError, match="only supports Python-style iteration in eager"):
        df.data.NumpyIterator(D.range(2))
    with eager_mode():
        rows = D.from_tensor_slices({"a": np.arange(3), "b": [b"x", b"y", b"z"]}).map(
            lambda e: {"a": e["a"] * 2, "b": e["b"]}
        )
        got = list(df.data.NumpyIterator(rows))
        batches = [b.tolist() for b in df.data.NumpyIterator(D.range(3).batch(2))]
    assert got == [{"a": 0, "b": b"x"}, {"a": 2, "b": b"y"}, {"a": 4, "b": b"z"}]
    assert type(got[0]["a"]) is np.int64
    assert batches == [[0, 1], [2]]


# -- sparse and ragged elements --------------------------------------------------------------------
def _sparse(value):
    return (value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist())


def test_dense_to_sparse_batch_does_make_rows_of_a_sparse_tensor():
    rows = D.range(1, 5).map(lambda x: df.fill([x], x))
    batched = rows.apply(E.dense_to_sparse_batch(2, [5]))
    assert df.data.get_output_classes(batched) is df.SparseTensor
    assert batched.output_shapes.as_list() == [None, 5] and batched.output_types == df.int64
    got = [_sparse(v) for v in read(batched)]
    assert got == [
        ([[0, 0], [1, 0], [1, 1]], [1, 2, 2], [2, 5]),
        ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [1, 3]], [3, 3, 3, 4, 4, 4, 4], [2, 5]),
    ]
    longest = D.range(1, 4).map(lambda x: df.fill([x], x)).apply(E.dense_to_sparse_batch(2, [None]))
    assert [_sparse(v)[2] for v in read(longest)] == [[2, 2], [1, 3]]
    got, message = read_until_error(
        rows.apply(E.dense_to_sparse_batch(2, [2])), df.errors.DataLossError
    )
    assert len(got) == 1
    assert "Input element had shape ([3]) that is larger than the row shape ([2])." in message


def test_dense_to_ragged_batch_does_batch_unknown_shapes_as_ragged():
    pairs = D.range(1, 5).map(lambda x: (df.fill([x], x), x))
    batched = pairs.apply(E.dense_to_ragged_batch(2))
    ragged_spec, dense_spec = batched.element_spec
    assert ragged_spec.ragged_rank == 1 and ragged_spec.shape.as_list() == [None, None]
    assert dense_spec == df.TensorSpec([None], df.int64)
    assert df.data.get_output_classes(batched) == (df.RaggedTensor, df.Tensor)
    got = read(batched)
    assert [(r.to_list(), d.tolist()) for r, d in got] == [
        ([[1], [2, 2]], [1, 2]),
        ([[3, 3, 3], [4, 4, 4, 4]], [3, 4]),
    ]
    fixed = D.range(1, 5).map(lambda x: df.fill([2], x)).apply(E.dense_to_ragged_batch(3))
    assert fixed.element_spec == df.TensorSpec([None, 2], df.int64)
    assert read(fixed) == [[[1, 1], [2, 2], [3, 3]], [[4, 4]]]


def test_sparse_elements_do_batch_map_and_feed_an_iterator():
    sparse = df.SparseTensor([[0, 1]], np.array([5], np.int32), [2, 3])
    batched = D.from_tensors(sparse).repeat(3).batch(2)
    assert batched.element_spec == df.SparseTensorSpec([None, 2, 3], df.int32)
    assert [_sparse(v) for v in read(batched)] == [
        ([[0, 0, 1], [1, 0, 1]], [5, 5], [2, 2, 3]),
        ([[0, 0, 1]], [5], [1, 2, 3]),
    ]
    made = D.range(3).map(
        lambda x: df.SparseTensor(df.reshape(x, [1, 1]), df.reshape(x, [1]), df.reshape(x + 1, [1]))
    )
    assert [_sparse(v) for v in read(made.batch(2))] == [
        ([[0, 0], [1, 1]], [0, 1], [2, 2]),
        ([[0, 2]], [2], [1, 3]),
    ]
    dense = (
        D.range(3)
        .map(lambda x: df.SparseTensor([[0]], df.reshape(x, [1]), [3]))
        .map(lambda s: df.sparse.to_dense(s))
    )
    assert read(dense) == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    iterator = df.data.Iterator.from_structure(
        df.int64, df.TensorShape([None]), output_classes=df.SparseTensor
    )
    element = iterator.get_next()
    assert isinstance(element, df.SparseTensor)
    with df.Session() as sess:
        sess.run(iterator.make_initializer(made))
        assert _sparse(sess.run(element)) == ([[0]], [0], [1])
    with pytest.raises(TypeError, match="dense tensors"):
        made.padded_batch(2)
    with pytest.raises(TypeError, match="dense tensors"):
        D.from_tensor_slices(sparse)


def test_parse_example_dataset_and_make_batched_features_dataset_do_parse_batches(tmp_path):
    records = [
        bytes.fromhex("0a1c0a0b0a016112061a040a0201020a0d0a0166120812060a040000003f"),
        bytes.fromhex("0a1b0a0a0a016112051a030a01030a0d0a0166120812060a040000c03f"),
        bytes.fromhex("0a180a070a016112021a000a0d0a0166120812060a0400002040"),
    ]  # a: int64 [1, 2], [3], []; f: float [0.5], [1.5], [2.5] (written by TensorFlow)
    features = {"a": df.io.VarLenFeature(df.int64), "f": df.io.FixedLenFeature([1], df.float32)}
    parsed = D.from_tensor_slices(records).batch(2).apply(E.parse_example_dataset(features))
    assert df.data.get_output_classes(parsed) == {"a": df.SparseTensor, "f": df.Tensor}
    assert parsed.output_shapes["f"].as_list() == [None, 1]
    first, second = read(parsed)
    assert _sparse(first["a"]) == ([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
    assert first["f"].tolist() == [[0.5], [1.5]]
    assert _sparse(second["a"]) == ([], [], [1, 0]) and second["f"].tolist() == [[2.5]]
    with pytest.raises(TypeError, match="vectors of strings"):
        D.from_tensor_slices(records).apply(E.parse_example_dataset(features))
    path = str(tmp_path / "f1.tfr")
    with df.python_io.TFRecordWriter(path) as writer:
        for r in records:
            writer.write(r)
    labelled = E.make_batched_features_dataset(
        path, 2, features, label_key="f", shuffle=False, num_epochs=1
    )
    got = read(labelled)
    assert [label.tolist() for _, label in got] == [[[0.5], [1.5]], [[2.5]]]
    assert _sparse(got[0][0]["a"]) == ([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
    endless = E.make_batched_features_dataset(path, 2, features, shuffle=False)
    assert endless.element_spec["f"] == df.TensorSpec([2, 1], df.float32)
    assert len(read(endless, limit=5)) == 5
    missing = E.make_batched_features_dataset(str(tmp_path / "none*.tfr"), 2, features)
    read_until_error(missing, df.errors.InvalidArgumentError)
    with pytest.raises(ValueError, match="must be one of the `features` keys"):
        E.make_batched_features_dataset(path, 2, features, label_key="z")


def _resampled(dataset):
    pairs = read(dataset, limit=5000)
    classes = np.array([int(c) for c, _ in pairs])
    assert all(int(c) == int(v) for c, v in pairs)  # each class is its element's
    return classes


def test_rejection_resample_does_even_out_the_classes_as_tensorflow():
    data = np.array([0] * 800 + [1] * 200, np.int32)
    np.random.RandomState(0).shuffle(data)
    dataset = D.from_tensor_slices(data)
    given = dataset.apply(
        E.rejection_resample(lambda x: x, [0.5, 0.5], initial_dist=[0.8, 0.2], seed=1)
    )
    assert given.output_types == (df.int32, df.int32)
    classes = _resampled(given)
    # TensorFlow keeps 570 of 1000 here, 292 and 278 of each class (its random draws differ)
    assert 450 < len(classes) < 650 and abs(np.mean(classes) - 0.5) < 0.08
    estimated = _resampled(dataset.apply(E.rejection_resample(lambda x: x, [0.5, 0.5], seed=1)))
    assert 450 < len(estimated) < 700 and abs(np.mean(estimated) - 0.5) < 0.08
    unchanged = _resampled(
        dataset.apply(E.rejection_resample(lambda x: x, [0.8, 0.2], initial_dist=[0.8, 0.2]))
    )
    assert len(unchanged) == 1000 and unchanged.tolist() == data.tolist()
    with pytest.raises(ValueError, match="must be a constant"):
        dataset.apply(E.rejection_resample(lambda x: x, df.placeholder(df.float32, [2])))


# -- saving an iterator ----------------------------------------------------------------------------
def test_make_saveable_from_iterator_does_save_and_restore_the_position(tmp_path):
    iterator = df.data.make_initializable_iterator(D.range(10).map(lambda x: x * 2).batch(2))
    element = iterator.get_next()
    saveable = E.make_saveable_from_iterator(iterator)
    df.add_to_collection(df.GraphKeys.SAVEABLE_OBJECTS, saveable)
    saver = df.train.Saver()
    with df.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run(element).tolist() == [0, 2]
        path = saver.save(sess, str(tmp_path / "it"))
        assert sess.run(element).tolist() == [4, 6]
    with df.Session() as sess:
        with pytest.raises(df.errors.FailedPreconditionError, match="not been initialized"):
            saver.restore(sess, path)
        sess.run(iterator.initializer)
        saver.restore(sess, path)
        assert [sess.run(element).tolist() for _ in range(2)] == [[4, 6], [8, 10]]
    one_shot = D.range(5).make_one_shot_iterator()
    value = one_shot.get_next()
    one_shot_saver = df.train.Saver([E.make_saveable_from_iterator(one_shot)])
    with df.Session() as sess:
        sess.run(value), sess.run(value)
        path = one_shot_saver.save(sess, str(tmp_path / "one_shot"))
    with df.Session() as sess:
        one_shot_saver.restore(sess, path)
        assert sess.run(value) == 2


def test_make_saveable_from_iterator_does_apply_the_external_state_policy(tmp_path):
    noisy = df.data.make_initializable_iterator(
        D.range(10).map(lambda x: x + df.random.uniform([], 0, 1, df.int64))
    )
    refusing = df.train.Saver([E.make_saveable_from_iterator(noisy)])
    ignoring = df.train.Saver([E.make_saveable_from_iterator(noisy, "ignore")])
    warning = df.train.Saver([E.make_saveable_from_iterator(noisy, E.ExternalStatePolicy.WARN)])
    with df.Session() as sess:
        sess.run(noisy.initializer)
        with pytest.raises(df.errors.FailedPreconditionError, match="RandomUniformInt"):
            refusing.save(sess, str(tmp_path / "a"))
        assert ignoring.save(sess, str(tmp_path / "b")) == str(tmp_path / "b")
        assert warning.save(sess, str(tmp_path / "c")) == str(tmp_path / "c")
    with pytest.raises(ValueError, match="Invalid `ExternalStatePolicy.`"):
        E.make_saveable_from_iterator(noisy, "sometimes")


# -- snapshot --------------------------------------------------------------------------------------
def test_snapshot_does_write_once_then_read_the_snapshot(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a\nb\nc\nd\ne\n")
    snap = tmp_path / "snap"
    dataset = df.data.TextLineDataset(str(source)).apply(E.snapshot(str(snap)))
    assert dataset.output_types == df.string
    assert read(dataset) == [b"a", b"b", b"c", b"d", b"e"]
    (directory,) = list(snap.iterdir())
    assert (directory / "snapshot.metadata").exists()
    source.write_text("X\nY\n")  # the snapshot, not the file, is read now, in the same order
    assert read(dataset) == [b"a", b"b", b"c", b"d", b"e"]
    other = df.data.TextLineDataset(str(source)).map(lambda x: x).apply(E.snapshot(str(snap)))
    assert read(other) == [b"X", b"Y"]  # another pipeline: a snapshot of its own


def test_snapshot_does_use_shard_func_reader_func_and_compression(tmp_path):
    numbers = D.range(6).map(lambda x: (x, df.as_string(x)))
    custom = numbers.apply(
        E.snapshot(
            str(tmp_path / "s"),
            compression="GZIP",
            shard_func=lambda x, s: x % 3,
            reader_func=lambda shards: shards.flat_map(lambda shard: shard),
        )
    )
    assert read(custom) == [(i, str(i).encode()) for i in range(6)]  # the first read
    assert read(custom) == [(i, str(i).encode()) for i in (0, 3, 1, 4, 2, 5)]  # shard by shard
    (directory,) = list((tmp_path / "s").iterdir())
    assert sorted(p.name for p in directory.iterdir() if p.suffix == ".shard") == [
        "00000000.shard",
        "00000001.shard",
        "00000002.shard",
    ]
    partial = D.range(6).apply(E.snapshot(str(tmp_path / "p")))
    assert read(partial, limit=2) == [0, 1]  # stopped early: no snapshot is left
    assert all(not any(d.iterdir()) for d in (tmp_path / "p").iterdir())
    with pytest.raises(ValueError, match="SNAPPY"):
        D.range(3).apply(E.snapshot(str(tmp_path / "x"), compression="SNAPPY"))
    with pytest.raises(TypeError, match="Invalid `shard_func`"):
        D.range(3).apply(E.snapshot(str(tmp_path / "x"), shard_func=lambda x: 1.0))


def test_threading_options_do_set_the_threads_of_the_pipelines_functions():
    options = df.data.Options()
    options.threading.private_threadpool_size = 3
    options.threading.max_intra_op_parallelism = 1
    iterator = D.range(3).map(lambda x: x * 2).with_options(options).make_one_shot_iterator()
    element = iterator.get_next()
    with df.Session() as sess:
        assert [sess.run(element) for _ in range(3)] == [0, 2, 4]
        state = sess._resources[iterator._one_shot_key]
        (function_session,) = [s for k, s in state.sessions.items() if not isinstance(k, tuple)]
        assert function_session._config.inter_op_parallelism_threads == 3
        assert function_session._intra_op_threads == 1
    bad = df.data.Options()
    bad.threading.private_threadpool_size = -1
    with pytest.raises(ValueError, match="private_threadpool_size must be at least 0"):
        D.range(3).with_options(bad).make_one_shot_iterator().get_next()
