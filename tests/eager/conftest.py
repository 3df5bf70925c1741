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
    """Eager mode for the test; the global step a test made is forgotten after it (eager mode's
    graph lives as long as the process)."""
    with df.eager_mode():
        yield
        df.get_collection_ref(df.GraphKeys.GLOBAL_STEP).clear()
