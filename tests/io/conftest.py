import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


@pytest.fixture
def round_trip(tmp_path):
    """Saves a graph and loads it back."""

    def save_and_load(graph: df.Graph) -> df.Graph:
        path = tmp_path / "graph.dfg"
        df.io.save_graph(graph, path)
        return df.io.load_graph(path)

    return save_and_load
