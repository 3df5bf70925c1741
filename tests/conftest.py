"""The test suite's root.

Pytest puts this directory on ``sys.path`` when it loads this file, before any test module, so
helpers shared by several test folders (``bitwise``, ``rerun``) import the same way from all
of them.
"""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    """Every test starts with an empty global default graph, so the names its ops get and the
    collections it reads never depend on which tests ran before it."""
    df.reset_default_graph()
    yield
