"""Behaviour of the codec and string names added to close tf.compat.v1 surface gaps: string
hashing, splitting and matching, image and audio codecs, parsing (values from TF 2.21)."""

import pytest

import dataflow as df

tf = df.compat.v1
re2 = pytest.importorskip("re2")


def _run(t):
    graph = t.graph if hasattr(t, "graph") else tf.get_default_graph()
    with tf.Session(graph=graph) as sess:
        return sess.run(t)


def _sparse(value):
    return value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist()


# -- hashing ---------------------------------------------------------------------------------------
HASHED = [
    b"",
    b"a",
    b"abc",
    b"hello",
    b"0123456789abcdefg",
    b"y" * 32,
    bytes(range(48)),
    bytes(range(65)),
    bytes(range(200)),
    "h\u00e9llo w\u00f6rld".encode(),
]
FAST = [
    1936946117179621455, 3694432073954588131, 2640714258260161385, 3786372426573024488,
    2800675501336285770, 2351315479247125839, 3719271712749750883, 478270155923209662,
    525935771297148851, 4390285103997208723,
]  # fmt: skip
LEGACY = [
    105434511174508091, 2996632905371535868, 1046625677629754806, 1331861223480393034,
    1785752214242554974, 3874897754820414304, 1012364170989806950, 2525959834624391444,
    4185538572715980330, 687603440920701714,
]  # fmt: skip
STRONG = [
    2300954737837343217, 2568798561151653994, 467923004791162527, 4232559499965833036,
    944306400137139166, 4150061048244364564, 3211593657674181847, 3173766696545641323,
    1816641315123940009, 1901328859805527958,
]  # fmt: skip


def test_to_hash_bucket_fast_does_bucket_by_farmhash_fingerprint64():
    with tf.Graph().as_default():
        buckets = tf.strings.to_hash_bucket_fast(HASHED, 2**62)
        assert buckets.dtype == tf.int64
        assert _run(buckets).tolist() == FAST
        small = tf.string_to_hash_bucket_fast(["a", "abc", "hello"], 7)
        assert _run(small).tolist() == [5, 1, 5]


def test_to_hash_bucket_does_bucket_by_the_legacy_hash64():
    with tf.Graph().as_default():
        assert _run(tf.strings.to_hash_bucket(HASHED, 2**62)).tolist() == LEGACY
        by_input = tf.string_to_hash_bucket(input=[["a"]], num_buckets=2**62)
        assert _run(by_input).tolist() == [[LEGACY[1]]]


def test_to_hash_bucket_strong_does_bucket_by_keyed_siphash():
    with tf.Graph().as_default():
        key = [1234, 0xFFFFFFFFFFFF]
        assert _run(tf.strings.to_hash_bucket_strong(HASHED, 2**62, key)).tolist() == STRONG
        assert tf.string_to_hash_bucket_strong is tf.strings.to_hash_bucket_strong


def test_to_hash_bucket_does_reject_bad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_buckets"):
            tf.strings.to_hash_bucket_fast(["a"], 0)
        with pytest.raises(ValueError, match="key"):
            tf.strings.to_hash_bucket_strong(["a"], 3, [1])
        with pytest.raises(TypeError):
            tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)


# -- splitting -------------------------------------------------------------------------------------
def test_strings_split_does_split_at_whitespace_into_a_sparse_tensor():
    with tf.Graph().as_default():
        value = _run(tf.strings.split(["hello world  a", "", " b "]))
        assert _sparse(value) == (
            [[0, 0], [0, 1], [0, 2], [2, 0]],
            [b"hello", b"world", b"a", b"b"],
            [3, 3],
        )


def test_strings_split_does_keep_empty_tokens_and_honour_maxsplit():
    with tf.Graph().as_default():
        value = _run(tf.strings.split(["a,b,,c", "d"], sep=","))
        assert value.values.tolist() == [b"a", b"b", b"", b"c", b"d"]
        assert value.dense_shape.tolist() == [2, 4]
        once = _run(tf.strings.split(["a,b,,c", "d"], sep=",", maxsplit=1))
        assert _sparse(once) == ([[0, 0], [0, 1], [1, 0]], [b"a", b"b,,c", b"d"], [2, 2])
        spaces = tf.strings.split(["  a  b c "], maxsplit=1, result_type="RaggedTensor")
        assert _run(spaces).to_list() == [[b"a", b"b c "]]


def test_strings_split_does_give_ragged_rows_for_any_rank():
    with tf.Graph().as_default():
        scalar = tf.strings.split(source="a b c", result_type="RaggedTensor")
        assert _run(scalar).to_list() == [[b"a", b"b", b"c"]]
        grid = [["a b", "c"], ["d e f", ""]]
        ragged = tf.strings.split(grid, result_type="RaggedTensor")
        assert _run(ragged).to_list() == [[[b"a", b"b"], [b"c"]], [[b"d", b"e", b"f"], []]]
        sparse = _run(tf.strings.split(grid))
        assert sparse.indices.tolist() == [
            [0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]
        ]  # fmt: skip
        assert sparse.dense_shape.tolist() == [2, 2, 3]
        with pytest.raises(ValueError, match="result_type"):
            tf.strings.split(["a"], result_type="dense")


def test_string_split_does_split_at_any_delimiter_byte():
    with tf.Graph().as_default():
        value = _run(tf.string_split(["a,b;;c", "d"], delimiter=",;"))
        assert _sparse(value) == (
            [[0, 0], [0, 1], [0, 2], [1, 0]],
            [b"a", b"b", b"c", b"d"],
            [2, 3],
        )
        kept = _run(tf.string_split(["a,b;;c", "d"], ",;", skip_empty=False))
        assert kept.values.tolist() == [b"a", b"b", b"", b"c", b"d"]
        chars = _run(tf.string_split(["abc", "d"], delimiter=""))
        assert chars.values.tolist() == [b"a", b"b", b"c", b"d"]
        ragged = tf.string_split(["a b", "c"], result_type="RaggedTensor")
        assert _run(ragged).to_list() == [[b"a", b"b"], [b"c"]]


def test_string_split_does_need_a_vector():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.string_split([["a b"]])
        with pytest.raises(ValueError):
            tf.string_split(["a"], sep=",", delimiter=";")


def test_bytes_split_does_cut_into_bytes():
    with tf.Graph().as_default():
        rows = tf.strings.bytes_split(["ab", "", "h\u00e9j"])
        assert _run(rows).to_list() == [[b"a", b"b"], [], [b"h", b"\xc3", b"\xa9", b"j"]]
        assert _run(tf.strings.bytes_split("abc")).tolist() == [b"a", b"b", b"c"]
        grid = tf.strings.bytes_split([["ab", "c"], ["", "d"]])
        assert _run(grid).to_list() == [[[b"a", b"b"], [b"c"]], [[], [b"d"]]]


# -- matching and joining --------------------------------------------------------------------------
def test_regex_full_match_does_match_whole_strings():
    with tf.Graph().as_default():
        static = tf.strings.regex_full_match(["abc", "ab", "xabc"], "a.c")
        assert static.op.type == "StaticRegexFullMatch"
        assert _run(static).tolist() == [True, False, False]
        dynamic = tf.strings.regex_full_match(["abc", "ab", "xabc"], tf.constant("a.*"))
        assert dynamic.op.type == "RegexFullMatch"
        assert _run(dynamic).tolist() == [True, True, False]


def test_regex_full_match_does_reject_a_bad_pattern():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Invalid pattern"):
            tf.strings.regex_full_match(["a"], "(a")
        bad = tf.strings.regex_full_match(["a"], tf.constant("(a"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            _run(bad)


def test_unsorted_segment_join_does_join_by_segment():
    with tf.Graph().as_default():
        joined = tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 4, ":")
        assert joined.shape.as_list() == [4]
        assert _run(joined).tolist() == [b"b", b"a:c", b"", b"d"]
        rows = tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [1, 1], 2, ":")
        assert _run(rows).tolist() == [[b"", b""], [b"a:c", b"b:d"]]


def test_unsorted_segment_join_does_reject_ids_out_of_range():
    with tf.Graph().as_default():
        for ids in ([-1, 0], [2, 0]):
            joined = tf.strings.unsorted_segment_join(["a", "b"], ids, 2)
            with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids"):
                _run(joined)
