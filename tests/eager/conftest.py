import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test starts in graph mode with an empty graph; tests enter eager mode themselves
    (or through the ``eager`` fixture)."""
    with df.Graph().as_default() as g:
        yield g


@pytest.fixture
def eager():
    with df.eager_mode():
        yield
