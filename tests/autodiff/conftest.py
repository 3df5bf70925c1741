import os
import sys

import pytest

import dataflow as df

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


@pytest.fixture(autouse=True)
def forget_op_types_defined_by_the_test():
    """Op types a test defines are removed afterwards, so other suites see the library's."""
    from dataflow.framework.op_registry import _OP_DEFS

    before = set(_OP_DEFS)
    yield
    for op_type in set(_OP_DEFS) - before:
        del _OP_DEFS[op_type]
