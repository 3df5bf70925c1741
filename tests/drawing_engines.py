"""The two engines that draw pictures, for tests that draw: the system's ``dot`` when it is
installed, and the Graphviz compiled to WebAssembly that installs with dataflow, always."""

import shutil

import pytest

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot program is not installed"
)
ENGINES = ["wasm", pytest.param("system", marks=needs_dot)]
