import pytest

from dataflow.client import compiler


@pytest.fixture
def mode():
    """Sets the compilation mode for one test and restores the one before it."""
    previous = compiler.mode()
    yield compiler.set_mode
    compiler.set_mode(previous)
