"""``to_code``: the converted source a learner reads (its structure, not a frozen snapshot)."""

import ast

from dataflow.eager import autograph


def clamp_sum(values, limit):
    total = 0
    for v in values:
        if total + v > limit:
            break
        total += v
    return total


def _parsed(function):
    return ast.parse(autograph.to_code(function))


def _calls_of_ag(tree):
    return [
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ag__"
    ]


def test_to_code_is_valid_python_with_the_functions_own_name_and_arguments():
    tree = _parsed(clamp_sum)
    (function,) = tree.body
    assert function.name == "clamp_sum"
    assert [a.arg for a in function.args.args] == ["values", "limit"]


def test_each_statement_becomes_one_operator_call_with_short_named_functions():
    text = autograph.to_code(clamp_sum)
    tree = ast.parse(text)
    calls = _calls_of_ag(tree)
    assert calls.count("for_stmt") == 1
    assert calls.count("if_stmt") == 2  # the if, and the guard of what follows the break
    nested = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)} - {"clamp_sum"}
    assert nested == {"for_body", "for_test", "if_true", "if_false"}
    assert "break_ = False" in text
    assert "= ag__.for_stmt(values, for_body, (" in text
    assert "extra_test=for_test)" in text


def test_branch_functions_take_and_return_the_state():
    tree = _parsed(clamp_sum)
    if_true = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "if_true"
    )
    parameters = [a.arg for a in if_true.args.args]
    returned = ast.unparse(if_true.body[-1].value)
    assert returned == f"({', '.join(parameters)},)" or returned == f"({', '.join(parameters)})"


def test_to_code_keeps_plain_statements_as_they_were():
    def plain(x):
        y = x * 2 + 1
        return y

    assert autograph.to_code(plain) == "def plain(x):\n    y = x * 2 + 1\n    return y\n"


def test_to_code_of_a_converted_function_shows_the_same_source():
    assert autograph.to_code(autograph.to_graph(clamp_sum)) == autograph.to_code(clamp_sum)
