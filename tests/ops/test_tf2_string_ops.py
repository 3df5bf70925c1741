"""String ops as TensorFlow 2 runs them: ``+`` on string tensors, ``strings.split`` giving
RaggedTensors in a program that runs eagerly, the ragged results of the other splitting and
decoding ops, and ``strings.to_number``'s reading of numbers.

Expected values were printed by TensorFlow 2.21 (eagerly, ``tf.function``, and
``tf.compat.v1`` in graph mode) for the same programs.
"""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture
def eager():
    with df.eager_mode():
        yield


def listed(value):
    """A tensor's or RaggedTensor's value as nested lists."""
    if isinstance(value, df.RaggedTensor):
        return value.to_list()
    return value.numpy().tolist()


# -- + on strings ----------------------------------------------------------------------------------
def test_plus_concatenates_string_tensors_with_broadcasting(eager):
    # tf.constant(["a","b"]) + "!" -> [b'a!' b'b!']; "!" + ... -> [b'!a' b'!b']
    assert listed(df.constant(["a", "b"]) + "!") == [b"a!", b"b!"]
    assert listed("!" + df.constant(["a", "b"])) == [b"!a", b"!b"]
    # [["a"],["b"]] + ["x","y"] -> [[b'ax' b'ay'] [b'bx' b'by']]
    grid = df.constant([["a"], ["b"]]) + df.constant(["x", "y"])
    assert grid.dtype is df.string and listed(grid) == [[b"ax", b"ay"], [b"bx", b"by"]]
    # tf.add and tf.math.add take strings too; empty strings stay empty
    assert listed(df.add("x", ["y"])) == [b"xy"]
    assert listed(df.math.add(df.constant([""]), df.constant([""]))) == [b""]


def test_plus_of_two_string_scalars_is_a_string_scalar_later_ops_can_read(eager):
    joined = df.constant("x") + "y"
    assert joined.shape.as_list() == [] and joined.numpy() == b"xy"
    # the value is a 0-d array, as every string tensor's: string ops read it
    assert df.strings.length(joined + "é").numpy() == 4
    assert listed(df.strings.split(joined + " z")) == [b"xy", b"z"]


def test_plus_on_strings_in_a_function_and_in_a_graph():
    with df.eager_mode():
        exclaim = df.function(lambda text: text + "!")
        assert exclaim(df.constant("hi")).numpy() == b"hi!"
        assert listed(exclaim(df.constant(["a", "bc"]))) == [b"a!", b"bc!"]
    text = df.placeholder(df.string, [])
    shout = df.strings.upper(text + "!") + "?"
    lengths = df.strings.length(text + text + text)
    with df.Session() as sess:
        # repeated runs reach the compiled plan: the results stay the same
        for _ in range(4):
            assert sess.run([shout, lengths], {text: "ab"}) == [b"AB!?", 6]


def test_plus_on_strings_rejects_numbers_and_mismatched_shapes(eager):
    # TF: InvalidArgumentError "cannot compute Add as input #1(zero-based) was expected to be a
    # string tensor but is a int32 tensor"; here the conversion's TypeError names the op
    with pytest.raises(TypeError, match=r"Add op 'add' at .*test_tf2_string_ops.py:\d+"):
        df.constant(["a"]) + 1
    # TF: InvalidArgumentError, Sub does not take strings
    with pytest.raises(
        df.errors.InvalidArgumentError, match=r"Input 'x' of 'Sub' has dtype string"
    ):
        df.constant(["a"]) - df.constant(["b"])
    # TF: InvalidArgumentError "Incompatible shapes: [2] vs. [3]"
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Add op .*Incompatible shapes"):
        df.constant(["a", "b"]) + df.constant(["a", "b", "c"])
    # TF: InvalidArgumentError, AddN does not take strings
    with pytest.raises(df.errors.InvalidArgumentError, match=r"AddN"):
        df.add_n([df.constant("x"), df.constant("y")])


def test_string_zeros_are_empty_strings_and_there_are_no_string_ones(eager):
    # tf.zeros_like(tf.constant(["a"])) -> [b'']; tf.zeros([2], tf.string) -> [b'' b'']
    assert listed(df.zeros_like(df.constant(["a"]))) == [b""]
    assert listed(df.zeros([2], df.string)) == [b"", b""]
    assert listed(df.zeros([1500], df.string))[:2] == [b"", b""]
    # tf.ones_like of a string tensor: InvalidArgumentError (OnesLike takes no strings)
    with pytest.raises(TypeError, match=r"ones_like at .*: a string tensor has no ones"):
        df.ones_like(df.constant(["a"]))


# -- strings.split ---------------------------------------------------------------------------------
def test_split_in_eager_mode_gives_a_ragged_tensor_as_tensorflow_2(eager):
    # tf.strings.split(["hello world","a b"])
    #   -> <tf.RaggedTensor [[b'hello', b'world'],\n [b'a', b'b']]>  (numpy's line breaks)
    words = df.strings.split(["hello world", "a b"])
    assert isinstance(words, df.RaggedTensor)
    assert words.to_list() == [[b"hello", b"world"], [b"a", b"b"]]
    assert repr(words) == "<df.RaggedTensor [[b'hello', b'world'],\n [b'a', b'b']]>"
    # a scalar gives the 1-D tensor of its tokens
    tokens = df.strings.split("hello world")
    assert isinstance(tokens, df.Tensor) and listed(tokens) == [b"hello", b"world"]
    # a matrix gives one more ragged dimension; a RaggedTensor stays ragged
    assert df.strings.split([["a b", "c"], ["", "d e f"]]).to_list() == [
        [[b"a", b"b"], [b"c"]],
        [[], [b"d", b"e", b"f"]],
    ]
    ragged = df.ragged.constant([["a b"], ["c d", "e"]])
    assert df.strings.split(ragged).to_list() == [[[b"a", b"b"]], [[b"c", b"d"], [b"e"]]]
    # no strings: no rows
    assert df.strings.split(df.constant([], df.string)).to_list() == []


def test_split_separators_and_maxsplit(eager):
    # sep=",": empty tokens are kept; an empty string is one empty token
    assert df.strings.split(["a,b,,c", ""], sep=",").to_list() == [[b"a", b"b", b"", b"c"], [b""]]
    assert df.strings.split(["a<>b<>c"], sep="<>").to_list() == [[b"a", b"b", b"c"]]
    # maxsplit: at most that many splits; 0 none; a negative one no limit
    assert df.strings.split(["a,b,c"], sep=",", maxsplit=1).to_list() == [[b"a", b"b,c"]]
    assert df.strings.split(["a,b,c"], sep=",", maxsplit=0).to_list() == [[b"a,b,c"]]
    assert df.strings.split(["a b c"], maxsplit=-2).to_list() == [[b"a", b"b", b"c"]]
    # whitespace: runs of ASCII spaces; the rest stays, no-break spaces included
    assert df.strings.split(["  a  b  c  "], maxsplit=1).to_list() == [[b"a", b"b  c  "]]
    assert df.strings.split(["a\u00a0b\u2003c\td\ne"]).to_list() == [
        ["a\u00a0b\u2003c".encode(), b"d", b"e"]
    ]
    assert df.strings.split(["héllo wörld"]).to_list() == [["héllo".encode(), "wörld".encode()]]
    assert df.strings.split(["axb"], sep=df.constant("x")).to_list() == [[b"a", b"b"]]


def test_split_rejects_bad_separators_and_inputs(eager):
    # TF: InvalidArgumentError "sep must be a scalar, got shape: [1]"
    with pytest.raises(
        df.errors.InvalidArgumentError, match=r"StringSplitV2 op .*the delimiter must be a scalar"
    ):
        df.strings.split(["a b"], sep=["x"])
    # TF: TypeError "Cannot convert [1, 2] to EagerTensor of dtype string"
    with pytest.raises(TypeError, match=r"Expected string"):
        df.strings.split([1, 2])
    with pytest.raises(ValueError, match=r"result_type must be 'RaggedTensor' or 'SparseTensor'"):
        df.strings.split(["a"], result_type="Tensor")


def test_split_in_a_function_of_an_eager_program_is_tensorflow_2s():
    with df.eager_mode():
        split = df.function(lambda text: df.strings.split(text))
        # tf.function: <tf.RaggedTensor [[b'a', b'b'], [b'c']]>; a scalar: a 1-D tensor
        assert split(df.constant(["a b", "c"])).to_list() == [[b"a", b"b"], [b"c"]]
        assert listed(split(df.constant("a b"))) == [b"a", b"b"]


def test_split_result_types_of_tensorflow_1(eager):
    # tf.compat.v1.strings.split(..., result_type=...): a scalar is a vector of one
    assert df.strings.split("a b", result_type="RaggedTensor").to_list() == [[b"a", b"b"]]
    sparse = df.strings.split([["a b"], ["c"]], result_type="SparseTensor")
    assert isinstance(sparse, df.SparseTensor)
    assert sparse.indices.numpy().tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0]]
    assert sparse.values.numpy().tolist() == [b"a", b"b", b"c"]
    assert sparse.dense_shape.numpy().tolist() == [2, 1, 2]
    ragged = df.ragged.constant([["a b"], ["c"]])
    from_ragged = df.strings.split(ragged, result_type="SparseTensor")
    assert from_ragged.indices.numpy().tolist() == [[0, 0, 0], [0, 0, 1], [1, 0, 0]]
    assert from_ragged.dense_shape.numpy().tolist() == [2, 1, 2]
    assert df.strings.split(ragged, result_type="RaggedTensor").to_list() == [
        [[b"a", b"b"]],
        [[b"c"]],
    ]


def test_split_in_a_graph_is_tensorflow_1s_sparse_tensor():
    # tf.compat.v1.strings.split("a b") -> SparseTensor indices [[0 0] [0 1]], shape [1 2]
    sparse = df.strings.split("a b")
    ragged = df.strings.split(["a b", "c"], result_type="RaggedTensor")
    assert isinstance(sparse, df.SparseTensor) and isinstance(ragged, df.RaggedTensor)
    with df.Session() as sess:
        value = sess.run(sparse)
        assert value.indices.tolist() == [[0, 0], [0, 1]]
        assert value.values.tolist() == [b"a", b"b"]
        assert value.dense_shape.tolist() == [1, 2]
        assert sess.run(ragged).to_list() == [[b"a", b"b"], [b"c"]]


def test_string_split_stays_tensorflow_1s_in_eager_mode(eager):
    # tf.compat.v1.string_split(["a  b"], skip_empty=False): values [b'a' b'' b'b'], shape [1 3]
    sparse = df.string_split(["a  b"], skip_empty=False)
    assert isinstance(sparse, df.SparseTensor)
    assert sparse.values.numpy().tolist() == [b"a", b"", b"b"]
    assert sparse.dense_shape.numpy().tolist() == [1, 3]
    # every byte of the delimiter splits: "a,b;c" at ",;" -> [b'a' b'b' b'c']
    assert df.string_split(["a,b;c"], delimiter=",;").values.numpy().tolist() == [b"a", b"b", b"c"]
    ragged = df.string_split(["a  b"], result_type="RaggedTensor")
    assert ragged.to_list() == [[b"a", b"b"]]


# -- ragged results --------------------------------------------------------------------------------
def test_ragged_string_results_become_dense_or_sparse(eager):
    words = df.strings.split(["a b", "c"])
    # to_tensor pads with b'' (or default_value)
    assert listed(words.to_tensor()) == [[b"a", b"b"], [b"c", b""]]
    assert listed(words.to_tensor(default_value="?")) == [[b"a", b"b"], [b"c", b"?"]]
    assert listed(df.strings.split([["a b", "c"], ["d e f", ""]]).to_tensor()) == [
        [[b"a", b"b", b""], [b"c", b"", b""]],
        [[b"d", b"e", b"f"], [b"", b"", b""]],
    ]
    # to_sparse: indices [[0 0] [0 1] [1 0]], dense_shape [2 2]
    sparse = words.to_sparse()
    assert sparse.indices.numpy().tolist() == [[0, 0], [0, 1], [1, 0]]
    assert sparse.values.numpy().tolist() == [b"a", b"b", b"c"]
    assert sparse.dense_shape.numpy().tolist() == [2, 2]
    # numpy(): an object array of the rows
    rows = words.numpy()
    assert rows.dtype == object and [row.tolist() for row in rows] == [[b"a", b"b"], [b"c"]]


def test_ragged_to_sparse_of_dense_inner_dimensions_and_no_rows(eager):
    rt = df.RaggedTensor.from_row_splits(df.constant([[1, 2], [3, 4], [5, 6]]), [0, 1, 3])
    sparse = rt.to_sparse()
    assert sparse.indices.numpy().tolist() == [
        [0, 0, 0],
        [0, 0, 1],
        [1, 0, 0],
        [1, 0, 1],
        [1, 1, 0],
        [1, 1, 1],
    ]
    assert sparse.values.numpy().tolist() == [1, 2, 3, 4, 5, 6]
    assert sparse.dense_shape.numpy().tolist() == [2, 2, 2]
    empty = df.RaggedTensor.from_row_splits(df.constant([], df.int32), [0]).to_sparse()
    assert empty.indices.numpy().shape == (0, 2) and empty.dense_shape.numpy().tolist() == [0, 0]
    # bools pad with False
    flags = df.ragged.constant([[True], [False, True]])
    assert listed(flags.to_tensor()) == [[True, False], [False, True]]


def test_bytes_and_unicode_splits_of_batches_are_ragged(eager):
    # tf.strings.bytes_split(["hello","","hé"]) -> [[h e l l o], [], [h \xc3 \xa9]]
    assert df.strings.bytes_split(["hello", "", "hé"]).to_list() == [
        [b"h", b"e", b"l", b"l", b"o"],
        [],
        [b"h", b"\xc3", b"\xa9"],
    ]
    assert listed(df.strings.bytes_split("héy")) == [b"h", b"\xc3", b"\xa9", b"y"]
    assert df.strings.bytes_split([["ab", "c"], ["", "d"]]).to_list() == [
        [[b"a", b"b"], [b"c"]],
        [[], [b"d"]],
    ]
    assert df.strings.unicode_split(["héllo", "", "añb"], "UTF-8").to_list() == [
        [b"h", "é".encode(), b"l", b"l", b"o"],
        [],
        [b"a", "ñ".encode(), b"b"],
    ]
    assert listed(df.strings.unicode_split("héy", "UTF-8")) == [b"h", "é".encode(), b"y"]
    # a bad byte is U+FFFD by default, dropped with errors="ignore", an error with "strict"
    bad = [b"a\xffb"]
    assert df.strings.unicode_split(bad, "UTF-8").to_list() == [[b"a", b"\xef\xbf\xbd", b"b"]]
    assert df.strings.unicode_split(bad, "UTF-8", errors="ignore").to_list() == [[b"a", b"b"]]
    with pytest.raises(df.errors.InvalidArgumentError, match="Invalid formatting on input string"):
        df.strings.unicode_split([b"a\xffb"], "UTF-8", errors="strict")
    chars, starts = df.strings.unicode_split_with_offsets(["héllo", ""], "UTF-8")
    assert starts.to_list() == [[0, 1, 3, 4, 5], []]


def test_unicode_decode_of_batches_is_ragged(eager):
    assert df.strings.unicode_decode(["héllo", "", "añb"], "UTF-8").to_list() == [
        [104, 233, 108, 108, 111],
        [],
        [97, 241, 98],
    ]
    assert listed(df.strings.unicode_decode("héy", "UTF-8")) == [104, 233, 121]
    assert df.strings.unicode_decode([["ab", "é"], ["", "d"]], "UTF-8").to_list() == [
        [[97, 98], [233]],
        [[], [100]],
    ]
    ragged = df.ragged.constant([["ab"], ["c", "dé"]])
    assert df.strings.unicode_decode(ragged, "UTF-8").to_list() == [[[97, 98]], [[99], [100, 233]]]
    # two bad bytes are two U+FFFD; UTF-16-BE reads pairs of bytes
    assert df.strings.unicode_decode([b"a\xff\xfeb"], "UTF-8").to_list() == [[97, 65533, 65533, 98]]
    assert df.strings.unicode_decode([b"\x00a\x00b"], "UTF-16-BE").to_list() == [[97, 98]]


# -- strings.to_number -----------------------------------------------------------------------------
# text -> (float32, float64, int32, int64) as tf.strings.to_number reads it; None is an error.
NUMBERS = {
    "+5": (5.0, 5.0, 5, 5),
    "1.": (1.0, 1.0, None, None),
    ".5": (0.5, 0.5, None, None),
    "-.5": (-0.5, -0.5, None, None),
    "1e5": (1e5, 1e5, None, None),
    "1E+5": (1e5, 1e5, None, None),
    "  -2.5e-3  ": (np.float32(-2.5e-3), -2.5e-3, None, None),
    " \v1": (1.0, 1.0, 1, 1),
    "\t7\n": (7.0, 7.0, 7, 7),
    "00012": (12.0, 12.0, 12, 12),
    "-0": (-0.0, -0.0, 0, 0),
    "0x10": (16.0, 16.0, None, None),
    "0X1F": (31.0, 31.0, None, None),
    "0x1p3": (8.0, 8.0, None, None),
    "0x.8": (0.5, 0.5, None, None),
    "-0x1.8p1": (-3.0, -3.0, None, None),
    "inf": (np.inf, np.inf, None, None),
    "-Infinity": (-np.inf, -np.inf, None, None),
    "1e400": (np.inf, np.inf, None, None),
    "7e-46": (0.0, 7e-46, None, None),
    "2147483648": (2147483648.0, 2147483648.0, None, 2147483648),
    "9223372036854775808": (9.223372036854776e18, 9.223372036854776e18, None, None),
    "-9223372036854775808": (-9.223372036854776e18, -9.223372036854776e18, None, -(2**63)),
    "16777217": (16777216.0, 16777217.0, 16777217, 16777217),
    # no number: hexadecimal without 0x, an exponent without digits, separators, others
    "abc": (None, None, None, None),
    "1e": (None, None, None, None),
    "1_0": (None, None, None, None),
    "1d": (None, None, None, None),
    "0b1": (None, None, None, None),
    "0x": (None, None, None, None),
    "0x10p": (None, None, None, None),
    "1,5": (None, None, None, None),
    "1 2": (None, None, None, None),
    "+-1": (None, None, None, None),
    "\x1c1": (None, None, None, None),
    "١٢": (None, None, None, None),
    "": (None, None, None, None),
    "infinit": (None, None, None, None),
}


@pytest.mark.parametrize("text", sorted(NUMBERS))
def test_to_number_reads_numbers_as_tensorflow(eager, text):
    for dtype, expected in zip((df.float32, df.float64, df.int32, df.int64), NUMBERS[text]):
        if expected is None:
            with pytest.raises(df.errors.InvalidArgumentError, match="could not correctly convert"):
                df.strings.to_number([text], dtype)
            continue
        value = df.strings.to_number([text], dtype).numpy()[0]
        assert value == expected and np.signbit(value) == np.signbit(expected), (dtype, value)


def test_to_number_reads_nan_in_any_case_with_a_payload(eager):
    values = df.strings.to_number(["nan", "-NaN", "nan(123)", "+nan"]).numpy()
    assert np.isnan(values).all()
    with pytest.raises(df.errors.InvalidArgumentError):
        df.strings.to_number(["nanq"])


def test_to_number_rounds_once_to_float32(eager):
    # Halfway between 1 and the next float32 is 1 + 2**-24 = 1.000000059604644775390625.  A
    # decimal a little above it is 1.0000001192092896 in TF (rounded once), where rounding
    # first to float64 (which gives the midpoint itself) and then to float32 gives 1.0.
    above, below = "1.00000005960464477539062500001", "1.00000005960464477539062499999"
    midpoint = "1.000000059604644775390625"
    values = df.strings.to_number([above, "1.0000000596046448", below, midpoint])
    assert values.numpy().tolist() == [1.0000001192092896, 1.0000001192092896, 1.0, 1.0]
    # the largest float32 and where numbers start to round to inf
    limits = df.strings.to_number(["3.4028235e38", "3.4028236e38", "-0x1.fffffefp127"]).numpy()
    assert limits.tolist() == [3.4028234663852886e38, np.inf, -3.4028234663852886e38]
    # the smallest subnormal, 2**-149, is reached from above half of it (2**-150 = 7.00649...
    # 5806564013...e-46), and a hair below that is 0
    half_above = "7.0064923216240853546186479164495806565e-46"
    half_below = "7.0064923216240853546186479164495806564e-46"
    tiny = df.strings.to_number(["1e-45", half_above, half_below])
    assert tiny.numpy().tolist() == [2.0**-149, 2.0**-149, 0.0]
