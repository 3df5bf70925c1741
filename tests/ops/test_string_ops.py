"""String tensors and the string ops.

Expected values were printed by TensorFlow 2.21 in TF1 graph mode
(``tf.compat.v1``, ``disable_v2_behavior``) for the same programs.
"""

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest
from ops_testing import evaluate, run

import dataflow as df


def strings(*items):
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def test_string_constant_fetches_bytes_encoded_as_utf8():
    text = df.constant("héllo")
    pair = df.constant([b"a", "bc"])
    assert text.dtype is df.string and text.op.type == "Const"
    assert pair.shape.as_list() == [2]
    value, values = evaluate([text, pair])
    # tf: sess.run(tf.constant("héllo")) -> b'h\xc3\xa9llo'
    assert value == b"h\xc3\xa9llo" and isinstance(value, bytes)
    assert values.dtype == object and values.tolist() == [b"a", b"bc"]


def test_string_dtype_converts_like_tensorflow():
    assert df.as_dtype("string") is df.string
    assert df.as_dtype(object) is df.string
    assert df.as_dtype(np.dtype("S3")) is df.string
    assert df.string.as_datatype_enum == 7  # TensorFlow's DT_STRING
    assert not df.string.is_numeric and df.string.is_string


def test_constant_of_strings_padded_to_shape_with_empty_strings():
    values = evaluate(df.constant([], dtype=df.string, shape=[2]))
    assert values.tolist() == [b"", b""]


def test_constant_mixing_strings_and_numbers_is_a_type_error():
    with pytest.raises(TypeError, match=r"Const op 'Const' at .*test_string_ops.py:\d+"):
        df.constant(["a", 1])


def test_string_placeholder_takes_str_and_bytes_feeds():
    text = df.placeholder(df.string, [None])
    joined = df.string_join([text, "!"])
    assert joined.shape.as_list() == [None]
    assert run(joined, {text: ["x", b"y", "ü"]}).tolist() == [b"x!", b"y!", b"\xc3\xbc!"]


def test_feeding_a_number_to_a_string_placeholder_names_the_tensor():
    text = df.placeholder(df.string, [], name="text")
    with pytest.raises(TypeError, match=r"'text:0' of dtype string .*test_string_ops.py:\d+"):
        run(text, {text: 3})


def test_as_string_formats_as_tensorflow():
    x = df.constant([1.5, -2.25, 1e10, 3.0])
    i = df.constant([3, -42])
    results = evaluate(
        [
            df.as_string(x),
            df.as_string(x, precision=2),
            df.as_string(x, scientific=True),
            df.as_string(df.constant([1.5, 1e-7, 100000000.0]), shortest=True),
            df.as_string(i, width=5, fill="0"),
            df.as_string(i, width=5),
            df.as_string(df.constant([1, -1]), fill="+", width=3),
            df.as_string(df.constant([True, False])),
            df.as_string(df.constant([2**40], df.int64)),
        ]
    )
    # tf.as_string with the same arguments
    expected = [
        [b"1.500000", b"-2.250000", b"10000000000.000000", b"3.000000"],
        [b"1.50", b"-2.25", b"10000000000.00", b"3.00"],
        [b"1.500000e+00", b"-2.250000e+00", b"1.000000e+10", b"3.000000e+00"],
        [b"1.5", b"1e-07", b"1e+08"],
        [b"00003", b"-0042"],
        [b"    3", b"  -42"],
        [b" +1", b" -1"],
        [b"true", b"false"],
        [b"1099511627776"],
    ]
    assert [r.tolist() for r in results] == expected


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"precision": 3}, "precision not supported for datatype int32"),
        ({"fill": "x", "width": 3}, 'Fill argument not supported: "x"'),
    ],
)
def test_as_string_rejects_options_as_tensorflow(kwargs, message):
    with pytest.raises(ValueError, match=rf"AsString op .*test_string_ops.py:\d+: {message}"):
        df.as_string(df.constant([1]), **kwargs)


def test_string_join_repeats_scalars_and_rejects_other_shapes():
    pair = df.constant(["a", "bc"])
    # tf.string_join([["a", "bc"], "x"], separator="-") -> [b'a-x', b'bc-x']
    assert evaluate(df.string_join([pair, "x"], separator="-")).tolist() == [b"a-x", b"bc-x"]
    assert evaluate(df.strings.join([pair, pair])).tolist() == [b"aa", b"bcbc"]
    with pytest.raises(ValueError, match=r"StringJoin op .*test_string_ops.py:\d+"):
        df.string_join([pair, df.constant(["a", "b", "c"])])


def test_length_counts_bytes_or_utf8_characters():
    text = df.constant("héllo")
    # tf.strings.length: 6 bytes, 5 UTF8_CHAR
    assert evaluate(df.strings.length(text)) == 6
    assert evaluate(df.strings.length(text, unit="UTF8_CHAR")) == 5
    assert evaluate(df.strings.length([["ab"], [""]])).tolist() == [[2], [0]]


def test_substr_as_tensorflow():
    results = evaluate(
        [
            df.substr(df.constant([b"a", b"bc"]), 1, 5),
            df.strings.substr("hello", 1, 3),
            df.strings.substr("hello", -3, 2),
            df.strings.substr("hello", 1, -1),
            df.strings.substr(["hello", "abc"], [1, 2], [2, 1]),
            df.strings.substr("héllo", 1, 2, unit="UTF8_CHAR"),
        ]
    )
    # tf.substr / tf.strings.substr with the same arguments
    expected = [[b"", b"c"], b"ell", b"ll", b"ello", [b"el", b"c"], b"\xc3\xa9l"]
    assert [r.tolist() if isinstance(r, np.ndarray) else r for r in results] == expected


def test_substr_past_the_end_fails_at_run_time_naming_the_string():
    piece = df.substr(df.constant(["hello", "a"]), 3, 2, name="piece")
    with pytest.raises(df.errors.InvalidArgumentError, match=r"pos 3 out of range for string"):
        run(piece)


def test_string_to_number_parses_and_reports_bad_strings():
    floats = df.string_to_number(["1.5", " 2", "inf", "1e3", "0x10"])
    ints = df.string_to_number(["15", "-2"], out_type=df.int32)
    # tf.string_to_number: [1.5, 2, inf, 1000, 16] float32; [15, -2] int32
    assert evaluate(floats).tolist() == [1.5, 2.0, np.inf, 1000.0, 16.0]
    assert evaluate(ints).tolist() == [15, -2]
    for bad, dtype in (("x1", df.float32), ("1.5", df.int32), ("3000000000", df.int32)):
        parsed = df.string_to_number(bad, out_type=dtype, name="parse")
        with pytest.raises(df.errors.InvalidArgumentError, match="could not correctly convert"):
            run(parsed)
    with pytest.raises(TypeError, match="StringToNumber op"):
        df.string_to_number("1", out_type=df.float16)


def test_reduce_join_joins_in_row_major_order():
    grid = df.constant([["a", "b"], ["c", "d"]])
    results = evaluate(
        [
            df.reduce_join(grid, axis=1, separator=","),
            df.reduce_join(grid),
            df.reduce_join(grid, 0, keep_dims=True),
            df.reduce_join(grid, -1),
            df.reduce_join(df.constant([[], []], df.string), 1),
        ]
    )
    # tf.reduce_join with the same arguments
    expected = [[b"a,b", b"c,d"], b"abcd", [[b"ac", b"bd"]], [b"ab", b"cd"], [b"", b""]]
    assert [r.tolist() if isinstance(r, np.ndarray) else r for r in results] == expected


def test_regex_replace_with_python_or_tensor_patterns():
    static = df.regex_replace(["aab", "xa"], "a+", "Z")
    first = df.regex_replace(["aab", "xaa"], "a", "Z", replace_global=False)
    dynamic = df.regex_replace("abc", df.constant("(b)"), r"[\1]")
    assert static.op.type == "StaticRegexReplace" and dynamic.op.type == "RegexReplace"
    # tf.regex_replace: [b'Zb', b'xZ'], [b'Zab', b'xZa'], b'a[b]c'
    assert evaluate(static).tolist() == [b"Zb", b"xZ"]
    assert evaluate(first).tolist() == [b"Zab", b"xZa"]
    assert evaluate(dynamic) == b"a[b]c"


def test_bad_regex_is_reported_at_build_or_run_time():
    with pytest.raises(ValueError, match=r"StaticRegexReplace op .*: Invalid pattern: \("):
        df.regex_replace("a", "(", "x")
    replaced = df.regex_replace("a", df.constant("("), "x")
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Invalid pattern: \("):
        run(replaced)


# A pattern that makes a backtracking engine try every way of splitting the a's: 2**40 ways.
_BACKTRACKING_PROGRAM = """
import dataflow as df
text = df.constant([b"a" * 40 + b"!", b"aaa"])
static = df.regex_replace(text, "(a+)+$", "<\\\\0>")
dynamic = df.regex_replace(text, df.constant("(a+)+$"), "x")
with df.Session() as sess:
    print([value.tolist() for value in sess.run([static, dynamic])])
"""


def test_regex_replace_with_a_backtracking_pattern_finishes_in_linear_time(tmp_path):
    # Python's re would backtrack for hours here with the GIL held, past any run deadline;
    # RE2, TensorFlow's engine, is linear in the text.  The subprocess bounds the wait.
    script = tmp_path / "backtrack.py"
    script.write_text(_BACKTRACKING_PROGRAM)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    expected = [[b"a" * 40 + b"!", b"<aaa>"], [b"a" * 40 + b"!", b"x"]]
    assert done.stdout.strip() == repr(expected)


def test_regex_replace_uses_re2_matching_semantics():
    # RE2 on UTF-8 text: "." is one character, and an empty match is never taken right after
    # the previous match (RE2::GlobalReplace, as TensorFlow's kernel calls it).
    results = evaluate(
        [
            df.regex_replace("é!", ".", "x"),
            df.regex_replace("é", "", "-"),
            df.regex_replace("abxd", "x*", "-"),
            df.regex_replace("ab", "", "-", replace_global=False),
            df.regex_replace("A1 b2", r"\pL(\d)", r"[\1|\0|\\]"),
            df.regex_replace(df.constant(["a.b", "c"]), df.constant(r"\."), df.constant(r"\0\0")),
        ]
    )
    assert results[:5] == [b"xx", "-é-".encode(), b"-a-b-d-", b"-ab", b"[1|A1|\\] [2|b2|\\]"]
    assert results[5].tolist() == [b"a..b", b"c"]


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"a(?=b)", r"(?<!a)b", r"a++", r"(?P<x>a)(?P=x)"],
    ids=["backreference", "lookahead", "lookbehind", "possessive", "named-backreference"],
)
def test_patterns_re2_rejects_are_refused_naming_the_op_and_the_line(pattern):
    here = f"test_string_ops.py:{inspect.currentframe().f_lineno + 1}"
    build = lambda: df.regex_replace("ab", pattern, "x")  # noqa: E731 - the line errors name
    with pytest.raises(ValueError, match=rf"StaticRegexReplace op .* at .*{here}: Invalid pattern"):
        build()
    replaced = df.regex_replace("ab", df.constant(pattern), "x")
    here = f"test_string_ops.py:{inspect.currentframe().f_lineno - 1}"
    with pytest.raises(
        df.errors.InvalidArgumentError,
        match=rf"'RegexReplace'.* created at .*{here}: Invalid pattern",
    ):
        run(replaced)


@pytest.mark.parametrize(
    ("rewrite", "error"),
    [
        (r"\2", "refers to group 2, but the pattern has 1 capturing group"),
        ("x\\", "'\\\\' not allowed at the end"),
        (r"\n", r"'\\n' is neither a group"),
        (r"\g<1>", r"'\\g' is neither a group"),
    ],
    ids=["missing-group", "trailing-backslash", "python-escape", "python-group"],
)
def test_rewrites_re2_rejects_are_refused_at_build_or_run_time(rewrite, error):
    with pytest.raises(ValueError, match=rf"StaticRegexReplace op .*: Invalid rewrite: .*{error}"):
        df.regex_replace("ab", "(a)", rewrite)
    replaced = df.regex_replace("ab", df.constant("(a)"), df.constant(rewrite))
    with pytest.raises(df.errors.InvalidArgumentError, match=rf"Invalid rewrite: .*{error}"):
        run(replaced)


def test_regex_ops_without_re2_say_how_to_install_it_and_never_use_python_re(monkeypatch):
    from dataflow.ops import string_ops

    monkeypatch.setitem(sys.modules, "re2", None)  # as if google-re2 were not installed
    string_ops._re2.cache_clear()
    try:
        for pattern in ("a+", df.constant("a+")):
            with pytest.raises(ValueError, match=r"Regex.*: .*pip install 'dataflow\[strings\]'"):
                df.regex_replace("aab", pattern, "x")
    finally:
        string_ops._re2.cache_clear()


def test_upper_and_lower_change_ascii_letters_unless_asked_for_utf8():
    text = df.constant("héllo")
    # tf.strings.upper("héllo") -> b'H\xc3\xa9LLO' (ASCII only)
    assert evaluate(df.strings.upper(text)) == b"H\xc3\xa9LLO"
    assert evaluate(df.strings.upper(text, encoding="utf-8")) == "HÉLLO".encode()
    assert evaluate(df.strings.lower("ABc")) == b"abc"


def test_strings_compare_equal():
    pair = df.constant(["a", "b"])
    # tf.equal(["a", "b"], [["a"], ["b"]]) -> [[True, False], [False, True]]
    assert evaluate(df.equal(pair, df.constant([["a"], ["b"]]))).tolist() == [
        [True, False],
        [False, True],
    ]
    assert evaluate(df.not_equal(pair, "a")).tolist() == [False, True]
    with pytest.raises(TypeError, match="Less op"):
        df.less(df.constant("a"), "b")


def test_string_ops_have_no_gradient():
    x = df.constant(1.5)
    text = df.as_string(x)
    assert df.gradients(df.string_to_number(text), x) == [None]


def test_strings_flow_through_cond_and_while_loop():
    flag = df.placeholder(df.bool, [])
    chosen = df.cond(flag, lambda: df.constant("yes"), lambda: df.as_string(df.constant(7)))

    def body(i, text):
        return i + 1, df.string_join([text, df.as_string(i)], separator=",")

    _, counted = df.while_loop(lambda i, _: i < 4, body, [df.constant(0), df.constant("")])
    assert run(chosen, {flag: True}) == b"yes"
    assert run(chosen, {flag: False}) == b"7"
    assert run(counted) == b",0,1,2,3"


def test_print_shows_strings_as_text(capfd):
    text = df.constant("héllo")
    printed = df.Print(text, [text, df.constant(["a", "bc"])], message="m: ")
    assert run(printed) == b"h\xc3\xa9llo"
    # tf.Print prints: m: [héllo][a bc]
    assert capfd.readouterr().err == "m: [héllo][a bc]\n"


def test_py_func_takes_and_returns_strings():
    text = df.constant("héllo")
    shouted = df.py_func(lambda value: value + b"!", [text], df.string)
    as_str = df.py_func(lambda value: value.decode() + "?", [text], df.string)
    assert run(shouted) == b"h\xc3\xa9llo!"
    assert run(as_str) == "héllo?".encode()
    wrong = df.py_func(lambda value: 3, [text], df.string, name="wrong")
    with pytest.raises(df.errors.InvalidArgumentError, match="wrong"):
        run(wrong)


def test_string_constants_render():
    text = df.constant("héllo", name="greeting")
    source = df.render(df.strings.upper(text), format="dot").source
    assert "greeting" in source and "StringUpper" in source


def test_decode_raw_reads_each_string_as_a_vector_of_numbers():
    import struct

    records = df.placeholder(df.string, [None])
    little = df.decode_raw(records, df.int16)
    big = df.io.decode_raw(input_bytes=records, out_type=df.int16, little_endian=False)
    floats = df.decode_raw(bytes=df.constant([struct.pack("<2f", 1.5, -2.0)]), out_type=df.float32)
    assert little.shape.as_list() == [None, None] and little.dtype == df.int16
    with df.Session() as sess:
        # TF: [[1 256] [-1 2]] and, big-endian, [[256 1] [-1 512]]
        feed = {records: [b"\x01\x00\x00\x01", b"\xff\xff\x02\x00"]}
        np.testing.assert_array_equal(sess.run(little, feed), [[1, 256], [-1, 2]])
        np.testing.assert_array_equal(sess.run(big, feed), [[256, 1], [-1, 512]])
        np.testing.assert_array_equal(sess.run(floats), [[1.5, -2.0]])
        with pytest.raises(df.errors.InvalidArgumentError, match="same size, but element 1"):
            sess.run(little, {records: [b"\x01\x00", b"\x01"]})
        with pytest.raises(df.errors.InvalidArgumentError, match="not a multiple of 2"):
            sess.run(little, {records: [b"\x01"]})


def test_string_strip_removes_whitespace_at_both_ends():
    stripped = df.string_strip(["  a b \t\n", "x", "\v\f\r", ""])
    padded = df.constant(" y ")
    with df.Session() as sess:
        # TF: [b'a b' b'x' b'' b'']
        assert sess.run(stripped).tolist() == [b"a b", b"x", b"", b""]
        assert sess.run(df.strings.strip(padded)) == b"y"
