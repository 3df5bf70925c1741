"""Every notebook under notebooks/ runs top to bottom without an error.

Notebooks that draw graphs need Graphviz's ``dot`` program; on a machine without it they are
skipped with that reason, as the rendering tests are.
"""

import pathlib
import shutil

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    draws = any("render(" in cell.source for cell in notebook.cells if cell.cell_type == "code")
    if draws and shutil.which("dot") is None:
        pytest.skip(f"{path.name} draws graphs and Graphviz's 'dot' program is not installed")
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
