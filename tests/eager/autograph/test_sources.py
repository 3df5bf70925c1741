"""Where converted functions come from: notebook cells, nested closures, lambdas that cannot be
told apart."""

import pytest

import dataflow as df
from dataflow.eager import autograph


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


@pytest.fixture
def shell():
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    created = interactive.InteractiveShell.instance()
    yield created
    interactive.InteractiveShell.clear_instance()


def test_a_function_defined_in_a_notebook_cell_converts_and_its_ops_name_the_cell(shell):
    cells = [
        "import dataflow as df\nfrom dataflow import autograph\n",
        "def f(x):\n"
        "    if x > 0:\n"
        "        y = df.identity(x, name='in_cell')\n"
        "    else:\n"
        "        y = -x\n"
        "    return y\n",
        "graph = df.Graph()\n"
        "with graph.as_default():\n"
        "    x = df.placeholder(df.int32, [])\n"
        "    y = autograph.to_graph(f)(x)\n"
        "    with df.Session() as sess:\n"
        "        values = [sess.run(y, {x: 3}), sess.run(y, {x: -3})]\n"
        "op = [o for o in graph.get_operations() if o.name.endswith('in_cell')][0]\n",
    ]
    for cell in cells:
        result = shell.run_cell(cell, store_history=True)
        assert result.success, result.error_in_exec
    namespace = shell.user_ns
    assert namespace["values"] == [3, 3]
    location = namespace["op"].location
    assert location.lineno == 3
    assert str(location) == "Cell In[2], line 3"


def test_nested_functions_defined_inside_a_converted_function_are_converted_too():
    def outer(x):
        def inner(v):
            if v > 0:
                v = v * 10
            return v

        return inner(x) + 1

    x = df.placeholder(df.int32, [])
    y = autograph.to_graph(outer)(x)
    with df.Session() as sess:
        assert sess.run(y, {x: 2}) == 21
        assert sess.run(y, {x: -2}) == -1


def test_two_lambdas_with_the_same_arguments_on_one_line_are_refused_clearly():
    first, second = (lambda x: x + 1), (lambda x: x - 1)  # noqa: E731
    with pytest.raises(autograph.ConversionError, match="other lambdas on its line"):
        autograph.to_graph(first)
    assert second(1) == 0
