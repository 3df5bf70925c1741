import pytest

from dataflow.client import compiler


@pytest.fixture
def mode():
    """Sets the compilation mode for one test and restores the one before it."""
    previous = compiler.mode()
    yield compiler.set_mode
    compiler.set_mode(previous)


@pytest.fixture
def native_forced(tmp_path_factory, monkeypatch):
    """Compilation and the native tier forced for one test, the modes before restored after
    it, and a cache directory of this test session's own (a kernel compiled once is loaded
    after)."""
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    previous_mode = compiler.set_mode("force")
    previous_native = compiler.set_native("force")
    yield
    compiler.set_mode(previous_mode)
    compiler.set_native(previous_native)
