"""Random small programs with if/while/for/break/continue over int and float scalars: converted
and run in a Session on placeholders (so every statement is staged), run eagerly, and traced
with ``df.function`` (converted, then traced), they give the values the plain Python function
gives on Python numbers."""

import importlib.util
import itertools
import math
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.eager import autograph

INT_VARIABLES = ("a", "b")
FLOAT_VARIABLE = "f"
_modules = itertools.count()
_directory = tempfile.mkdtemp(prefix="autograph_programs_")


def _int_expression(draw):
    left = draw(st.sampled_from(INT_VARIABLES + ("x", "y")))
    kind = draw(st.sampled_from(("add", "sub", "const", "mod")))
    constant = draw(st.integers(-3, 3))
    if kind == "add":
        return f"{left} + {draw(st.sampled_from(INT_VARIABLES + ('x',)))}"
    if kind == "sub":
        return f"{left} - {constant}"
    if kind == "mod":
        return f"{left} % 7"
    return str(constant)


def _condition(draw):
    kind = draw(st.sampled_from(("int", "float", "and", "not")))
    if kind == "float":
        return f"{FLOAT_VARIABLE} > {draw(st.sampled_from(('0.0', '1.5', '-2.0')))}"
    left = draw(st.sampled_from(INT_VARIABLES + ("x", "y")))
    operator = draw(st.sampled_from(("<", ">", "==", "!=", ">=")))
    simple = f"{left} {operator} {draw(st.integers(-2, 4))}"
    if kind == "and":
        return f"{simple} and {FLOAT_VARIABLE} < 4.0"
    if kind == "not":
        return f"not {simple}"
    return simple


@st.composite
def _block(draw, depth, indent, in_loop, loop_counter):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        choices = ["int", "float"]
        if depth > 0:
            choices += ["if", "for", "while"]
        if in_loop:
            choices += ["break", "continue"]
        kind = draw(st.sampled_from(choices))
        pad = " " * indent
        if kind == "int":
            lines.append(f"{pad}{draw(st.sampled_from(INT_VARIABLES))} = {_int_expression(draw)}")
        elif kind == "float":
            update = draw(st.sampled_from(("* 0.5 + 1.0", "- 0.75", "+ 0.25")))
            lines.append(f"{pad}{FLOAT_VARIABLE} = {FLOAT_VARIABLE} {update}")
        elif kind in ("break", "continue"):
            lines.append(f"{pad}if {_condition(draw)}:")
            lines.append(f"{pad}    {kind}")
        elif kind == "if":
            lines.append(f"{pad}if {_condition(draw)}:")
            lines += draw(_block(depth - 1, indent + 4, in_loop, loop_counter))
            if draw(st.booleans()):
                lines.append(f"{pad}else:")
                lines += draw(_block(depth - 1, indent + 4, in_loop, loop_counter))
        elif kind == "for":
            counter = f"i{next(loop_counter)}"
            lines.append(f"{pad}for {counter} in range({draw(st.sampled_from(('x', 'y')))}):")
            lines += draw(_block(depth - 1, indent + 4, True, loop_counter))
        else:
            counter = f"w{next(loop_counter)}"
            lines.append(f"{pad}{counter} = 0")
            lines.append(f"{pad}while {counter} < {draw(st.sampled_from(('x', 'y')))}:")
            lines.append(f"{pad}    {counter} += 1")
            lines += draw(_block(depth - 1, indent + 4, True, loop_counter))
    return lines


@st.composite
def programs(draw):
    body = draw(_block(2, 4, False, itertools.count()))
    return "\n".join(
        ["def program(x, y, f):", "    a = 0", "    b = 1", *body, "    return a, b, f", ""]
    )


def _load(source):
    """The function ``program`` of ``source``, loaded from a real file (so its source can be
    read back, as for any function in a file)."""
    name = f"autograph_program_{next(_modules)}"
    path = os.path.join(_directory, name + ".py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    source=programs(),
    x=st.integers(0, 4),
    y=st.integers(0, 4),
    f=st.sampled_from((-1.0, 0.5, 2.0)),
)
def test_converted_programs_run_in_a_session_match_python(source, x, y, f):
    program = _load(source)
    expected = program(x, y, f)
    with df.Graph().as_default():
        inputs = [df.placeholder(df.int32, []), df.placeholder(df.int32, [])]
        inputs.append(df.placeholder(df.float32, []))
        results = autograph.to_graph(program)(*inputs)
        tensors = [r for r in results if isinstance(r, df.Tensor)]
        with df.Session() as sess:
            computed = iter(sess.run(tensors, dict(zip(inputs, (x, y, f)))))
        got = [next(computed) if isinstance(r, df.Tensor) else r for r in results]
    assert [int(v) for v in got[:2]] == list(expected[:2]), source
    assert math.isclose(float(got[2]), expected[2], rel_tol=1e-5, abs_tol=1e-5), source


def _numbers(results) -> tuple:
    a, b, f = (r.numpy() if isinstance(r, df.Tensor) else r for r in results)
    return int(a), int(b), float(f)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    source=programs(),
    x=st.integers(0, 4),
    y=st.integers(0, 4),
    f=st.sampled_from((-1.0, 0.5, 2.0)),
)
def test_one_program_run_eagerly_and_traced_matches_python(source, x, y, f):
    program = _load(source)
    expected = program(x, y, f)
    with df.eager_mode():
        arguments = (df.constant(x), df.constant(y), df.constant(f, dtype=df.float32))
        eager = _numbers(program(*arguments))  # Python's own control flow on eager values
        traced = df.function(program)
        staged = _numbers(traced(*arguments))  # converted, traced into a graph, run as one
    for got in (eager, staged):
        assert got[:2] == tuple(expected[:2]), source
        assert math.isclose(got[2], expected[2], rel_tol=1e-5, abs_tol=1e-5), source
    assert traced.experimental_get_tracing_count() == 1


def test_the_generator_makes_programs_with_every_construct():
    seen = set()

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(source):
        for word in ("if ", "while ", "for ", "break", "continue", "else:"):
            if word in source:
                seen.add(word)

    collect()
    assert seen == {"if ", "while ", "for ", "break", "continue", "else:"}


@pytest.fixture(autouse=True, scope="module")
def _clean_directory():
    yield
    shutil.rmtree(_directory, ignore_errors=True)  # the programs and Python's __pycache__
