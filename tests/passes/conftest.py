import numpy as np
import pytest

import dataflow as df
from dataflow.passes import RewriterConfig


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def session(passes=None, graph=None, threads=1):
    """A Session running exactly ``passes`` (None: the default pipeline; []: none)."""
    if passes is None:
        rewrite = RewriterConfig()
    elif not passes:
        rewrite = RewriterConfig(disable_meta_optimizer=True)
    else:
        rewrite = RewriterConfig(optimizers=list(passes))
    config = df.ConfigProto(
        inter_op_parallelism_threads=threads,
        graph_options=df.passes.GraphOptions(rewrite_options=rewrite),
    )
    return df.Session(graph=graph, config=config)


def run_both(fetches, feed_dict=None, passes=None, setup=None):
    """Runs ``fetches`` with no pass and with ``passes``; returns both results."""
    results = []
    for chosen in ([], passes):
        with session(chosen) as sess:
            if setup is not None:
                sess.run(setup)
            results.append(sess.run(fetches, feed_dict))
    return results


def assert_bitwise_equal(a, b) -> None:
    assert type(a) is type(b), (a, b)
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
    assert a.tobytes() == b.tobytes(), (a, b)


def op_types(graph) -> list:
    return [op.type for op in graph.get_operations()]
