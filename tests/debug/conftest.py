import pytest

import dataflow as df


@pytest.fixture
def graph():
    """A fresh graph, the default one for the test."""
    with df.Graph().as_default() as g:
        yield g
