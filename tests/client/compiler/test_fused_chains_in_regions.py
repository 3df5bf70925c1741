"""A ``FusedElementwise`` chain of small values inside a compiled region is written out step
by step (`dataflow.client.compiler.codegen`), with the bits, types and errors of its kernel."""

import inspect

import numpy as np
import pytest
from bitwise import same_bits

import dataflow as df
from dataflow.framework import errors


def here() -> int:
    return inspect.currentframe().f_back.f_lineno - 1


def run_with_default_passes(fetches, feed_dict):
    with df.Session() as sess:
        results = sess.run(fetches, feed_dict)
        source = df.debug.compiled_source(sess, fetches, feed_dict)
    return results, source


def chain_lines(source: str) -> list[str]:
    return [line for line in source.splitlines() if ", step " in line]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_a_small_fused_chain_is_written_out_with_the_interpreters_bits(mode, dtype, shape):
    x = df.placeholder(dtype, shape, name="x")
    y = x
    for _ in range(5):
        y = df.abs(y * dtype(3) - dtype(7)) + dtype(1)
    feed = {x: np.full(shape, 5, dtype)}
    mode("off")
    interpreted, _ = run_with_default_passes(y, feed)
    mode("force")
    compiled, source = run_with_default_passes(y, feed)
    assert same_bits(compiled, interpreted)
    assert type(compiled) is type(interpreted)
    assert len(chain_lines(source)) == 20
    assert "FusedElementwise" not in source


def test_a_float_chain_overflows_to_inf_as_the_kernel_does(mode):
    x = df.placeholder(df.float32, [], name="x")
    y = (x * np.float32(1e30)) * np.float32(1e30) - np.float32(1.0)
    feed = {x: np.float32(3.0)}
    mode("off")
    with pytest.warns(RuntimeWarning):
        interpreted, _ = run_with_default_passes(y, feed)
    mode("force")
    with pytest.warns(RuntimeWarning):
        compiled, source = run_with_default_passes(y, feed)
    assert same_bits(compiled, interpreted) and np.isinf(compiled)
    assert len(chain_lines(source)) == 3


def test_a_failing_step_of_a_written_out_chain_is_named_with_its_line_and_inputs(mode):
    k = df.placeholder(df.int32, [3], name="k")
    power = df.placeholder(df.int32, [], name="power")
    inverse = df.pow(k, power, name="inverse")
    line = here()
    y = df.abs(inverse) + 1
    messages = {}
    for each in ("off", "force"):
        mode(each)
        with df.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y, {k: [1, 2, 3], power: -1})
            assert list(sess.run(y, {k: [1, 2, 3], power: 2})) == [2, 5, 10]  # still usable
            source = df.debug.compiled_source(sess, y, {k: None, power: None})
        assert info.value.op is inverse.op
        messages[each] = str(info.value)
    assert len(chain_lines(source)) == 3
    assert messages["force"] == messages["off"]
    assert f"op 'inverse' (Pow) created at {__file__}:{line}" in messages["force"]
    assert "inputs: int32(3,), int32()" in messages["force"]


def test_a_quiet_chain_is_written_out_with_numpys_warnings_off(mode, recwarn):
    x = df.placeholder(df.float64, [3], name="x")
    y = df.log(x * 2.0 - 1.0) / x  # log of a negative is NaN, division by zero inf, silently
    feed = {x: np.array([-1.0, 0.0, 2.0])}
    mode("off")
    interpreted, _ = run_with_default_passes(y, feed)
    mode("force")
    compiled, source = run_with_default_passes(y, feed)
    assert same_bits(compiled, interpreted)
    assert 'with errstate(all="ignore"):' in source and len(chain_lines(source)) == 4
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_large_chain_keeps_its_fused_kernel_and_its_buffer(mode):
    mode("force")
    x = df.placeholder(df.float64, [100_000], name="x")
    y = df.exp(x * 2.0 + 1.0)
    _, source = run_with_default_passes(y, {x: np.ones(100_000)})
    assert chain_lines(source) == []
    assert source.count("(FusedElementwise)") == 1
